//! The messages of the agent protocol, one JSON document a line ([`frame`](crate::frame)). The agent speaks
//! first ([`FromAgent::Hello`]); the coordinator checks its clocks ([`ToAgent::Ping`]), hands it its share
//! ([`ToAgent::Load`]), waits until every agent is [`FromAgent::Ready`], and starts them all at one instant
//! ([`ToAgent::Start`]); each then sends every completed second and, at the end, its totals. `docs/agents.md`
//! describes the whole exchange.

use serde::{Deserialize, Serialize};
use shootout_engine::Totals;
use shootout_metrics::Interval;
use shootout_model::LoadOptions;
use shootout_scenario::Scenario;

/// What an agent sends.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromAgent {
    /// Which agent of which run it is; the first message of an agent that dials back (over stdin and stdout the
    /// launcher knows which agent it started).
    Join(Join),
    /// Who it is; the first message (after `Join`).
    Hello(Hello),
    /// The answer to a ping: its clocks when it answered.
    Pong {
        /// The ping's number.
        seq: u32,
        /// Its monotonic clock, ns.
        monotonic_ns: i64,
        /// Its wall clock, ns since the Unix epoch.
        wall_ns: i64,
    },
    /// Its share is planned; it can start.
    Ready,
    /// One completed second of its measured window.
    Second(Interval),
    /// Everything it measured; its last message.
    Totals(Box<Totals>),
    /// It cannot go on, and why.
    Failed {
        /// What went wrong, for the user.
        message: String,
    },
}

/// An agent's first message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol it speaks ([`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION)).
    pub protocol: u32,
    /// Its shootout's version.
    pub version: String,
    /// Its index among the run's agents.
    pub index: u32,
    /// Its host's name.
    pub host: String,
    /// The CPUs it may use.
    pub cpus: u32,
}

/// The introduction of an agent that dials back.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Join {
    /// The run's secret, from the agent's environment.
    pub secret: String,
    /// Its index among the run's agents.
    pub index: u32,
    /// How many agents it believes the run has.
    pub of: u32,
}

impl std::fmt::Debug for Join {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Join").field("index", &self.index).field("of", &self.of).finish_non_exhaustive()
    }
}

/// What the coordinator sends.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToAgent {
    /// Read your clocks.
    Ping {
        /// Its number, echoed in the answer.
        seq: u32,
    },
    /// Your share of the load: the whole load's options with your segment, and the request body.
    Load {
        /// The protocol the coordinator speaks.
        protocol: u32,
        /// The options, `segment` set to this agent's share.
        options: Box<LoadOptions>,
        /// The request body, base64 (standard alphabet, padded).
        body_base64: String,
        /// The scenario to send instead of one request, as the coordinator checked it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Box<Scenario>>,
    },
    /// Start at this instant of your monotonic clock, ns.
    Start {
        /// When, on the agent's monotonic clock.
        at_monotonic_ns: i64,
    },
    /// Stop sending, and send your totals.
    Stop,
    /// You are turned away (another run's secret, a taken index, another version), and why; nothing follows.
    Refused {
        /// Why, for the agent to say in its one line.
        why: String,
    },
}
