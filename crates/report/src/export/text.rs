//! [`Text`]: the comparison `shootout run` prints when a suite ends: the table (the headline figure and its range
//! across repeats), then who served more and by how much (with a 95% interval), the SLO answer (or each server's
//! capacity, when the run searched for it), the knees, and
//! any client-bound warning. Its table's last column says what limited each cell ([`crate::analysis::limit::Limit`]).
//! [`trial_line`] is one trial in one line, as a run prints it where no progress bar is drawn.

use std::fmt::Write as _;

use super::Exporter;
use shootout_model::slo::Metric;

use crate::analysis::capacity::against_highest;
use crate::analysis::limit::Limit;
use crate::export::csv::TrialRow;
use crate::suite::marks::{figure, heading, headline, legend, more_columns, Figure};
use crate::suite::reconcile::RECONCILED;
use crate::suite::summary::SuiteSummary;
use crate::suite::verdicts::RATIO_LEGEND;
use crate::suite::words::CLIENT_BOUND;
use shootout_model::run::TrialRecord;

/// The terminal's summary of a suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct Text;

impl Exporter for Text {
    fn export(&self, summary: &SuiteSummary) -> String {
        let mut out = String::new();
        answer(&mut out, summary);
        table(&mut out, summary);
        if !summary.ratios.is_empty() {
            let _ = writeln!(out);
        }
        for r in &summary.ratios {
            let _ = writeln!(out, "{}", summary.ratio_words(r, &|name| name.to_string()));
        }
        if !summary.ratios.is_empty() {
            let _ = writeln!(out, "({RATIO_LEGEND})");
        }
        if !summary.best_values.is_empty() {
            let _ = writeln!(out);
        }
        for best in &summary.best_values {
            let _ = writeln!(out, "{}", summary.best_value(best));
        }
        if !summary.knees.is_empty() {
            let _ = writeln!(out);
        }
        for (server, knee) in &summary.knees {
            let _ = writeln!(out, "{}", summary.knee(server, *knee));
        }
        out.push_str(&super::profiles::text(summary));
        for line in &summary.cell_warnings {
            let _ = writeln!(out, "\nWARNING: {line}.");
        }
        if summary.client_bound() {
            let _ = writeln!(out, "\nWARNING: {CLIENT_BOUND}");
        }
        out
    }
}

