//! [`Markdown`]: a suite's report as Markdown, for a pull-request comment: the comparison table, the verdicts and
//! the environment (the charts are in the HTML report). Names come from suites people share, so nothing in them
//! can open an HTML tag in a renderer that passes raw HTML through (`as_text`).

use std::fmt::Write as _;

use super::Exporter;
use shootout_model::slo::Metric;

use crate::analysis::capacity::against_highest;
use crate::suite::marks::{figure, heading, headline, legend, more_columns, Figure};
use crate::suite::reconcile::RECONCILED;
use crate::suite::summary::SuiteSummary;
use crate::suite::verdicts::RATIO_LEGEND;
use crate::suite::words::CLIENT_BOUND;

/// `report.md`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Exporter for Markdown {
    fn export(&self, summary: &SuiteSummary) -> String {
        let mut out = format!("# shootout: {}\n\n", summary.name);
        if !summary.capacities.is_empty() {
            let _ = writeln!(out, "## {}\n", summary.capacity_title());
            for c in summary.ranked_capacities() {
                let _ =
                    writeln!(out, "- **{}**: {}; {}", c.search.server, c.found(summary.unit), c.details(summary.unit));
                if let Some(line) = c.disturbed_line(summary.unit) {
                    let _ = writeln!(out, "  - {line}");
                }
            }
            for line in against_highest(&summary.capacities) {
                let _ = writeln!(out, "- {line}");
            }
            out.push('\n');
        }
        if !summary.slo_answers.is_empty() {
            let _ = writeln!(out, "## SLO ({}), best first\n", summary.slo_text());
            for s in summary.ranked_slo_answers() {
                let _ = writeln!(out, "- **{}**: {}", s.server, summary.slo_answer(s));
            }
            for line in summary.no_clear_winners() {
                let _ = writeln!(out, "- {line}");
            }
            out.push('\n');
        }
        if !summary.reconciled.is_empty() {
            let _ = writeln!(out, "## {RECONCILED}\n");
            for r in &summary.reconciled {
                let _ = writeln!(out, "- {}", r.text);
            }
            out.push('\n');
        }
        table(&mut out, summary);
        let verdicts = summary.ratios.len() + summary.best_values.len() + summary.knees.len();
        if verdicts > 0 {
            out.push('\n');
        }
        for r in &summary.ratios {
            let _ = writeln!(out, "- {}", summary.ratio_words(r, &|name| format!("**{name}**")));
        }
        for best in &summary.best_values {
            let _ = writeln!(out, "- {}", summary.best_value(best));
        }
        for (server, knee) in &summary.knees {
            let _ = writeln!(out, "- {}", summary.knee(server, *knee));
        }
        if !summary.ratios.is_empty() {
            let _ = writeln!(out, "\n{}", RATIO_LEGEND.replace('[', "\\["));
        }
        out.push_str(&super::threads::markdown(summary));
        out.push_str(&super::profiles::markdown(summary));
        for line in &summary.cell_warnings {
            let _ = writeln!(out, "\n> ⚠ {line}.");
        }
        if summary.client_bound() {
            let _ = writeln!(out, "\n> ⚠ {CLIENT_BOUND}");
        }
        if let Some(e) = &summary.environment {
            let _ = write!(
                out,
                "\n{} ({} CPUs), kernel {}, shootout {}; client on CPU {}; servers isolated by {}.\n",
                e.cpu_model,
                e.cpus,
                e.kernel,
                e.shootout,
                if e.client_cpus.is_empty() { "any" } else { &e.client_cpus },
                e.isolation
            );
            for c in &e.containers {
                let _ = writeln!(out, "{} ran in a container of {}{}.", c.name, c.image, super::container_options(c));
            }
        }
        as_text(&out)
    }
}

