//! [`render_suite`] and [`render_load`]: one self-contained HTML file (inline SVG charts and styles, nothing
//! fetched), built with maud so every piece of text is escaped.

use maud::{html, Markup, PreEscaped, DOCTYPE};
use shootout_model::slo::{Condition, Metric};
use shootout_model::LoadResult;

use crate::charts::{line_chart, Chart, Series};
use crate::suite_report::SuiteReport;
use crate::units::{bytes, ms};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1360px;color:#222}\
h1{margin-bottom:.2em}figure{display:inline-block;margin:.5em;vertical-align:top}\
figcaption{font-size:.9em;color:#555;max-width:640px}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}td:first-child,th:first-child{text-align:left}\
.warn{color:#a00;font-weight:bold}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dt{font-weight:bold}pre{background:#f6f6f6;padding:1em;overflow:auto}";

/// The report of a suite: throughput, latency (log axis), errors, server CPU and memory against load, per-second
/// timelines, then the comparison table, ratios, SLO answer, warnings and environment.
pub fn render_suite(report: &SuiteReport) -> String {
    let unit = report.unit;
    let cells = &report.analysis.cells;
    let per_server = |f: &dyn Fn(&crate::analysis::Cell) -> f64| -> Vec<Series> {
        let mut servers: Vec<&str> = Vec::new();
        for c in cells {
            if !servers.contains(&c.server.as_str()) {
                servers.push(&c.server);
            }
        }
        servers
            .into_iter()
            .map(|s| Series {
                name: s.to_string(),
                points: cells.iter().filter(|c| c.server == s).map(|c| (c.level, f(c))).collect(),
            })
            .collect()
    };
    let x_label = format!("load ({unit})");
    let log_x = cells.iter().map(|c| c.level).fold(f64::INFINITY, f64::min) > 0.0;
    let limit_of = |metric: Metric| -> Option<(f64, String)> {
        report.slo.iter().find(|c| c.metric == metric).map(|c| (c.limit / 1000.0, format!("SLO: {}", c.text)))
    };
    let mut charts: Vec<(String, Option<String>)> = Vec::new();
    let mut add =
        |title: &str, y: &str, log_y: bool, limit: Option<(f64, String)>, series: Vec<Series>, caption: &str| {
            let chart = Chart { title, x_label: &x_label, y_label: y, log_x, log_y, limit };
            charts.push((caption.to_string(), line_chart(&chart, &series)));
        };
    add(
        "Throughput",
        "successful responses per second",
        false,
        None,
        per_server(&|c| c.rps_headline),
        "Each repeat's responses with a status below 400 per second: the median across repeats, or the best with statistic = best.",
    );
    add(
        "Mean latency",
        "latency (ms, log)",
        true,
        limit_of(Metric::Mean),
        per_server(&|c| c.mean_us / 1000.0),
        "Median of each repeat's mean latency.",
    );
    for (p, value) in [(50.0, 0usize), (90.0, 1), (99.0, 2)] {
        let title = format!("p{p} latency");
        let pick = move |c: &crate::analysis::Cell| [c.p50_us, c.p90_us, c.p99_us][value] / 1000.0;
        add(
            &title,
            "latency (ms, log)",
            true,
            limit_of(Metric::Percentile(p)),
            per_server(&pick),
            "Median across repeats; latency is measured from when each request was due.",
        );
    }
    let errors_limit =
        report.slo.iter().find(|c| c.metric == Metric::Errors).map(|c| (c.limit, format!("SLO: {}", c.text)));
    add(
        "Errors",
        "failed or status >= 400 (%)",
        false,
        errors_limit,
        per_server(&|c| c.errors_pct),
        "Share of requests that failed or got status 400 or more.",
    );
    add(
        "Server CPU",
        "CPU time per response (µs)",
        false,
        None,
        per_server(&|c| c.server_cpu_us),
        "The server's whole process tree.",
    );
    add("Server memory", "PSS (MiB)", false, None, per_server(&|c| c.pss_bytes / 1_048_576.0), "Mean proportional set size of the server's process tree while measured (shared pages split, fair to pre-forking servers).");
    let timeline = |f: &dyn Fn(&shootout_model::result::Second) -> Option<f64>| -> Vec<Series> {
        report
            .timelines
            .iter()
            .map(|(server, seconds)| Series {
                name: server.clone(),
                points: seconds.iter().filter_map(|s| f(s).map(|v| (f64::from(s.second), v))).collect(),
            })
            .collect()
    };
    for (title, y, log_y, pick) in [
        (
            "Throughput, second by second",
            "responses per second",
            false,
            (&|s: &shootout_model::result::Second| Some(s.requests as f64))
                as &dyn Fn(&shootout_model::result::Second) -> Option<f64>,
        ),
        ("p99 latency, second by second", "p99 latency (ms, log)", true, &|s: &shootout_model::result::Second| {
            s.p99_us.map(|v| v as f64 / 1000.0)
        }),
    ] {
        let chart =
            Chart { title, x_label: "second of the measured window", y_label: y, log_x: false, log_y, limit: None };
        charts
            .push((format!("At {} {unit}, first repeat.", report.timeline_level), line_chart(&chart, &timeline(pick))));
    }

    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "shootout: " (report.name) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "shootout: " (report.name) }
                p { (report.trials.len()) " trials. Latency is measured from when each request was due; figures are medians across repeats." }
                section id="charts" {
                    @for (caption, svg) in &charts {
                        figure class="chart" {
                            @if let Some(svg) = svg { (PreEscaped(svg)) } @else { p { "no data" } }
                            figcaption { (caption) }
                        }
                    }
                }
                (verdicts(report))
                (comparison(report))
                (environment(report))
            }
        }
    };
    page.into_string()
}

