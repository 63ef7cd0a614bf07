//! [`Html`]: a suite's report as one self-contained HTML file (inline SVG charts and styles, nothing fetched),
//! built with maud so every piece of text is escaped: throughput, latency (log axis), errors, server CPU and
//! memory against load, where the CPU went between a server and its services (a database), where each server's
//! threads were (on a CPU, on a lock, on a backend, waiting for the client), per-second
//! timelines, then the verdicts, the comparison table, each profiled server's flame graph and hottest frames,
//! and the environment.

use maud::{html, Markup, PreEscaped, DOCTYPE};
use shootout_model::result::Second;
use shootout_model::slo::Metric;

use super::Exporter;
use crate::analysis::capacity::against_highest;
use crate::analysis::Cell;
use crate::export::charts::{line_chart, line_chart_with_spread, per_second_charts, Chart, Series, Spread};
use crate::statistics::seconds::whole_seconds;
use crate::suite::marks::{figure, heading, headline, legend, more_columns, Figure};
use crate::suite::reconcile::RECONCILED;
use crate::suite::summary::SuiteSummary;
use crate::suite::verdicts::RATIO_LEGEND;
use crate::suite::words::CLIENT_BOUND;
use crate::units::bytes;

/// The page's styles, shared with the page of one load result.
pub(crate) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1360px;color:#222}\
h1{margin-bottom:.2em}figure{display:inline-block;margin:.5em;vertical-align:top}\
figcaption{font-size:.9em;color:#555;max-width:640px}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}td:first-child,th:first-child{text-align:left}\
.warn{color:#a00;font-weight:bold}.note{font-size:.9em;color:#555}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dt{font-weight:bold}pre{background:#f6f6f6;padding:1em;overflow:auto}\
iframe.flame{width:100%;border:1px solid #ccc}td.frame{text-align:left;font-family:monospace}";

/// `report.html`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

impl Exporter for Html {
    fn export(&self, summary: &SuiteSummary) -> String {
        let mut charts = super::probe_charts::probe_charts(summary);
        charts.extend(against_load(summary));
        charts.extend(beside_services(summary));
        let (x_label, log_x) = load_axis(summary);
        charts.extend(super::threads::charts(summary, &x_label, log_x));
        charts.extend(by_parameter(summary));
        charts.extend(second_by_second(summary));
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { "shootout: " (summary.name) }
                    style { (PreEscaped(STYLE)) }
                }
                body {
                    h1 { "shootout: " (summary.name) }
                    p { (summary.trial_count) " trials. Latency is measured from when each request was due; figures are medians across repeats, percentiles of every repeat's requests together." }
                    (answer(summary))
                    (comparison(summary))
                    (verdicts(summary))
                    section id="charts" {
                        @for (caption, svg) in &charts {
                            figure class="chart" {
                                @if let Some(svg) = svg { (PreEscaped(svg)) } @else { p { "no data" } }
                                figcaption { (caption) }
                            }
                        }
                    }
                    (super::profiles::html(summary))
                    (environment(summary))
                }
            }
        }
        .into_string()
    }
}

/// A chart's caption and its SVG (none when there was nothing to draw).
type Drawn = (String, Option<String>);

/// A cell's figure as drawn, and its lowest and highest across repeats.
type WithRange = (f64, (f64, f64));

