//! SVG charts, drawn by plotters: [`line_chart`], one line per series, with a legend, units on both axes, an
//! optional log scale and an optional limit line (the SLO).

use plotters::prelude::*;

/// Colours of the series, in order (distinct for the usual colour-vision deficiencies).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
];

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its name, in the legend.
    pub name: String,
    /// Its points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// What a chart shows.
#[derive(Debug, Clone)]
pub struct Chart<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// X axis label, with its unit.
    pub x_label: &'a str,
    /// Y axis label, with its unit.
    pub y_label: &'a str,
    /// Logarithmic x axis (load levels that double).
    pub log_x: bool,
    /// Logarithmic y axis (latencies).
    pub log_y: bool,
    /// A horizontal limit line and its label.
    pub limit: Option<(f64, String)>,
}

/// Draws the chart as an SVG document; `None` when there is nothing to draw.
pub fn line_chart(chart: &Chart<'_>, series: &[Series]) -> Option<String> {
    let points: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().copied()).collect();
    if points.is_empty() {
        return None;
    }
    let limit = chart.limit.as_ref().map(|(y, _)| *y);
    let (mut x0, mut x1) = bounds(points.iter().map(|p| p.0));
    let (mut y0, mut y1) = bounds(points.iter().map(|p| p.1).chain(limit));
    if chart.log_x {
        x0 = x0.max(f64::MIN_POSITIVE);
        (x0, x1) = (x0 / 1.3, x1 * 1.3);
    } else if x1 == x0 {
        (x0, x1) = (x0 - 1.0, x1 + 1.0);
    }
    if chart.log_y {
        let smallest = points.iter().map(|p| p.1).filter(|&y| y > 0.0).fold(f64::INFINITY, f64::min);
        y0 = if smallest.is_finite() { smallest / 2.0 } else { 1.0 };
        y1 = (y1 * 2.0).max(y0 * 10.0);
    } else {
        y0 = y0.min(0.0);
        y1 = if y1 > y0 { y1 * 1.1 } else { y0 + 1.0 };
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 360)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut builder = ChartBuilder::on(&root);
        builder.caption(chart.title, ("sans-serif", 18)).margin(12).x_label_area_size(40).y_label_area_size(64);
        macro_rules! draw {
            ($context:expr) => {{
                let mut context = $context;
                context
                    .configure_mesh()
                    .x_desc(chart.x_label)
                    .y_desc(chart.y_label)
                    .x_label_formatter(&|v| short(*v))
                    .y_label_formatter(&|v| short(*v))
                    .x_labels(if chart.log_x { 8 } else { 10 })
                    .y_labels(8)
                    .light_line_style(if chart.log_x || chart.log_y { WHITE } else { RGBColor(240, 240, 240) })
                    .draw()
                    .ok()?;
                for (i, s) in series.iter().enumerate() {
                    let colour = PALETTE[i % PALETTE.len()];
                    let shown: Vec<(f64, f64)> =
                        s.points.iter().copied().filter(|p| !chart.log_y || p.1 > 0.0).collect();
                    context
                        .draw_series(LineSeries::new(shown.clone(), colour.stroke_width(2)))
                        .ok()?
                        .label(s.name.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2)));
                    context.draw_series(shown.iter().map(|&p| Circle::new(p, 3, colour.filled()))).ok()?;
                }
                if let Some((y, label)) = &chart.limit {
                    let red = RGBColor(200, 0, 0);
                    context
                        .draw_series(LineSeries::new(vec![(x0, *y), (x1, *y)], red.stroke_width(1)))
                        .ok()?
                        .label(label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], red.stroke_width(1)));
                }
                context
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(RGBColor(200, 200, 200))
                    .position(SeriesLabelPosition::UpperLeft)
                    .draw()
                    .ok()?;
            }};
        }
        match (chart.log_x, chart.log_y) {
            (false, false) => draw!(builder.build_cartesian_2d(x0..x1, y0..y1).ok()?),
            (true, false) => draw!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1).ok()?),
            (false, true) => draw!(builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale()).ok()?),
            (true, true) => draw!(builder.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()).ok()?),
        }
        root.present().ok()?;
    }
    Some(svg)
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// Axis numbers people read: 1500 as 1.5k, 0.25 as 0.25.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_lines_legends_and_a_limit() {
        let series = vec![
            Series { name: "puma".into(), points: vec![(1.0, 2.0), (2.0, 3.5), (4.0, 9.0)] },
            Series { name: "unicorn".into(), points: vec![(1.0, 1.5), (2.0, 2.5), (4.0, 30.0)] },
        ];
        let chart = Chart {
            title: "Latency",
            x_label: "users",
            y_label: "p99 latency (ms)",
            log_x: true,
            log_y: true,
            limit: Some((20.0, "SLO p99 < 20 ms".into())),
        };
        let svg = line_chart(&chart, &series).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("puma") && svg.contains("unicorn") && svg.contains("SLO p99"));
        assert!(svg.contains("p99 latency (ms)") && svg.contains("users"));
        assert!(svg.matches("<polyline").count() >= 3, "two series and the limit line");
        assert_eq!(line_chart(&chart, &[]), None);
    }
}
