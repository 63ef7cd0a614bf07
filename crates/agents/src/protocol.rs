//! The messages of the agent protocol, one JSON document a line ([`frame`](crate::frame)). The agent speaks
//! first ([`FromAgent::Hello`]); the coordinator checks its clocks ([`ToAgent::Ping`]), hands it its share
//! ([`ToAgent::Load`]), waits until every agent is [`FromAgent::Ready`], and starts them all at one instant
//! ([`ToAgent::Start`]); each then sends every completed second and, at the end, its totals. `docs/agents.md`
//! describes the whole exchange.

use serde::{Deserialize, Serialize};
use shootout_engine::Totals;
use shootout_metrics::Interval;
use shootout_model::LoadOptions;

/// What an agent sends.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromAgent {
    /// Who it is; the first message.
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
    },
    /// Start at this instant of your monotonic clock, ns.
    Start {
        /// When, on the agent's monotonic clock.
        at_monotonic_ns: i64,
    },
    /// Stop sending, and send your totals.
    Stop,
}