/// Throughput, latencies, errors, server CPU and memory against the load level, one line per server, each point
/// with a bar from the lowest to the highest of its repeats.
fn against_load(summary: &SuiteSummary) -> Vec<Drawn> {
    let (x_label, log_x) = load_axis(summary);
    // One line per server, and its spread: the figure and its lowest and highest across repeats, in the unit drawn.
    let per_server = |f: &dyn Fn(&Cell) -> WithRange| -> (Vec<Series>, Vec<Spread>) {
        summary
            .servers()
            .into_iter()
            .map(|s| {
                let cells: Vec<&Cell> = summary.cells.iter().filter(|c| c.server == s).collect();
                let points = cells.iter().map(|c| (c.level, f(c).0)).collect();
                let spread = cells.iter().map(|c| (c.level, f(c).1 .0, f(c).1 .1)).collect();
                (Series { name: s.to_string(), points }, spread)
            })
            .unzip()
    };
    let scaled = |value: f64, (low, high): (f64, f64), scale: f64| (value / scale, (low / scale, high / scale));
    let limit_of = |metric: Metric, scale: f64| -> Option<(f64, String)> {
        summary.slo.iter().find(|c| c.metric == metric).map(|c| (c.limit / scale, format!("SLO: {}", c.text)))
    };
    let mut charts: Vec<Drawn> = Vec::new();
    let mut add = |title: &str,
                   y: &str,
                   axis: Axis,
                   limit: Option<(f64, String)>,
                   (series, spreads): (Vec<Series>, Vec<Spread>),
                   caption: &str| {
        let (log_y, y_label) = y_axis(&series, axis, y);
        let chart = Chart { title, x_label: &x_label, y_label: &y_label, log_x, log_y, limit, crosses: None };
        let caption = format!("{caption} The bars run from the lowest to the highest repeat.");
        charts.push((caption, line_chart_with_spread(&chart, &series, &spreads)));
    };
    add(
        "Throughput",
        "successful responses per second",
        Axis::Auto,
        None,
        per_server(&|c| (c.rps_headline, (c.rps_min, c.rps_max))),
        "Each repeat's responses with a status below 400 per second: the median across repeats, or the best with statistic = best.",
    );
    add(
        "Mean latency",
        "latency (ms, log)",
        Axis::Log,
        limit_of(Metric::Mean, 1000.0),
        per_server(&|c| scaled(c.mean_us, c.ranges.mean_us, 1000.0)),
        "Median of each repeat's mean latency.",
    );
    for (p, value) in [(50.0, 0usize), (90.0, 1), (99.0, 2)] {
        let title = format!("p{p} latency");
        let pick = move |c: &Cell| {
            let (median, range) =
                [(c.p50_us, c.ranges.p50_us), (c.p90_us, c.ranges.p90_us), (c.p99_us, c.ranges.p99_us)][value];
            scaled(median, range, 1000.0)
        };
        add(
            &title,
            "latency (ms, log)",
            Axis::Log,
            limit_of(Metric::Percentile(p), 1000.0),
            per_server(&pick),
            "Median across repeats; latency is measured from when each request was due.",
        );
    }
    add(
        "Errors",
        "failed or status >= 400 (%)",
        Axis::Linear,
        limit_of(Metric::Errors, 1.0),
        per_server(&|c| (c.errors_pct, c.ranges.errors_pct)),
        "Share of requests that failed or got status 400 or more.",
    );
    add(
        "Server CPU",
        "CPU time per response (µs)",
        Axis::Auto,
        None,
        per_server(&|c| (c.server_cpu_us, c.ranges.server_cpu_us)),
        "The server's whole process tree.",
    );
    add(
        "Server memory",
        "PSS (MiB)",
        Axis::Auto,
        None,
        per_server(&|c| scaled(c.pss_bytes, c.ranges.pss_bytes, 1_048_576.0)),
        "Mean proportional set size of the server's process tree while measured (shared pages split, fair to pre-forking servers).",
    );
    charts
}