/// The answer, first: each server's capacity under the SLO (ranked, with its bracket and details) or the highest
/// level that met it (ranked), and where two servers cannot be told apart; nothing without an SLO.
fn answer(out: &mut String, summary: &SuiteSummary) {
    if !summary.capacities.is_empty() {
        let _ = writeln!(out, "{}:", summary.capacity_title());
        for c in summary.ranked_capacities() {
            let _ = writeln!(out, "  {}: {}\n    {}", c.search.server, c.found(summary.unit), c.details(summary.unit));
            if let Some(line) = c.disturbed_line(summary.unit) {
                let _ = writeln!(out, "    {line}");
            }
        }
        for line in against_highest(&summary.capacities) {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(out);
    }
    if !summary.slo_answers.is_empty() {
        let _ = writeln!(out, "SLO ({}), best first:", summary.slo_text());
        for answer in summary.ranked_slo_answers() {
            let _ = writeln!(out, "  {}: {}", answer.server, summary.slo_answer(answer));
        }
        for line in summary.no_clear_winners() {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(out);
    }
    if !summary.reconciled.is_empty() {
        let _ = writeln!(out, "{}:", RECONCILED);
        for r in &summary.reconciled {
            let _ = writeln!(out, "  {}", r.text);
        }
        let _ = writeln!(out);
    }
}

/// One trial in one plain line, as `shootout run` prints it when its progress bar cannot be drawn (a CI log):
/// `puma -t 16 at 8 users, repeat 1: 12345.6 req/s, mean 0.650 ms, p99 1.234 ms, errors 0.00%, server CPU 97%`.
pub fn trial_line(trial: &TrialRecord, unit: &str) -> String {
    let row = TrialRow::of(trial);
    let errors =
        if row.requests == 0 { 0.0 } else { 100.0 * (row.failed + row.http_errors) as f64 / row.requests as f64 };
    let nothing = crate::analysis::unmeasured::unmeasured(&trial.result)
        .map_or_else(String::new, |why| format!("; FAILED, measured nothing: {why}"));
    format!(
        "{} at {}, repeat {}: {:.1} req/s, mean {} ms, p99 {} ms, errors {errors:.2}%, {}{nothing}",
        trial.server,
        crate::units::level(trial.level, unit),
        trial.repeat,
        row.requests_per_s,
        crate::units::ms(row.mean_us),
        crate::units::ms(row.p99_us as f64),
        Limit::of(&[trial]).text()
    )
}

/// One line per server and level, in aligned columns: the SLO's figures marked `✗` where they break it (the others
/// it judges padded to line up), with a column for each figure it judges that the table lacks; then the legend.
fn table(out: &mut String, summary: &SuiteSummary) {
    let more = more_columns(summary, &[Metric::Mean, Metric::Percentile(99.0), Metric::Errors]);
    let _ = write!(
        out,
        "{:<20} {:>8} {:>26} {:>10} {:>10} {:>9}",
        "server",
        summary.unit,
        format!("req/s {} [min–max]", summary.statistic_name()),
        "mean ms",
        "p99 ms",
        "errors",
    );
    for metric in &more {
        let _ = write!(out, " {:>12}", heading(*metric));
    }
    let _ = write!(out, " {:>12} {:>9}", "CPU µs/req", "PSS MiB");
    let services = summary.services();
    for name in &services {
        let _ = write!(out, " {:>16} {:>12}", format!("{name} CPU µs/req"), format!("{name} MiB"));
    }
    let _ = writeln!(out, "  limit");
    for c in &summary.cells {
        let headline = headline(summary, c);
        let range = Figure { text: format!("{} [{:.1}–{:.1}]", headline.text, c.rps_min, c.rps_max), ..headline };
        let _ = write!(
            out,
            "{:<20} {:>8} {:>26} {:>10} {:>10} {:>9}",
            c.server,
            c.level,
            marked(&range),
            marked(&figure(c, Metric::Mean)),
            marked(&figure(c, Metric::Percentile(99.0))),
            marked(&figure(c, Metric::Errors)),
        );
        for metric in &more {
            let _ = write!(out, " {:>12}", marked(&figure(c, *metric)));
        }
        let _ = write!(out, " {:>12.1} {:>9.1}", c.server_cpu_us, c.pss_bytes / 1_048_576.0);
        for name in &services {
            let _ = match summary.service(c, name) {
                Some(s) => write!(out, " {:>16.1} {:>12.1}", s.cpu_us, s.pss_bytes / 1_048_576.0),
                None => write!(out, " {:>16} {:>12}", "—", "—"),
            };
        }
        let _ = writeln!(out, "  {}", c.limit.text());
    }
    if let Some(legend) = legend(summary) {
        let _ = writeln!(out, "{legend}");
    }
}

/// A figure with its mark, `4.0001 ✗`, or padded as wide when the SLO judges it and it holds.
fn marked(figure: &Figure) -> String {
    match (figure.mark(), figure.judged) {
        (Some(mark), _) => format!("{} {mark}", figure.text),
        (None, true) => format!("{}  ", figure.text),
        (None, false) => figure.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::tests::{report, slo_report};

    #[test]
    fn the_figures_that_break_the_slo_are_marked_and_near_ones_show_their_side() {
        // Issue 40: both means printed as 4.000, one passing and one failing, and 0.996% as 1.00%.
        let expected = "\
server                  users     req/s median [min–max]    mean ms     p99 ms    errors       max ms   CPU µs/req   PSS MiB  limit
puma                       16     1320.0 [1310.0–1330.0]   3.9999        4.321  0.996%        9.000           42.2      50.0  server CPU 97%
unicorn|3                  16      1000.0 [990.0–1010.0]   4.0001 ✗      4.321   0.50%       12.000 ✗         42.2      50.0  client-bound
✗ breaks the SLO (mean < 4ms, errors < 1%, max < 10ms): the figure marked is on the wrong side of its limit (a percentile, of the requests of every repeat together, with its 95% bounds; any other figure, the median across repeats). A figure near a limit is written with the digits that show which side it is on.
";
        let out = Text.export(&SuiteSummary::of_report(&slo_report()));
        assert!(out.contains(expected), "{out}");
    }

    #[test]
    fn snapshot() {
        let mut report = report();
        report.analysis.knees = vec![("puma".into(), Some(16.0)), ("unicorn|3".into(), None)];
        let expected = "\
SLO (mean < 1s), best first:
  puma: up to 16 users, 1320.0 requests/s (every level met it)

server                  users     req/s median [min–max]    mean ms     p99 ms    errors   CPU µs/req   PSS MiB  limit
puma                       16     1320.0 [1310.0–1330.0]      1.500      4.321     0.50%         42.2      50.0  server CPU 97%
unicorn|3                  16      1000.0 [990.0–1010.0]      1.500      4.321     0.50%         42.2      50.0  client-bound

no verdict between puma and unicorn|3 at 16 users: the client was the limit of unicorn|3 (puma served 1.32× [1.25–1.40] the requests/s of unicorn|3)
([low–high]: the 95% interval of a ratio across repeats; a difference is clear only when the whole interval lies more than 2% above 1.)

puma: throughput stops rising at 16 users (no higher level serves 10% more)

WARNING: The client was the bottleneck in the cells marked client-bound (busy, or busy and waiting for a CPU, 90% of the time or more): those figures measure shootout, not the server.
";
        assert_eq!(Text.export(&SuiteSummary::of_report(&report)), expected);
    }
}
