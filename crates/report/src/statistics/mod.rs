//! The numbers under every answer: [`figures`] reads any figure (mean, a percentile, errors, rps) out of a
//! result and writes it with the digits that show its side of a limit; [`bound`] compares thresholds on the
//! values people read (110 is 10% more than 100); [`interval`] is the 95% interval of a ratio of throughputs
//! from a few repeats (Welch's t on the logarithms), on [`student_t`]; [`quantile`] bounds a latency percentile
//! from the requests behind it and their blocks, and decides a condition on it (met, broken, undecided), on the
//! repeats' latencies together ([`merged`]). Both are checked by simulation (`simulation`, tests only).
//! [`verdict`] reads an interval against a noise floor (improved, regressed, within noise); [`seconds`] picks the
//! seconds of a timeline that were measured whole.

pub mod bound;
pub mod figures;
pub mod interval;
pub mod merged;
pub mod quantile;
pub mod seconds;
#[cfg(test)]
mod simulation;
pub mod student_t;
pub mod verdict;
