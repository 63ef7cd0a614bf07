//! Turns results into what people read. The data flows through five rooms:
//!
//! - [`load`]: one `shootout load` run: its figures ([`load::summary::LoadSummary`]), its terminal summary
//!   ([`load::text`]) and its HTML page ([`load::html`]).
//! - [`analysis`]: a suite's saved trials turned into answers: medians and spread across repeats, ratios with
//!   confidence intervals, the SLO answer, the knee, what limited each cell ([`analysis::limit`]), failed trials
//!   ([`analysis::unmeasured`]), growing queues ([`analysis::queue`]), runs behind their schedule
//!   ([`analysis::behind`]), the one judge of a search's probes ([`analysis::judge`]) and each capacity
//!   ([`analysis::capacity`]), matrices along a parameter ([`analysis::by_parameter`]).
//! - [`compare`]: old results against new, with a verdict per server and level, and whether two runs can be
//!   compared at all ([`compare::matching`]).
//! - [`suite`]: a results directory gathered ([`suite::report`]) into what a suite's report says
//!   ([`suite::summary::SuiteSummary`]), with each figure marked against the SLO ([`suite::marks`]) and each
//!   profiled pass beside its unprofiled cell ([`suite::profiles`]).
//! - [`export`]: one file per format of a suite's summary (terminal, Markdown, HTML with [`export::charts`], CSV),
//!   using how numbers are written ([`units`]).
//!
//! Under them, [`statistics`]: reading a figure out of a result ([`statistics::figures`]), thresholds compared
//! on the values people read ([`statistics::bound`]), and the 95% interval of a ratio of throughputs
//! ([`statistics::interval`], on [`statistics::student_t`], checked by simulation in the tests); and [`units`]: how
//! durations, sizes, counts and levels are written in every format.

pub mod analysis;
pub mod compare;
pub mod export;
pub mod load;
pub mod statistics;
pub mod suite;
pub mod units;
