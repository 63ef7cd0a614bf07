//! Where each server's CPU went: [`profiler`] attaches the sampling profiler that suits a running tree (perf,
//! rbspy, py-spy, async-profiler), run and reaped like a server; [`pass`] runs each server's profiled pass after
//! its measured trials and saves it beside its stacks.

pub mod pass;
pub mod profiler;
