//! The load engine: shootout's hot path.
//!
//! Layout:
//! - [`plan`]: [`Plan`], options turned into an address and pre-encoded request bytes.
//! - [`run`](mod@run): [`run()`], which starts one worker per thread, gathers their per-second intervals,
//!   and assembles the [`LoadResult`](shootout_model::LoadResult); [`run_observed`] also hands on each second
//!   as it completes, and returns the run's [`Totals`] (what an agent sends its coordinator).
//! - [`merge`]: the one place parts of a load are merged into its result: [`Seconds`](merge::Seconds) sums the
//!   parts' intervals by second, [`Totals`] add up, and [`assemble`](merge::assemble) makes the
//!   [`LoadResult`](shootout_model::LoadResult), for a local run's threads and a coordinator's agents
//!   ([`Merge`]) alike.
//! - `shared`: what the coordinator hands every worker: the settings they all read (`Shared`), and which share of
//!   the connections, rate and request count each one takes (`Part`, `share`): a thread's share of this process's
//!   segment of the load, when agents split one load between them ([`Segment`](shootout_model::Segment)).
//! - `worker`: the event loop of one thread (edge-triggered epoll through mio, each socket registered once), the
//!   same for every pacing; `Period` says whether it is warming up, measuring, past the end or interrupted.
//!   HTTP/2 and HTTP/3 connections carry several slots' requests at once, each on a stream.
//!   With plain HTTP/1.1 it does its I/O through io_uring where the machine allows (`uring`: sends queued, each
//!   connection's receive armed once, one `io_uring_enter` per turn), else through epoll; the result says which.
//! - `conn`: one connection's state between events.
//! - `pacer`: `Pacer`, one worker's pacing with the state of its model (the closed model's active users and
//!   request quota; the open model's queue of due requests, idle connections and when to wake), answering the loop's
//!   questions: what is due, what a free connection does next, whether anything is left to send.
//! - [`due_times`]: the arithmetic of when requests start: a [`Ramp`](due_times::Ramp) of users or rate through the
//!   stages, the open model's [`Schedule`](due_times::Schedule) of due times (constant or Poisson); `timer` wakes the
//!   loop when the next one falls due.
//! - [`stakes`]: [`Stakes`](stakes::Stakes), what a search's probe is judged on, so that its run stops waiting
//!   for requests still unanswered after its window once they cannot change its verdict.
//! - `tally`: `Tally`, what one worker has measured (its recorders, when its last request ended) and the
//!   `Report`s it sends the coordinator.
//! - [`workload`]: [`Workload`](workload::Workload), what is sent: one pre-encoded request, or a scenario's
//!   requests and sessions rendered for each virtual user, with cookies, checks and extracted values.
//! - [`http`]: request encoding and the streaming response parser, free of I/O.
//! - [`open_files`]: raising the open-file limit for many connections.
//! - [`cpu`]: the client's own CPU time; [`quota`]: the CPU quota over a process (the client's own, a server's);
//!   [`cgroups`]: where the cgroup hierarchies are mounted, and making a cgroup of shootout's own.
//! - [`tls`]: the rustls client configuration for https:// URLs; `transport` reads and writes through it.
//! - [`quic`]: [`QuicPlan`](quic::QuicPlan), what HTTP/3's QUIC connections are made with (`quinn-proto`, sans
//!   I/O: the worker does the UDP).
//! - [`probe`]: the blocking probe, one connection made in the calling thread outside a run, every wait bounded:
//!   one GET and its answer over HTTP/1.1, HTTP/2 or HTTP/3, plain or TLS (a suite's ready probe, verification and
//!   settling), and the handshakes `preflight` makes.
//! - `preflight`: the checks made once before a run (the server answers, its certificate, that it speaks HTTP/2
//!   or HTTP/3 when asked), each failure one clear line.
//!
//! Rules of the hot path: no locks or shared counters per request (each thread records into its own
//! [`Recorder`](shootout_metrics::Recorder)), no allocation per request, bodies counted and dropped as they stream.

pub mod cgroups;
pub mod cpu;
pub mod due_times;
pub mod http;
pub mod merge;
pub mod open_files;
pub mod plan;
pub mod probe;
pub mod quic;
pub mod quota;
pub mod redirect;
pub mod run;
pub mod stakes;
pub mod tls;
pub mod workload;

mod conn;
mod pacer;
mod preflight;
mod shared;
mod tally;
mod timer;
mod transport;
mod uring;
mod worker;

pub use merge::{Merge, Totals};
pub use plan::{Plan, PlanError};
pub use run::{run, run_observed, Progress, RunError};
