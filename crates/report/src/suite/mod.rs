//! A suite's results as its reports say them: [`report`] gathers a results directory, [`summary`] builds once
//! what every format shows (the table of servers × levels, ratios, the SLO answer, knees, one row per trial,
//! timelines, the environment), [`verdicts`] says each ratio as its interval allows, [`reconcile`] sets a sweep
//! and a search of the same suite side by side, and [`marks`] writes each figure against the SLO (`✗`, the
//! digits that show its side, a column per judged figure).

pub mod marks;
pub mod reconcile;
pub mod report;
pub mod summary;
pub mod verdicts;
