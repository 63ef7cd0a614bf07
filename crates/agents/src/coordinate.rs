//! The coordinator's side of a run with agents: start them, hear their hellos, check their clocks, hand each
//! its share, start them all at one instant, gather every second and their totals, and merge them exactly.
//! Whatever happens (an agent that cannot start or dies, Ctrl-C), every agent is stopped and what they sent is
//! kept.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use shootout_engine::Plan;
use shootout_engine::{Merge, Totals};
use shootout_metrics::value_at;
use shootout_metrics::Interval;
use shootout_model::LoadResult;
use shootout_model::{AgentMeasured, AgentResult};
use shootout_scenario::Scenario;

use crate::clock::{monotonic_ns, wall_ns, ClockEstimate, RoundTrip};
use crate::frame::{self, FrameError};
use crate::launch::{Crew, Launcher};
use crate::protocol::{FromAgent, Hello, ToAgent};
use crate::PROTOCOL_VERSION;
use shootout_model::AgentSpec;

/// Pings per agent in the clock check.
const PINGS: u32 = 8;
/// Time between the last agent's ready and the common start, for the start message to reach every agent.
const LEAD: Duration = Duration::from_millis(250);

/// What the coordinator learnt of one agent.
#[derive(Debug, Clone)]
pub struct AgentFacts {
    /// How the launcher names it: `agent 0 (local)`, `agent 1 (load2)`.
    pub peer: String,
    /// Its hello.
    pub hello: Hello,
    /// Its monotonic clock against the coordinator's.
    pub monotonic: ClockEstimate,
    /// Its wall clock against the coordinator's.
    pub wall: ClockEstimate,
}

impl AgentFacts {
    /// One line for the user: the agent, its host and CPUs, and its clock against this one's.
    pub fn describe(&self) -> String {
        format!(
            "{}: on {}, {} CPUs, clock {:+.3} ms ± {:.3} ms from this one's",
            self.peer,
            self.hello.host,
            self.hello.cpus,
            self.wall.offset_ns as f64 / 1e6,
            self.wall.error_ns as f64 / 1e6
        )
    }
}

/// How a run with agents went, per agent in index order: what the coordinator learnt of it, its totals, and
/// why it was lost if it was.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Its hello and clocks.
    pub agents: Vec<AgentFacts>,
    /// Its totals, when it sent them.
    pub totals: Vec<Option<Totals>>,
    /// Why it failed or ended before sending its totals; what it sent before counts.
    pub lost: Vec<Option<String>>,
}

impl Outcome {
    /// The per-agent section of the result: each agent's host, clock, start and own figures.
    pub fn agent_results(&self) -> Vec<AgentResult> {
        let earliest =
            self.totals.iter().flatten().zip(&self.agents).map(|(t, a)| started_ms(t, a)).fold(f64::INFINITY, f64::min);
        self.agents
            .iter()
            .zip(&self.totals)
            .zip(&self.lost)
            .map(|((agent, totals), lost)| AgentResult {
                index: agent.hello.index,
                host: agent.hello.host.clone(),
                cpus: agent.hello.cpus,
                clock_offset_ms: agent.wall.offset_ns as f64 / 1e6,
                clock_error_ms: agent.wall.error_ns as f64 / 1e6,
                measured: totals.as_ref().map(|t| AgentMeasured {
                    start_ms: started_ms(t, agent) - earliest,
                    requests: t.recorder.request_counts(),
                    p50_us: value_at(&t.recorder.latency, 50.0),
                    p99_us: value_at(&t.recorder.latency, 99.0),
                    client: t.client_usage(),
                }),
                lost: lost.clone(),
            })
            .collect()
    }
}

/// When an agent's measured window started, by the coordinator's wall clock, ms since the Unix epoch.
fn started_ms(totals: &Totals, agent: &AgentFacts) -> f64 {
    let own = totals.started.duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1e3);
    own - agent.wall.offset_ns as f64 / 1e6
}

/// A run with agents that could not go on; the message names the agent and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CoordinatorError(pub String);

type Heard = (usize, Result<Option<FromAgent>, FrameError>);

