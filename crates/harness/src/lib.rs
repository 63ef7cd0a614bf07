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
//! Layout:
//! - [`process`]: one launched command, a server's or a service's: spawn (pinned, in its cgroup, logging to a
//!   bounded file), stop, and the hooks and placeholders around it.
//! - [`place`]: where a server or service runs, one seam for both: here, or on a host ([`remote`]: `shootout
//!   host` through ssh, which starts, samples and stops it there with the same code).
//! - [`server`]: one server's lifecycle: a process, its HTTP ready probe and its verification.
//! - [`service`]: one service's lifecycle (a database): a process, its ready command or port, its reset.
//! - [`services`]: the services of a run: started when first needed, reset before each server, stopped.
//! - [`tree`]: the server's process tree in `/proc` and its resource samples.
//! - [`thread_states`]: where each thread of a tree is, swept many times a second (on a CPU, on a lock, on a
//!   backend, waiting for the client), with [`sockets`] to tell a client's socket from a backend's.
//! - [`kernel_counts`]: what the kernel counts about a tree: its CPU quota running out, connects dropped on a full
//!   listen queue.
//! - [`container`]: a server or service in a Docker or Podman container: labelled, published, sampled by its
//!   cgroup, stopped and removed; what dead runs left is removed by label.
//! - [`cgroup`]: a cgroup v2 per server where the machine allows it, so nothing escapes the tree.
//! - [`log`]: [`log::BoundedLog`], a server's output into its log, its first and last 4 MiB.
//! - [`outsiders`]: the processes outside the run that used CPU during a trial, named in its record.
//! - [`live`]: the servers running now, for [`live::kill_all`] when a second signal leaves at once.
//! - [`reap`]: nothing outlives a runner killed without a word: a guard per server, and the next run reaps what
//!   dead runs left.
//! - [`probe`]: a one-shot HTTP GET for the ready probe and the verification.
//! - [`profiling`]: a sampling profiler attached to a running tree, run and reaped like a server.
//! - [`profile_pass`]: each server's profiled pass after the measured trials, saved beside its stacks.
//! - [`store`]: the results directory: atomic writes, trial files, resume.
//! - [`runner`]: the loop over repeats, servers and levels, with progress and Ctrl-C, and the pieces of a
//!   server's turn (start, one trial, stop) it shares with [`search`], each server's capacity search.
//! - [`trial`]: one trial: the load of one level while the server's and services' trees are sampled.

pub mod cgroup;
pub mod container;
pub mod kernel_counts;
pub mod live;
pub mod log;
pub mod outsiders;
pub mod place;
pub mod probe;
pub mod process;
pub mod profile_pass;
pub mod profiling;
pub mod reap;
pub mod remote;
pub mod runner;
pub mod search;
pub mod server;
pub mod service;
pub mod services;
pub mod settle;
pub mod sockets;
pub mod store;
pub mod thread_states;
pub mod tree;
pub mod trial;