/// `text` with every `<` that could open an HTML tag, a comment or an autolink in CommonMark (one followed by a
/// letter, `/`, `!` or `?`) escaped as `\<`, which renders as `<`; a `<` before a space or digit is left as is.
fn as_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<' && chars.peek().is_some_and(|n| n.is_ascii_alphabetic() || "/!?".contains(*n)) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The comparison table (`|` in a server's name escaped), the SLO's figures marked `✗` where they break it, with a
/// column for each figure it judges that the table lacks; then the legend.
fn table(out: &mut String, summary: &SuiteSummary) {
    let more = more_columns(summary, &[Metric::Mean, Metric::Percentile(99.0), Metric::Errors]);
    let headings: String = more.iter().map(|m| format!(" {} |", heading(*m))).collect();
    let services = summary.services();
    let service_headings: String =
        services.iter().map(|name| format!(" {} CPU µs/req | {} MiB |", as_text(name), as_text(name))).collect();
    let _ = writeln!(
        out,
        "| server | {} | req/s ({}) | min–max | mean ms | p99 ms | errors |{headings} server CPU µs/req | PSS MiB |{service_headings} limit |",
        summary.unit,
        summary.statistic_name()
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|{}---:|---:|{}---|",
        "---:|".repeat(more.len()),
        "---:|---:|".repeat(services.len())
    );
    for c in &summary.cells {
        let figures: String = more.iter().map(|m| format!(" {} |", marked(&figure(c, *m)))).collect();
        let service_figures: String = services
            .iter()
            .map(|name| match summary.service(c, name) {
                Some(s) => format!(" {:.1} | {:.1} |", s.cpu_us, s.pss_bytes / 1_048_576.0),
                None => " — | — |".to_string(),
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1}–{:.1} | {} | {} | {} |{figures} {:.1} | {:.1} |{service_figures} {}{} |",
            c.server.replace('|', "\\|"),
            c.level,
            marked(&headline(summary, c)),
            c.rps_min,
            c.rps_max,
            marked(&figure(c, Metric::Mean)),
            marked(&figure(c, Metric::Percentile(99.0))),
            marked(&figure(c, Metric::Errors)),
            c.server_cpu_us,
            c.pss_bytes / 1_048_576.0,
            if c.client_bound() { "⚠ " } else { "" },
            c.limit.text()
        );
    }
    if let Some(legend) = legend(summary) {
        let _ = writeln!(out, "\n{legend}");
    }
}

/// A figure with its mark: `4.0001 ✗`.
fn marked(figure: &Figure) -> String {
    match figure.mark() {
        Some(mark) => format!("{} {mark}", figure.text),
        None => figure.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::tests::{report, slo_report};

    #[test]
    fn the_figures_that_break_the_slo_are_marked_and_near_ones_show_their_side() {
        let out = Markdown.export(&SuiteSummary::of_report(&slo_report()));
        let table = "\
| server | users | req/s (median) | min–max | mean ms | p99 ms | errors | max ms | server CPU µs/req | PSS MiB | limit |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
| puma | 16 | 1320.0 | 1310.0–1330.0 | 3.9999 | 4.321 | 0.996% | 9.000 | 42.2 | 50.0 | server CPU 97% |
| unicorn\\|3 | 16 | 1000.0 | 990.0–1010.0 | 4.0001 ✗ | 4.321 | 0.50% | 12.000 ✗ | 42.2 | 50.0 | ⚠ client-bound |

✗ breaks the SLO (mean < 4ms, errors < 1%, max < 10ms): the figure marked is on the wrong side of its limit (a percentile, of the requests of every repeat together, with its 95% bounds; any other figure, the median across repeats).";
        assert!(out.contains(table), "{out}");
    }

    #[test]
    fn snapshot() {
        let expected = "# shootout: rack hello

## SLO (mean < 1s), best first

- **puma**: up to 16 users, 1320.0 requests/s (every level met it)

| server | users | req/s (median) | min–max | mean ms | p99 ms | errors | server CPU µs/req | PSS MiB | limit |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---|
| puma | 16 | 1320.0 | 1310.0–1330.0 | 1.500 | 4.321 | 0.50% | 42.2 | 50.0 | server CPU 97% |
| unicorn\\|3 | 16 | 1000.0 | 990.0–1010.0 | 1.500 | 4.321 | 0.50% | 42.2 | 50.0 | ⚠ client-bound |

- no verdict between **puma** and **unicorn|3** at 16 users: the client was the limit of **unicorn|3** (**puma** served 1.32× [1.25–1.40] the requests/s of **unicorn|3**)

\\[low–high]: the 95% interval of a ratio across repeats; a difference is clear only when the whole interval lies more than 2% above 1.

> ⚠ The client was the bottleneck in the cells marked client-bound (busy, or busy and waiting for a CPU, 90% of the time or more): those figures measure shootout, not the server.
";
        assert_eq!(Markdown.export(&SuiteSummary::of_report(&report())), expected);
    }

    #[test]
    fn only_a_less_than_that_could_open_a_tag_is_escaped() {
        assert_eq!(
            as_text("p99 < 20ms, a<b, <!-- x --> <?php </b> <http://x>"),
            "p99 < 20ms, a\\<b, \\<!-- x --> \\<?php \\</b> \\<http://x>"
        );
        assert_eq!(as_text("<1 ms <"), "<1 ms <");
    }
}
