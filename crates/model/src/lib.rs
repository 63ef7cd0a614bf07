//! The data shootout speaks in, and nothing else: plain serde types with no I/O and no runtime.
//!
//! Layout:
//! - [`agents`]: [`AgentSpec`] and [`AgentSettings`], a load from agents as chosen.
//! - [`options`]: [`LoadOptions`], the validated plan of one `shootout load` run, as recorded in results.
//! - [`settings`]: [`settings::LoadSettings`], a load run as chosen (every choice optional), and the one place
//!   that checks the choices and fills in the defaults to make [`LoadOptions`].
//! - [`result`]: [`LoadResult`], the versioned JSON document a load run writes (`schema/load-result.v1.json`
//!   describes it), with its parts: request counts, latency summaries, the per-second timeline, client CPU.
//! - [`errors`]: [`ErrorKind`], how a failed request is classified.
//! - [`reading`]: [`reading::from_results_json`], a results file read with every figure held to what a run can
//!   measure.
//! - [`run`]: [`run::TrialRecord`], what `shootout run` keeps per trial (a load result plus the server's
//!   resource samples), and [`run::Environment`].
//! - [`profile`]: [`profile::Profiler`], the profilers by name, and [`profile::ProfileSpec`], a suite's
//!   `[profile]` table.
//! - [`disturbed`]: [`disturbed::Disturbance`], a trial that something outside the run took CPUs from, by the
//!   one rule that both a run (which measures it again) and a report (which says so) apply.
//! - [`states`]: [`states::ThreadTime`], where a server's threads spent a trial: on a CPU, waiting on a lock,
//!   a backend, a client.
//! - [`pressure`]: [`pressure::Stalls`], the time the kernel held a tree's tasks back for want of a CPU, I/O or
//!   memory (its pressure stall information).
//! - [`slo`]: [`slo::Slo`], a service-level objective such as `p99 < 200ms`.
//! - [`search`]: [`search::Search`], which level a capacity search tries next, and the probes and bracket it
//!   keeps.
//! - [`units`]: parsing of user-facing durations such as `30s`, `2m` or `250ms`, and what a load level counts.
//!
//! Everything upstream (the engine) produces these types and everything downstream (reports, comparisons)
//! reads them, so a results file from another machine is all a report needs.

pub mod agents;
pub mod disturbed;
pub mod errors;
pub mod options;
pub mod pressure;
pub mod profile;
pub mod reading;
pub mod result;
pub mod run;
pub mod search;
pub mod settings;
pub mod slo;
pub mod states;
pub mod units;

pub use agents::{AgentSettings, AgentSpec};
pub use errors::ErrorKind;
pub use options::{Arrival, LoadOptions, Pacing, Protocol, Segment, Stage, StopCondition};
pub use result::{
    AgentMeasured, AgentResult, ClientUsage, ConnectionCounts, IoBackend, LatencySummary, LoadResult, NamedResult,
    RequestCounts, Second, Sends, Throughput, ToolInfo, SATURATION, SCHEMA_VERSION,
};