/// The agents of one run, started, and the one channel their messages arrive on.
struct Fleet {
    crew: Crew,
    /// How long each step before the start may take.
    patience: Duration,
    heard: Receiver<Heard>,
    /// Messages heard from an agent while waiting for another's, in order.
    held: Vec<VecDeque<Result<Option<FromAgent>, FrameError>>>,
}

impl Fleet {
    fn start(spec: &AgentSpec, launcher: &Launcher) -> Result<Fleet, CoordinatorError> {
        let mut crew = launcher.start(spec).map_err(|e| CoordinatorError(e.to_string()))?;
        let (tx, heard) = mpsc::channel();
        for (i, agent) in crew.links.iter_mut().enumerate() {
            let mut output = agent.take_output().expect("a new agent's output");
            let peer = agent.peer.clone();
            let tx = tx.clone();
            std::thread::spawn(move || loop {
                let message = frame::read::<_, FromAgent>(&mut output, &peer);
                let end = !matches!(message, Ok(Some(_)));
                if tx.send((i, message)).is_err() || end {
                    return;
                }
            });
        }
        let held = crew.links.iter().map(|_| VecDeque::new()).collect();
        Ok(Fleet { crew, patience: launcher.timeout, heard, held })
    }

    /// The next message of agent `i`, within `deadline` (others' messages heard meanwhile are held for them).
    fn expect(&mut self, i: usize, what: &str, deadline: Instant) -> Result<FromAgent, CoordinatorError> {
        let peer = self.crew.links[i].peer.clone();
        let heard = loop {
            if let Some(heard) = self.held[i].pop_front() {
                break heard;
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.heard.recv_timeout(wait) {
                Ok((from, heard)) if from == i => break heard,
                Ok((from, heard)) => self.held[from].push_back(heard),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(CoordinatorError(format!(
                        "{peer}: no {what} within {} s; every agent was stopped (raise --agent-timeout if it is slow to start)",
                        self.patience.as_secs()
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(CoordinatorError(format!("{peer} is gone"))),
            }
        };
        match heard {
            Ok(Some(FromAgent::Failed { message })) => Err(CoordinatorError(message)),
            Ok(Some(message)) => Ok(message),
            Ok(None) => Err(CoordinatorError(format!("{peer} ended before {what}{}", self.last_words(i)))),
            Err(e) => Err(CoordinatorError(e.to_string())),
        }
    }

    /// `: ` and the last line agent `i` wrote on stderr (ssh's reason when ssh could not start it), if any.
    fn last_words(&self, i: usize) -> String {
        self.crew.links[i].last_words().map(|line| format!(": {line}")).unwrap_or_default()
    }

    /// Tells agent `i` why it is turned away (`why`, for its one line) and returns the run's `error`.
    fn refuse(&mut self, i: usize, why: String, error: String) -> CoordinatorError {
        let _ = self.crew.links[i].send(&ToAgent::Refused { why });
        CoordinatorError(error)
    }

    fn send(&mut self, i: usize, message: &ToAgent) -> Result<(), CoordinatorError> {
        let peer = self.crew.links[i].peer.clone();
        self.crew.links[i].send(message).map_err(|e| CoordinatorError(format!("{peer}: cannot write to it ({e})")))
    }
}

/// This shootout's version and agent protocol, as a refusal names them: `0.4.0 (protocol 1)`.
fn this_version() -> String {
    format!("{} (protocol {PROTOCOL_VERSION})", env!("CARGO_PKG_VERSION"))
}

/// Runs the load of `plan` from the agents `spec` names, each its exact share, and merges what they measured
/// into one result with a per-agent section; also returns what was learnt of each agent (for the user to see
/// their clocks). `on_second` sees each merged second as it completes. Every agent is stopped at the end,
/// whatever happened; a lost agent is named in the result, whose figures keep what every agent sent.
pub fn load(
    spec: &AgentSpec,
    launcher: &Launcher,
    work: Work<'_>,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Interval),
) -> Result<(LoadResult, Vec<AgentFacts>), CoordinatorError> {
    let mut merge = Merge::new(spec.agents() as usize);
    let outcome = run(spec, launcher, work, stop, &mut merge, on_second)?;
    let mut result =
        merge.result(work.plan).ok_or_else(|| CoordinatorError("no agent sent what it measured".to_string()))?;
    result.agents = outcome.agent_results();
    Ok((result, outcome.agents))
}

/// What every agent runs its share of: a plan (without a segment: each agent takes its own), with the request
/// body it was made from, or the scenario.
#[derive(Debug, Clone, Copy)]
pub struct Work<'a> {
    /// The whole load.
    pub plan: &'a Plan,
    /// The request body of one-request loads.
    pub body: &'a [u8],
    /// The scenario of scenario loads, as checked here.
    pub scenario: Option<&'a Scenario>,
}

/// Runs `work` on the agents `spec` names, each its share, and merges what they measured into `merge`;
/// returns what it learnt of each agent.
fn run(
    spec: &AgentSpec,
    launcher: &Launcher,
    work: Work<'_>,
    stop: &AtomicBool,
    merge: &mut Merge,
    on_second: &mut dyn FnMut(&Interval),
) -> Result<Outcome, CoordinatorError> {
    let mut fleet = Fleet::start(spec, launcher)?;
    let n = fleet.crew.links.len();
    let deadline = Instant::now() + fleet.patience;
    let mut facts = Vec::with_capacity(n);
    for i in 0..n {
        let hello = match fleet.expect(i, "hello", deadline)? {
            FromAgent::Hello(hello) => hello,
            _ => return Err(CoordinatorError(format!("{} did not start with hello", fleet.crew.links[i].peer))),
        };
        let peer = fleet.crew.links[i].peer.clone();
        if hello.protocol != PROTOCOL_VERSION || hello.version != env!("CARGO_PKG_VERSION") {
            let (theirs, ours) = (format!("{} (protocol {})", hello.version, hello.protocol), this_version());
            let why = format!("it runs shootout {ours}, this agent {theirs}: install the same version on both");
            let error = format!("{peer} runs shootout {theirs}, this one {ours}: install the same version there");
            return Err(fleet.refuse(i, why, error));
        }
        if hello.index != fleet.crew.links[i].index {
            let why = format!("it started agent {}, not {}", fleet.crew.links[i].index, hello.index);
            let error = format!("{peer} says it is agent {}: check the launcher's agent command", hello.index);
            return Err(fleet.refuse(i, why, error));
        }
        let (monotonic, wall) = fleet.check_clock(i)?;
        if wall.may_exceed(launcher.settings.max_skew.as_nanos() as i64) {
            return Err(CoordinatorError(format!(
                "{peer} ({}): its clock is {:.1} ms off this one's (± {:.1} ms), more than the {} ms allowed: run chrony or another NTP client there, or raise --max-skew",
                hello.host,
                wall.offset_ns as f64 / 1e6,
                wall.error_ns as f64 / 1e6,
                launcher.settings.max_skew.as_millis()
            )));
        }
        facts.push(AgentFacts { peer, hello, monotonic, wall });
    }
    let body_base64 = base64::engine::general_purpose::STANDARD.encode(work.body);
    for i in 0..n {
        let load = ToAgent::Load {
            protocol: PROTOCOL_VERSION,
            options: Box::new(work.plan.options.clone()),
            body_base64: body_base64.clone(),
            scenario: work.scenario.map(|s| Box::new(s.clone())),
        };
        fleet.send(i, &load)?;
    }
    let deadline = Instant::now() + fleet.patience;
    for i in 0..n {
        match fleet.expect(i, "ready", deadline)? {
            FromAgent::Ready => {}
            _ => {
                return Err(CoordinatorError(format!(
                    "{} answered its share with something else",
                    fleet.crew.links[i].peer
                )))
            }
        }
    }
    let start = monotonic_ns() + LEAD.as_nanos() as i64;
    for (i, agent) in facts.iter().enumerate() {
        fleet.send(i, &ToAgent::Start { at_monotonic_ns: agent.monotonic.to_agent(start) })?;
    }
    let hosts: Vec<&str> = facts.iter().map(|f| f.hello.host.as_str()).collect();
    let (totals, lost) = fleet.gather(&hosts, stop, merge, on_second);
    fleet.crew.finish(Duration::from_secs(5));
    Ok(Outcome { agents: facts, totals, lost })
}

impl Fleet {
    /// Pings agent `i`: its monotonic and wall clocks against this process's.
    fn check_clock(&mut self, i: usize) -> Result<(ClockEstimate, ClockEstimate), CoordinatorError> {
        let (mut monotonic, mut wall) = (Vec::new(), Vec::new());
        for seq in 0..PINGS {
            let (sent_monotonic, sent_wall) = (monotonic_ns(), wall_ns());
            self.send(i, &ToAgent::Ping { seq })?;
            match self.expect(i, "answer to a ping", Instant::now() + self.patience)? {
                FromAgent::Pong { seq: answered, monotonic_ns: m, wall_ns: w } if answered == seq => {
                    let (got_monotonic, got_wall) = (monotonic_ns(), wall_ns());
                    monotonic.push(RoundTrip { sent_ns: sent_monotonic, agent_ns: m, received_ns: got_monotonic });
                    wall.push(RoundTrip { sent_ns: sent_wall, agent_ns: w, received_ns: got_wall });
                }
                _ => return Err(CoordinatorError(format!("{} did not answer ping {seq}", self.crew.links[i].peer))),
            }
        }
        let unusable =
            || CoordinatorError(format!("{}: no usable round trip to check its clock", self.crew.links[i].peer));
        Ok((
            ClockEstimate::from_round_trips(&monotonic).ok_or_else(unusable)?,
            ClockEstimate::from_round_trips(&wall).ok_or_else(unusable)?,
        ))
    }

    /// Gathers every agent's seconds and totals until all have sent their totals or are gone; passes Ctrl-C on,
    /// and stops every agent when one is lost. Returns each agent's totals, or why it was lost. `hosts` names the
    /// host of each agent: agents on one host are judged together against its CPUs.
    fn gather(
        &mut self,
        hosts: &[&str],
        stop: &AtomicBool,
        merge: &mut Merge,
        on_second: &mut dyn FnMut(&Interval),
    ) -> (Vec<Option<Totals>>, Vec<Option<String>>) {
        let n = self.crew.links.len();
        let mut totals_of: Vec<Option<Totals>> = vec![None; n];
        let mut lost: Vec<Option<String>> = vec![None; n];
        let mut open = vec![true; n];
        let mut stopping = false;
        while open.iter().any(|&o| o) {
            if stop.load(Ordering::Relaxed) && !stopping {
                stopping = true;
                for i in 0..n {
                    let _ = self.crew.links[i].send(&ToAgent::Stop);
                }
            }
            let next = match self.held.iter_mut().enumerate().find_map(|(i, q)| q.pop_front().map(|h| (i, h))) {
                Some(held) => Ok(held),
                None => self.heard.recv_timeout(Duration::from_millis(100)),
            };
            match next {
                // After its totals an agent has nothing more to say; the end of its output is expected.
                Ok((i, _)) if !open[i] => {}
                Ok((i, Ok(Some(FromAgent::Second(interval))))) => merge.add_second(i, interval),
                Ok((i, Ok(Some(FromAgent::Totals(totals))))) => {
                    merge.add_totals(i, hosts[i], &totals);
                    totals_of[i] = Some(*totals);
                    open[i] = false;
                }
                Ok((i, other)) => {
                    // Failed, ended, out of turn or unreadable: what it sent counts, and the others stop.
                    let peer = &self.crew.links[i].peer;
                    let why = match other {
                        Ok(Some(FromAgent::Failed { message })) => message,
                        Ok(Some(_)) => format!("{peer} spoke out of turn while the load ran"),
                        Ok(None) => format!("{peer} ended before sending its totals{}", self.last_words(i)),
                        Err(e) => e.to_string(),
                    };
                    lost[i] = Some(why);
                    merge.lost(i);
                    open[i] = false;
                    stop.store(true, Ordering::Relaxed);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            merge.flush(on_second);
        }
        (totals_of, lost)
    }
}
