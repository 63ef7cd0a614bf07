//! End-to-end tests of the `shootout` binary: real processes, real sockets on 127.0.0.1, ports bound to 0.
//! One test binary (faster to link); one module per area.

mod h2_server;
mod h3_server;
mod namespaces;
mod postgres;
mod support;

mod agents;
mod agents_faults;
mod agents_kubernetes;
mod agents_slurm;
mod agents_ssh;
mod compare;
mod containers;
mod docs;
mod errors;
mod find_rate;
mod framing;
mod held_over;
mod hosts;
mod http2;
mod http2_faults;
mod http3;
mod http3_faults;
mod https;
mod io;
mod load_counts;
mod oneline;
mod open_model;
mod profile;
mod progress;
mod ready;
mod redirects;
mod report;
mod result_json;
mod run;
mod run_endings;
mod scenarios;
mod search;
mod services;
mod session_server;
mod target;
mod usage;
mod verdicts;
mod window;