fn verdicts(report: &SuiteReport) -> Markup {
    let unit = report.unit;
    let a = &report.analysis;
    html! {
        h2 { "Verdicts" }
        ul {
            @for r in &a.ratios {
                li { (r.faster) " served " (format!("{:.2}× [{:.2}–{:.2}]", r.ratio, r.low, r.high)) " the requests/s of " (r.slower) " at " (r.level) " " (unit) " (95% interval)" }
            }
            @for s in &a.slo {
                li {
                    "SLO (" (slo_text(&report.slo)) "): " (s.server) ": "
                    @match (s.level, s.rps) {
                        (Some(level), Some(rps)) => { "up to " (level) " " (unit) ", " (format!("{rps:.1}")) " requests/s" }
                        _ => { "not met at any level" }
                    }
                }
            }
            @for (server, knee) in &a.knees {
                @if let Some(k) = knee { li { (server) ": throughput stops rising after " (k) " " (unit) } }
            }
        }
        @if a.cells.iter().any(|c| c.client_bound) {
            p class="warn" { "The client was the bottleneck (90% busy or more) in the cells marked client-bound: those figures measure shootout, not the server." }
        }
    }
}

fn comparison(report: &SuiteReport) -> Markup {
    html! {
        h2 { "Comparison" }
        table {
            tr { th { "server" } th { (report.unit) } th { (if report.analysis.statistic == shootout_model::run::Statistic::Best { "req/s best" } else { "req/s median" }) } th { "min–max" } th { "mean ms" } th { "p50 ms" } th { "p90 ms" } th { "p99 ms" } th { "errors" } th { "CPU µs/req" } th { "PSS" } th { "" } }
            @for c in &report.analysis.cells {
                tr {
                    td { (c.server) } td { (c.level) } td { (format!("{:.1}", c.rps_headline)) } td { (format!("{:.1}–{:.1}", c.rps_min, c.rps_max)) }
                    td { (ms(c.mean_us)) } td { (ms(c.p50_us)) } td { (ms(c.p90_us)) } td { (ms(c.p99_us)) }
                    td { (format!("{:.2}%", c.errors_pct)) } td { (format!("{:.1}", c.server_cpu_us)) } td { (bytes(c.pss_bytes)) }
                    td class="warn" { @if c.client_bound { "client-bound" } }
                }
            }
        }
    }
}

fn environment(report: &SuiteReport) -> Markup {
    html! {
        h2 { "Environment" }
        @if let Some(e) = &report.environment {
            dl {
                dt { "machine" } dd { (e.cpu_model) ", " (e.cpus) " CPUs, " (bytes(e.memory_bytes as f64)) ", kernel " (e.kernel) }
                dt { "shootout" } dd { (e.shootout) }
                dt { "CPU split" } dd { "client on CPU " (if e.client_cpus.is_empty() { "any" } else { &e.client_cpus }) "; " @for (name, cpus) in &e.server_cpus { (name) " on " (if cpus.is_empty() { "any" } else { cpus }) "; " } }
                dt { "isolation" } dd { (e.isolation) }
                dt { "started" } dd { (e.started_at) }
                @for (name, version) in &e.versions { @if !version.is_empty() { dt { (name) } dd { (version) } } }
            }
        } @else {
            p { "not recorded" }
        }
    }
}

fn slo_text(slo: &[Condition]) -> String {
    slo.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ")
}

/// The report of one `shootout load` result: its latency distribution by percentile and its per-second timeline,
/// with the terminal summary below.
pub fn render_load(result: &LoadResult) -> String {
    let histogram = shootout_metrics::decode_histogram(&result.latency.histogram).ok();
    let distribution: Vec<(f64, f64)> = histogram
        .map(|h| {
            h.iter_quantiles(5)
                .filter(|v| v.quantile_iterated_to() < 1.0)
                .map(|v| (1.0 / (1.0 - v.quantile_iterated_to()), v.value_iterated_to() as f64 / 1000.0))
                .collect()
        })
        .unwrap_or_default();
    let percentile_chart = Chart {
        title: "Latency by percentile",
        x_label: "percentile, as 1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9",
        y_label: "latency (ms, log)",
        log_x: true,
        log_y: true,
        limit: None,
    };
    let series = [Series { name: "latency".into(), points: distribution }];
    let per_second = |f: &dyn Fn(&shootout_model::result::Second) -> Option<f64>| {
        vec![Series {
            name: result.options.url.clone(),
            points: result.timeline.iter().filter_map(|s| f(s).map(|v| (f64::from(s.second), v))).collect(),
        }]
    };
    let charts = [
        line_chart(&percentile_chart, &series),
        line_chart(
            &Chart {
                title: "Throughput, second by second",
                x_label: "second",
                y_label: "responses per second",
                log_x: false,
                log_y: false,
                limit: None,
            },
            &per_second(&|s| Some(s.requests as f64)),
        ),
        line_chart(
            &Chart {
                title: "p99 latency, second by second",
                x_label: "second",
                y_label: "p99 latency (ms, log)",
                log_x: false,
                log_y: true,
                limit: None,
            },
            &per_second(&|s| s.p99_us.map(|v| v as f64 / 1000.0)),
        ),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "shootout load: " (result.options.url) } style { (PreEscaped(STYLE)) } }
            body {
                h1 { "shootout load: " (result.options.url) }
                section id="charts" {
                    @for svg in &charts {
                        figure class="chart" { @if let Some(svg) = svg { (PreEscaped(svg)) } @else { p { "no data" } } }
                    }
                }
                pre { (crate::text::render_load(result)) }
            }
        }
    }
    .into_string()
}
