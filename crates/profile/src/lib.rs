//! Where a server's CPU went: how the sampling profiler that suits its runtime (`shootout_model`'s `Profiler`:
//! perf for native code, rbspy for Ruby, py-spy for Python, async-profiler for a JVM) is run and read
//! ([`record`]), what each one recorded folded into one format ([`Stacks`]: one line per distinct stack, root
//! first, and how many samples ended in it), the frames that took the most of it ([`Frame`]), and the flame
//! graph drawn from it ([`flame`]). Beside it, where the tree's threads waited off a CPU ([`off_cpu`]): perf's
//! context switches, folded into stacks weighed in microseconds blocked.
//!
//! This crate decides and reads; it starts nothing. The harness runs the profiler's command as a process of the
//! run (started, stopped and reaped like a server), and hands the file it wrote to [`record::fold`].

pub mod diff;
pub mod flame;
pub mod off_cpu;
pub mod record;
mod stacks;

pub use shootout_model::profile::Frame;
pub use stacks::{is_collector, Stacks};
