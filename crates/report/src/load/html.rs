//! [`render_load`]: the HTML page of one `shootout load` result (inline SVG charts and styles, nothing fetched),
//! built with maud so every piece of text is escaped. A suite's page is [`export::Html`](crate::export::Html).

use maud::{html, PreEscaped, DOCTYPE};
use shootout_model::LoadResult;

use crate::export::charts::{line_chart, per_second_charts, Chart, Series};
use crate::export::html::STYLE;
use crate::statistics::seconds::whole_seconds;

/// The report of one `shootout load` result: its latency distribution by percentile and its per-second timeline,
/// with the terminal summary below.
pub fn render_load(result: &LoadResult) -> String {
    let mut charts = vec![(String::new(), distribution(result))];
    charts.extend(second_by_second(result));
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "shootout load: " (result.options.url) } style { (PreEscaped(STYLE)) } }
            body {
                h1 { "shootout load: " (result.options.url) }
                section id="charts" {
                    @for (caption, svg) in &charts {
                        figure class="chart" {
                            @if let Some(svg) = svg { (PreEscaped(svg)) } @else { p { "no data" } }
                            @if !caption.is_empty() { figcaption { (caption) } }
                        }
                    }
                }
                pre { (crate::load::text::render_load(result)) }
            }
        }
    }
    .into_string()
}

/// Latency against percentile, on HdrHistogram's 1/(1-p) axis.
fn distribution(result: &LoadResult) -> Option<String> {
    let histogram = shootout_metrics::decode_histogram(&result.latency.histogram).ok();
    let distribution: Vec<(f64, f64)> = histogram
        .map(|h| {
            shootout_metrics::percentile::distribution(&h, 5)
                .into_iter()
                .filter(|step| step.quantile < 1.0)
                .map(|step| (1.0 / (1.0 - step.quantile), step.value as f64 / 1000.0))
                .collect()
        })
        .unwrap_or_default();
    let chart = Chart {
        title: "Latency by percentile",
        x_label: "percentile, as 1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9",
        y_label: "latency (ms, log)",
        log_x: true,
        log_y: true,
        limit: None,
        crosses: None,
    };
    line_chart(&chart, &[Series { name: "latency".into(), points: distribution }])
}

/// Throughput and p99 latency second by second, whole seconds only, each with its caption.
fn second_by_second(result: &LoadResult) -> Vec<(String, Option<String>)> {
    let (whole, left_out) = whole_seconds(&result.timeline, result.duration_s);
    let caption = left_out.map_or_else(String::new, |part| {
        format!("Whole seconds only: the last second, measured for {part:.3} s, is left out.")
    });
    let name = result.options.url.as_str();
    per_second_charts(&[(name, whole)], "second").into_iter().map(|svg| (caption.clone(), svg)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_last_second_is_left_out_and_said() {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let page = render_load(&trial.result);
        assert_eq!(page.matches("<svg").count(), 3);
        assert_eq!(
            page.matches("Whole seconds only: the last second, measured for 0.002 s, is left out.").count(),
            2,
            "the 1.002 s window's second second, under both per-second charts"
        );
    }
}
