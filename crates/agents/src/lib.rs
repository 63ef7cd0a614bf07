//! Load from many machines: a coordinator hands shares of one load to agents that an engine people already run
//! starts (OpenSSH, Slurm, Kubernetes, or plain processes on this machine), checks their clocks, starts them all
//! at one instant, and merges what they measured exactly (histograms add; percentiles are computed only from the
//! sums). shootout never grows a cluster manager of its own: the launcher places and starts processes, and this
//! crate only coordinates a run. The protocol is described in `docs/agents.md`.
//!
//! Layout:
//! - [`frame`]: one message a line of JSON on a byte stream (an agent's stdin and stdout, or the connection it
//!   dials back), with a size limit and errors that say which peer sent what.
//! - [`launch`]: [`launch::Launcher`] turns a spec into a [`launch::Crew`], one [`launch::Link`] per agent:
//!   the stdin and stdout of a process of ours (local, ssh), or a connection the agent dialled back with the
//!   run's secret (Slurm, Kubernetes); none outlives the coordinator.
//! - [`protocol`]: the messages, [`protocol::FromAgent`] and [`protocol::ToAgent`].
//! - [`agent`]: `shootout agent`, one share of a load run for the coordinator, over stdin and stdout or a
//!   connection it dialled.
//! - [`coordinate`]: the coordinator's side: hellos, clock checks, shares, one start, the merge.
//! - [`clock`]: NTP-style round trips between the coordinator and an agent: the offset of the agent's clock
//!   from the round trip with the least delay, give or take half that delay, and the translation of the start
//!   instant into the agent's own clock.

pub mod agent;
pub mod clock;
pub mod coordinate;
pub mod frame;
pub mod launch;
pub mod protocol;

pub use clock::{ClockEstimate, RoundTrip};
pub use shootout_model::AgentSpec;

/// The version of the agent protocol; a peer that speaks another one is refused with one line.
pub const PROTOCOL_VERSION: u32 = 2;

/// This host's name as agents report it (the kernel's node name).
pub fn host_name() -> String {
    nix::sys::utsname::uname().map_or_else(|_| "unknown".into(), |u| u.nodename().to_string_lossy().into())
}
