//! Turns results into what people read.
//!
//! Layout:
//! - [`analysis`]: from saved trials to answers: medians and spread across repeats, ratios with confidence
//!   intervals, the SLO answer, the knee.
//! - [`behind`]: [`behind::Lag`], why an open-model run fell behind its schedule: the server, its connections, or
//!   the client.
//! - [`bound`]: every threshold compared on the values people read (110 is 10% more than 100), and
//!   [`bound::figure`], a figure near its bound printed with the digits that show its side.
//! - [`by_parameter`]: [`by_parameter::ParameterSweep`], a suite's matrices along their first parameter (the
//!   charts with workers on the x axis) and the value that served the most within the SLO.
//! - [`capacity`]: [`capacity::Capacity`], each server's capacity under the SLO as a suite's search found it,
//!   with the bracket, probes, time and limits, in words.
//! - [`compare`]: old results against new, with confidence intervals and a verdict per server and level of
//!   either run; [`matching`]: whether two runs can be compared at all (model, path, levels).
//! - [`interval`]: [`interval::ratio_interval`], the 95% interval of a ratio of throughputs from a few repeats
//!   (Welch's t on the logarithms), on [`student_t`], Student's t distribution; shared by the analysis and compare,
//!   and checked by simulation (`simulation`, tests only).
//! - [`suite_report`]: [`suite_report::SuiteReport`], a results directory gathered for rendering.
//! - [`suite_summary`]: [`suite_summary::SuiteSummary`], what a suite's report says (the table of servers ×
//!   levels, ratios, SLO answer, knees, one row per trial, timelines, environment), built once from the analysis.
//! - [`export`]: the [`export::Exporter`] trait and one file per format of a suite's summary: [`export::Text`]
//!   (the terminal), [`export::Markdown`] (`report.md`), [`export::Html`] (`report.html`, with [`charts`], SVG
//!   line charts drawn by plotters) and [`export::Csv`] (`summary.csv`).
//! - [`limit`]: [`limit::Limit`], what held a cell back: the client, the server's CPU, or neither (waiting).
//! - [`marks`]: a cell's figures as every table writes them against the SLO: `✗` beside a figure that breaks it,
//!   the digits that show a figure's side of a limit, a column for each figure it judges, the legend.
//! - [`profiles`]: the level each server is profiled at, and [`profiles::ProfileView`], a profiled pass beside
//!   the unprofiled cell at its level (the profiler's cost) with its hottest frames.
//! - [`queue`]: [`queue::queue_growth`], an open-model run whose queue grew through its window (it completed
//!   less than was offered while its latency rose): no latency objective is met there.
//! - [`html`]: [`html::render_load`], the HTML page of one `shootout load` result.
//! - [`figures`]: reading any figure (mean, a percentile, errors, rps) out of a result, for SLOs, thresholds
//!   and comparisons; percentiles through [`shootout_metrics::percentile_us`]; and writing one
//!   ([`figures::number`]), with the digits that show its side of a limit.
//! - [`seconds`]: [`seconds::whole_seconds`], the seconds of a timeline the per-second charts draw.
//! - [`summary`]: [`summary::LoadSummary`], the figures of one load run as the terminal shows them (siege's fields,
//!   ab's percentile table, status codes, errors, the client's own CPU), each computed once from a
//!   [`LoadResult`](shootout_model::LoadResult) and defined in docs/reference/outputs.md.
//! - [`text`]: [`text::render_load`], the terminal summary of one `shootout load` run.
//! - [`units`]: how durations, sizes and rates are written.
//! - [`unmeasured`]: [`unmeasured::unmeasured`], why a repeat measured nothing (no answer in its window, or most
//!   users held through it): a failed trial with its cause, left out of the figures.

pub mod analysis;
pub mod behind;
pub mod bound;
pub mod by_parameter;
pub mod capacity;
pub mod charts;
pub mod compare;
pub mod export;
pub mod figures;
pub mod html;
pub mod interval;
pub mod judge;
pub mod limit;
pub mod marks;
pub mod matching;
pub mod profiles;
pub mod queue;
pub mod seconds;
#[cfg(test)]
mod simulation;
pub mod student_t;
pub mod suite_report;
pub mod suite_summary;
pub mod summary;
pub mod text;
pub mod units;
pub mod unmeasured;
