//! One file per format behind [`Exporter`], each rendering the same [`SuiteSummary`]:
//! - [`text`]: [`Text`], the comparison `shootout run` prints in the terminal.
//! - [`markdown`]: [`Markdown`], `report.md`, for a pull-request comment.
//! - [`html`]: [`Html`], `report.html`: one self-contained page with SVG charts; [`probe_charts`], its charts of
//!   a capacity search's probes.
//! - [`csv`]: [`Csv`], `summary.csv`, one row per trial.
//! - [`profiles`]: the profiled servers' section, in each format but the CSV.
//! - [`threads`]: where each server's threads were at each level, in `report.md` and `summary.csv`.
//! - [`charts`]: the SVG line charts of `report.html`, drawn by plotters.
//!
//! How durations, sizes and rates are written in every format is [`crate::units`], under every room.

pub mod charts;
pub mod csv;
pub mod html;
pub mod markdown;
pub mod probe_charts;
pub mod profiles;
pub mod text;
pub mod threads;

pub use self::csv::Csv;
pub use self::html::Html;
pub use self::markdown::Markdown;
pub use self::text::Text;

use crate::suite::summary::SuiteSummary;

/// A format a suite's summary can be written in.
pub trait Exporter {
    /// The whole document.
    fn export(&self, summary: &SuiteSummary) -> String;
}

/// How the report writes a container's engine and options after its image: ` (docker, options: --privileged -v
/// /:/host)`; nothing when neither was given.
pub(crate) fn container_options(c: &shootout_model::run::ContainerEnvironment) -> String {
    let mut said = Vec::new();
    if !c.engine.is_empty() {
        said.push(c.engine.clone());
    }
    if !c.options.is_empty() {
        said.push(format!("options: {}", c.options.join(" ")));
    }
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join(", "))
    }
}
