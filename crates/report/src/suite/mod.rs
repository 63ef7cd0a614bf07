//! A suite's results as its reports say them: [`report`] gathers a results directory, [`summary`] builds once
//! what every format shows (the table of servers × levels, ratios, the SLO answers, knees, the trials, the
//! warnings of single cells, timelines, the environment), [`ranking`] ranks the servers and finds where the
//! ranking cannot tell two apart, [`words`] writes the sentences every format shares, [`verdicts`] says each ratio
//! as its interval allows, [`reconcile`] sets a sweep and a search of the same suite side by side, [`marks`] writes
//! each figure against the SLO (`✗`, the digits that show its side, a column per judged figure), and [`profiles`]
//! picks the level each server is profiled at and sets each profiled pass beside its unprofiled cell.

pub mod marks;
pub mod profiles;
pub mod ranking;
pub mod reconcile;
pub mod report;
pub mod summary;
pub mod verdicts;
pub mod words;
