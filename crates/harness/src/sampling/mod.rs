//! What a server's tree did while it was loaded: [`tree`] finds its processes in `/proc` and samples their CPU
//! and memory; [`thread_states`] sweeps where each thread was (on a CPU, on a lock, waiting for the client or a
//! backend), with [`sockets`] to tell a client's socket from a backend's (over TCP, or over Unix sockets through
//! [`unix_sockets`]) and [`serving`] to leave out the threads that keep house; [`kernel_counts`] reads what the
//! kernel counted (a CPU quota running out, connects dropped); [`outsiders`] names the processes outside the run
//! that used the CPUs meanwhile.

pub mod kernel_counts;
pub mod outsiders;
pub mod serving;
pub mod sockets;
pub mod thread_states;
pub mod tree;
pub mod unix_sockets;
