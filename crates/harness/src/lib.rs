//! `shootout run`: the shootout itself.
//!
//! For every repeat, and for every server in turn (interleaved, so drift on a shared machine hits every server
//! alike), the runner starts the services the server needs (a database, reset to the same data), starts the
//! server in its own process group, waits until it answers, verifies one answer, then runs each load level
//! (warm-up, then measurement) while sampling the whole process trees of the server and its services, and stops
//! it, escalating to SIGKILL and leaving nothing behind. Every trial is written to the results directory
//! as soon as it ends, atomically, so nothing measured is lost to a crash or Ctrl-C, and `--resume` finishes a
//! suite.
//!
//! The suite it runs comes from `shootout_suite`, which parses and validates it.
//!
//! Layout, in the order a server meets it:
//! - [`place`]: where a server or service runs, one seam for every place: here, on a host ([`place::remote`]:
//!   `shootout host` through ssh, which starts, samples and stops it there with the same code), or in a Docker or
//!   Podman container ([`place::container`]).
//! - [`process`]: one launched command, a server's or a service's: spawn (pinned, in its [`process::cgroup`],
//!   logging to a [`process::log`] of bounded size), stop, the hooks around it, and what keeps anything from
//!   outliving the run ([`process::live`], [`process::reap`]).
//! - [`lifecycle`]: one server's life ([`lifecycle::server`]: a process, its HTTP ready probe and its verification,
//!   both through the engine's blocking [`probe`](shootout_engine::probe)) and one service's
//!   ([`lifecycle::service`]: a database, its ready command or port, its reset), and the services of a run
//!   ([`lifecycle::services`]).
//! - [`sampling`]: what a tree did while it was loaded: its processes and resources ([`sampling::tree`]), where
//!   each thread was ([`sampling::thread_states`], with [`sampling::sockets`] to tell a client's socket from a
//!   backend's), what the kernel counted ([`sampling::kernel_counts`]), and who else used the CPUs
//!   ([`sampling::outsiders`]).
//! - [`run`]: the loop over repeats, servers and levels ([`run::runner`]), one [`run::trial`], each server's
//!   capacity [`run::search`] and the [`run::settle`] between its probes.
//! - [`profiles`]: a sampling [`profiles::profiler`] attached to a running tree, and each server's profiled
//!   [`profiles::pass`] after the measured trials.
//! - [`store`]: the results directory: atomic writes, trial files, resume.

pub mod lifecycle;
pub mod place;
pub mod process;
pub mod profiles;
pub mod run;
pub mod sampling;
pub mod store;
