//! Servers and services on other machines: `host = "ssh:HOST"` in a suite starts `shootout host` there through
//! the user's own OpenSSH, and the runner drives a process there as it drives one here: start (a free port there,
//! the cgroup and `cpus` pinning there), hooks (setup, ready, reset, teardown run there), samples of its process
//! tree read there, stop (signal, grace, kill of the whole tree), and its log brought back into `logs/`.
//!
//! - [`protocol`]: the messages, one JSON document a line ([`shootout_agents::frame`]), [`protocol::ToHost`]
//!   and [`protocol::FromHost`], and the version both sides must speak.
//! - [`host`]: the far side, `shootout host`: it does what it is asked with the same [`Process`](crate::process)
//!   and [`Tree`](crate::sampling::tree) the runner uses here, and when its input ends (the runner or the link gone) it
//!   kills every tree it started at once.
//! - [`link`]: the runner's side: [`link::HostLink`], one ssh session per host for the whole run, asked one
//!   question at a time.
//!
//! A sample is timed by the runner when it asks for it, on the trial's own clock, so the host's clock never needs
//! to agree with this one (a sample is as late as half a round trip, milliseconds on a network).

pub mod host;
pub mod link;
pub mod protocol;