/// With services (a database), per server: where the CPU went per response, the server's and each service's
/// stacked (each line the sum of those below it), and each service's memory beside each server.
fn beside_services(summary: &SuiteSummary) -> Vec<Drawn> {
    let services = summary.services();
    if services.is_empty() {
        return Vec::new();
    }
    let (x_label, log_x) = load_axis(summary);
    let mut charts: Vec<Drawn> = Vec::new();
    for server in summary.servers() {
        let cells: Vec<&Cell> = summary.cells.iter().filter(|c| c.server == server).collect();
        let mut below: Vec<f64> = cells.iter().map(|c| c.server_cpu_us).collect();
        let mut series = vec![Series {
            name: server.to_string(),
            points: cells.iter().zip(&below).map(|(c, &cpu)| (c.level, cpu)).collect(),
        }];
        for name in &services {
            if cells.iter().all(|c| summary.service(c, name).is_none()) {
                continue;
            }
            for (sum, c) in below.iter_mut().zip(&cells) {
                *sum += summary.service(c, name).map_or(0.0, |s| s.cpu_us);
            }
            series.push(Series {
                name: format!("+ {name}"),
                points: cells.iter().zip(&below).map(|(c, &sum)| (c.level, sum)).collect(),
            });
        }
        let title = format!("Where the CPU went: {server}");
        let chart = Chart {
            title: &title,
            x_label: &x_label,
            y_label: "CPU time per response (µs)",
            log_x,
            log_y: false,
            limit: None,
            crosses: None,
        };
        charts.push((
            format!("CPU time per response of {server}'s process tree, then of each service's added on top: the gap between two lines is that service's share."),
            line_chart(&chart, &series),
        ));
    }
    let series: Vec<Series> = services
        .iter()
        .flat_map(|name| summary.servers().into_iter().map(move |server| (name, server)))
        .map(|(name, server)| Series {
            name: format!("{name} beside {server}"),
            points: summary
                .cells
                .iter()
                .filter(|c| c.server == server)
                .filter_map(|c| summary.service(c, name).map(|s| (c.level, s.pss_bytes / 1_048_576.0)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let (log_y, y_label) = y_axis(&series, Axis::Auto, "PSS (MiB)");
    let chart = Chart {
        title: "Service memory",
        x_label: &x_label,
        y_label: &y_label,
        log_x,
        log_y,
        limit: None,
        crosses: None,
    };
    charts.push((
        "Mean proportional set size of each service's process tree while each server was measured.".to_string(),
        line_chart(&chart, &series),
    ));
    charts
}

/// The x axis of the charts against the load: its label, and whether it is logarithmic (every level above 0).
fn load_axis(summary: &SuiteSummary) -> (String, bool) {
    let log_x = summary.cells.iter().map(|c| c.level).fold(f64::INFINITY, f64::min) > 0.0;
    (format!("load ({})", summary.unit), log_x)
}

/// A figure of a cell, for a chart's y axis.
type Pick = fn(&Cell) -> f64;

/// How a chart's y axis is scaled.
#[derive(Clone, Copy)]
enum Axis {
    /// Always linear (errors: 0% is the line that matters, and a log axis cannot draw it).
    Linear,
    /// Always log (latencies).
    Log,
    /// Log when the lines' positive values differ twentyfold: a JRuby server at 45 ms of CPU per response beside
    /// apps at 0.1 ms would otherwise flatten every other line.
    Auto,
}

/// Whether a chart of `series` on `axis` is drawn on a log scale, and its y label (saying so).
fn y_axis(series: &[Series], axis: Axis, y_label: &str) -> (bool, String) {
    let values: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|v| *v > 0.0).collect();
    let spread = values.iter().copied().fold(0.0, f64::max) / values.iter().copied().fold(f64::INFINITY, f64::min);
    let log_y = match axis {
        Axis::Linear => false,
        Axis::Log => true,
        Axis::Auto => spread > 20.0,
    };
    (log_y, if log_y && !y_label.contains("log") { format!("{y_label}, log") } else { y_label.to_string() })
}

/// With a matrix, at every level: throughput, p99 latency, server CPU per response and memory against the swept
/// parameter, one line per matrix and combination of its other values.
fn by_parameter(summary: &SuiteSummary) -> Vec<Drawn> {
    let Some(sweep) = &summary.sweep else { return Vec::new() };
    let mut levels: Vec<f64> = summary.cells.iter().map(|c| c.level).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let x_label = sweep.parameter.clone();
    let log_x = false;
    let mut charts = Vec::new();
    for level in levels {
        let at = summary.level(level);
        let series = |f: &dyn Fn(&Cell) -> f64| -> Vec<Series> {
            sweep
                .lines
                .iter()
                .map(|line| Series {
                    name: line.name.clone(),
                    points: line
                        .points
                        .iter()
                        .filter_map(|(x, server)| {
                            summary.cells.iter().find(|c| &c.server == server && c.level == level).map(|c| (*x, f(c)))
                        })
                        .collect(),
                })
                .collect()
        };
        let metrics: [(&str, &str, Axis, Pick); 4] = [
            ("Throughput", "successful responses per second", Axis::Auto, |c| c.rps_headline),
            ("p99 latency", "latency (ms, log)", Axis::Log, |c| c.p99_us / 1000.0),
            ("Server CPU", "CPU time per response (µs)", Axis::Auto, |c| c.server_cpu_us),
            ("Server memory", "PSS (MiB)", Axis::Auto, |c| c.pss_bytes / 1_048_576.0),
        ];
        for (what, y_label, axis, f) in &metrics {
            let title = format!("{what} by {} at {at}", sweep.parameter);
            let series = series(f);
            // Apps that differ by orders of magnitude (a hello and a Rails page) share the chart on a log scale.
            let (log_y, y_label) = y_axis(&series, *axis, y_label);
            let chart =
                Chart { title: &title, x_label: &x_label, y_label: &y_label, log_x, log_y, limit: None, crosses: None };
            let caption =
                format!("At {at}: each line is one matrix with its other values fixed; medians across repeats.");
            charts.push((caption, line_chart(&chart, &series)));
        }
    }
    charts
}

/// Throughput and p99 latency second by second, at the timelines' level: whole seconds only, so that a window's
/// last second, measured in part, does not look like a fall.
fn second_by_second(summary: &SuiteSummary) -> Vec<Drawn> {
    let mut partial = false;
    let whole: Vec<(&str, &[Second])> = summary
        .timelines
        .iter()
        .map(|t| {
            let (whole, left_out) = whole_seconds(&t.seconds, t.duration_s);
            partial |= left_out.is_some();
            (t.server.as_str(), whole)
        })
        .collect();
    let note =
        if partial { " Whole seconds only: the last second of a window, measured in part, is left out." } else { "" };
    let caption = format!("At {}, first repeat.{note}", summary.level(summary.timeline_level));
    per_second_charts(&whole, "second of the measured window").into_iter().map(|svg| (caption.clone(), svg)).collect()
}

/// The answer, first: each server's capacity (ranked) or the highest level that met the SLO (ranked), and where
/// two cannot be told apart.
fn answer(summary: &SuiteSummary) -> Markup {
    html! {
        @if !summary.capacities.is_empty() {
            h2 { (summary.capacity_title()) }
            ol {
                @for c in summary.ranked_capacities() {
                    li {
                        b { (c.search.server) } ": " (c.found(summary.unit)) "; " (c.details(summary.unit))
                        @if let Some(line) = c.disturbed_line(summary.unit) { br; span class="warn" { (line) } }
                    }
                }
            }
            ul {
                @for line in against_highest(&summary.capacities) {
                    li { (line) }
                }
            }
        }
        @if !summary.slo_answers.is_empty() {
            h2 { "SLO (" (summary.slo_text()) "), best first" }
            ol {
                @for s in summary.ranked_slo_answers() {
                    li { b { (s.server) } ": " (summary.slo_answer(s)) }
                }
            }
            ul {
                @for line in summary.no_clear_winners() {
                    li { (line) }
                }
            }
        }
        @if !summary.reconciled.is_empty() {
            h2 { (RECONCILED) }
            ul {
                @for r in &summary.reconciled {
                    li class=[(!r.agree).then_some("warn")] { (r.text) }
                }
            }
        }
    }
}

fn verdicts(summary: &SuiteSummary) -> Markup {
    html! {
        h2 { "Verdicts" }
        @if !summary.ratios.is_empty() {
            p class="note" { (RATIO_LEGEND) }
        }
        ul {
            @for r in &summary.ratios {
                li { (summary.ratio_words(r, &|name| name.to_string())) }
            }
            @for best in &summary.best_values {
                li { (summary.best_value(best)) }
            }
            @for (server, knee) in &summary.knees {
                li { (summary.knee(server, *knee)) }
            }
        }
        @for line in &summary.cell_warnings {
            p class="warn" { (line) "." }
        }
        @if summary.client_bound() {
            p class="warn" { (CLIENT_BOUND) }
        }
    }
}

/// The table's figures after the headline requests/s, the SLO's marked `✗` where they break it, and a column for each
/// figure it judges that they lack.
fn comparison(summary: &SuiteSummary) -> Markup {
    let mut shown = vec![
        Metric::Mean,
        Metric::Percentile(50.0),
        Metric::Percentile(90.0),
        Metric::Percentile(99.0),
        Metric::Errors,
    ];
    shown.extend(more_columns(summary, &shown));
    let services = summary.services();
    html! {
        h2 { "Comparison" }
        table {
            tr {
                th { "server" } th { (summary.unit) } th { "req/s " (summary.statistic_name()) } th { "min–max" }
                @for m in &shown { th { (heading(*m)) } }
                th { "CPU µs/req" } th { "PSS" }
                @for name in &services { th { (name) " CPU µs/req" } th { (name) " PSS" } }
                th { "limit" }
            }
            @for c in &summary.cells {
                tr {
                    td { (c.server) } td { (c.level) } (cell(&headline(summary, c))) td { (format!("{:.1}–{:.1}", c.rps_min, c.rps_max)) }
                    @for m in &shown { (cell(&figure(c, *m))) }
                    td { (format!("{:.1}", c.server_cpu_us)) } td { (bytes(c.pss_bytes)) }
                    @for name in &services {
                        @match summary.service(c, name) {
                            Some(s) => { td { (format!("{:.1}", s.cpu_us)) } td { (bytes(s.pss_bytes)) } }
                            None => { td { "—" } td { "—" } }
                        }
                    }
                    @if c.client_bound() { td class="warn" { (c.limit.text()) } } @else { td { (c.limit.text()) } }
                }
            }
        }
        @if let Some(legend) = legend(summary) { p { (legend) } }
    }
}

/// A figure's table cell, `4.0001 ✗` in the warning's colour when it breaks the SLO (`?` when undecided).
fn cell(figure: &Figure) -> Markup {
    html! {
        @match figure.mark() {
            Some(mark) => td class="warn" { (figure.text) " " (mark) },
            None => td { (figure.text) },
        }
    }
}

fn environment(summary: &SuiteSummary) -> Markup {
    html! {
        h2 { "Environment" }
        @if let Some(e) = &summary.environment {
            dl {
                dt { "machine" } dd { (e.cpu_model) ", " (e.cpus) " CPUs, " (bytes(e.memory_bytes as f64)) ", kernel " (e.kernel) }
                dt { "shootout" } dd { (e.shootout) }
                dt { "CPU split" } dd { "client on CPU " (if e.client_cpus.is_empty() { "any" } else { &e.client_cpus }) "; " @for (name, cpus) in &e.server_cpus { (name) " on " (if cpus.is_empty() { "any" } else { cpus }) "; " } @for s in &e.services { "service " (s.name) " on " (if s.cpus.is_empty() { "any" } else { &s.cpus }) "; " } }
                dt { "isolation" } dd { (e.isolation) }
                dt { "started" } dd { (e.started_at) }
                @for (name, version) in &e.versions { @if !version.is_empty() { dt { (name) } dd { (version) } } }
                @for s in &e.services { @if !s.version.is_empty() { dt { (s.name) " (service)" } dd { (s.version) } } }
                @for c in &e.containers { dt { (c.name) " (container)" } dd { (c.image) (super::container_options(c)) } }
            }
        } @else {
            p { "not recorded" }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::tests::{report, slo_report, trial};

    #[test]
    fn every_chart_a_table_and_escaped_names() {
        let mut report = report();
        report.trials = vec![trial("puma", 16.0, 1)];
        report.timelines = vec![crate::suite::report::Timeline::of(&report.trials[0])];
        let page = Html.export(&SuiteSummary::of_report(&report));
        assert_eq!(page.matches("<figure class=\"chart\">").count(), 10);
        assert_eq!(page.matches("<svg").count(), 10, "every chart drawn");
        assert!(page.contains("1 trials.") && page.contains("SLO: mean &lt; 1s"));
        assert!(page.contains("no verdict between puma and unicorn|3 at 16 users: the client was the limit of unicorn|3 (puma served 1.32× [1.25–1.40] the requests/s of unicorn|3)"));
        assert!(page.contains("<th>req/s median</th>") && page.contains("<td>50.00 MiB</td>"));
        assert!(page.contains("client-bound") && page.contains("not recorded"));
        assert!(page.contains("At 16 users, first repeat. Whole seconds only:"), "the 1.002 s window's last second");
    }

    #[test]
    fn the_figures_that_break_the_slo_are_marked_and_near_ones_show_their_side() {
        let page = Html.export(&SuiteSummary::of_report(&slo_report()));
        let table = &page[page.find("<h2>Comparison</h2>").unwrap()..page.find("<h2>Environment</h2>").unwrap()];
        let puma = "<td>puma</td><td>16</td><td>1320.0</td><td>1310.0–1330.0</td><td>3.9999</td><td>1.200</td>\
                    <td>2.000</td><td>4.321</td><td>0.996%</td><td>9.000</td>";
        let unicorn =
            "<td>unicorn|3</td><td>16</td><td>1000.0</td><td>990.0–1010.0</td><td class=\"warn\">4.0001 ✗</td>\
                       <td>1.200</td><td>2.000</td><td>4.321</td><td>0.50%</td><td class=\"warn\">12.000 ✗</td>";
        assert!(table.contains("<th>errors</th><th>max ms</th>") && table.contains(puma) && table.contains(unicorn));
        assert!(table.contains("<p>✗ breaks the SLO (mean &lt; 4ms, errors &lt; 1%, max &lt; 10ms)"), "{table}");
    }

    #[test]
    fn an_axis_goes_log_when_its_lines_differ_twentyfold_except_the_errors() {
        let line = |name: &str, values: &[f64]| Series {
            name: name.into(),
            points: values.iter().enumerate().map(|(i, &v)| (i as f64, v)).collect(),
        };
        let close = [line("a", &[100.0, 150.0]), line("b", &[120.0, 400.0])];
        let apart = [line("a", &[100.0, 150.0]), line("jruby", &[45_000.0, 2_300.0])];
        assert_eq!(y_axis(&close, Axis::Auto, "CPU (µs)"), (false, "CPU (µs)".to_string()));
        assert_eq!(y_axis(&apart, Axis::Auto, "CPU (µs)"), (true, "CPU (µs), log".to_string()));
        assert!(!y_axis(&apart, Axis::Linear, "failed (%)").0, "0% must stay drawable");
        assert_eq!(y_axis(&close, Axis::Log, "latency (ms, log)"), (true, "latency (ms, log)".to_string()));
    }

    #[test]
    fn a_matrix_adds_four_charts_per_level_and_its_answer() {
        let mut report = report();
        let server = |name: &str, workers: &str| shootout_suite::MatrixServer {
            name: name.into(),
            family: "w{workers}".into(),
            params: vec![("workers".into(), workers.into())],
        };
        report.analysis.cells[0].server = "w1".into();
        report.analysis.cells[1].server = "w2".into();
        report.analysis.slo[0].server = "w2".into();
        report.matrix = vec![server("w1", "1"), server("w2", "2")];
        let summary = SuiteSummary::of_report(&report);
        let page = Html.export(&summary);
        assert_eq!(page.matches("<figure class=\"chart\">").count(), 10 + 4, "one level, four charts");
        assert!(page.contains("Throughput by workers at 16 users"));
        let answer =
            "w{workers}: workers = 2 served the most within the SLO (mean &lt; 1s): 1000.0 requests/s at 16 users";
        assert!(page.contains(answer), "{page}");
    }
}
