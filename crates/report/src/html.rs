//! [`render_load`]: the HTML page of one `shootout load` result (inline SVG charts and styles, nothing fetched),
//! built with maud so every piece of text is escaped. A suite's page is [`export::Html`](crate::export::Html).

use maud::{html, PreEscaped, DOCTYPE};
use shootout_model::LoadResult;

use crate::charts::{line_chart, Chart, Series};
use crate::export::html::STYLE;

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
