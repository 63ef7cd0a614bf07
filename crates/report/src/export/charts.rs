//! SVG charts, drawn by plotters: [`line_chart`], one line per series, with a legend under the plot (never on
//! top of a line), units on both axes, an optional log scale, an optional limit line (the SLO) and optional
//! crosses over some points (the probes that broke it); [`line_chart_with_spread`] adds, at each point, a bar from
//! the lowest to the highest of its repeats, so that lines that cross inside the noise do not look apart; and
//! [`per_second_charts`], throughput and p99 second by second, of a suite's timelines or of one load run.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use shootout_model::result::Second;

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

/// The colour of a limit line (the SLO).
const LIMIT: RGBColor = RGBColor(200, 0, 0);

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
    /// Points marked with a cross (a capacity search's probes that broke the SLO), and their legend's name.
    pub crosses: Option<(Vec<(f64, f64)>, String)>,
}

/// Width and height of the plot, pixels; the legend adds rows below it.
const SIZE: (u32, u32) = (640, 360);
/// Where the plotting area starts and ends across: the margin plus the y axis' labels, and the margin.
const PLOT_X: (i32, i32) = (12 + 64, 640 - 12);
/// One row of the legend, pixels.
const LEGEND_ROW: i32 = 18;
/// The legend's type size, in plotters' points.
const LEGEND_FONT: f64 = 13.0;

/// A line of the legend: a sample of the line (or a cross) and its name.
struct Entry {
    name: String,
    colour: RGBColor,
    width: u32,
    cross: bool,
}

/// Draws the chart as an SVG document, its legend in rows under the plot, clear of the lines; `None` when there
/// is nothing to draw.
pub fn line_chart(chart: &Chart<'_>, series: &[Series]) -> Option<String> {
    line_chart_with_spread(chart, series, &[])
}

/// The spread of one series' points across repeats: at each x, the lowest and the highest value.
pub type Spread = Vec<(f64, f64, f64)>;

/// [`line_chart`], with each series' spread (`spreads[i]` for `series[i]`) drawn as a bar through its points.
pub fn line_chart_with_spread(chart: &Chart<'_>, series: &[Series], spreads: &[Spread]) -> Option<String> {
    let mut points: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().copied()).collect();
    if points.is_empty() {
        return None;
    }
    points.extend(spreads.iter().flatten().flat_map(|&(x, low, high)| [(x, low), (x, high)]));
    let (x0, x1, y0, y1) = ranges(chart, &points);
    let mut entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, s)| Entry { name: s.name.clone(), colour: PALETTE[i % PALETTE.len()], width: 2, cross: false })
        .collect();
    if let Some((_, label)) = &chart.limit {
        entries.push(Entry { name: label.clone(), colour: LIMIT, width: 1, cross: false });
    }
    if let Some((_, label)) = &chart.crosses {
        entries.push(Entry { name: label.clone(), colour: LIMIT, width: 2, cross: true });
    }
    // Whole-number x values (seconds, users) over a short span get a tick each, never halves between them.
    let whole_x = points.iter().all(|p| p.0.fract() == 0.0);
    let x_ticks = match chart.log_x {
        true => 8,
        false if whole_x && x1 - x0 <= 10.0 => (x1 - x0).floor() as usize + 1,
        false => 10,
    };
    let rows = legend_rows(&entries);
    let legend_height = rows.len() as u32 * LEGEND_ROW as u32 + 8;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, SIZE.1 + legend_height)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let (plot, legend) = root.split_vertically(SIZE.1);
        let mut builder = ChartBuilder::on(&plot);
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
                    .x_labels(x_ticks)
                    .y_labels(8)
                    .light_line_style(if chart.log_x || chart.log_y { WHITE } else { RGBColor(240, 240, 240) })
                    .draw()
                    .ok()?;
                for (spread, entry) in spreads.iter().zip(&entries) {
                    let bars = spread.iter().filter(|b| b.2 > b.1 && (!chart.log_y || b.1 > 0.0));
                    let colour = entry.colour.mix(0.6);
                    context
                        .draw_series(
                            bars.map(|&(x, low, high)| {
                                PathElement::new(vec![(x, low), (x, high)], colour.stroke_width(3))
                            }),
                        )
                        .ok()?;
                }
                for (s, entry) in series.iter().zip(&entries) {
                    let shown: Vec<(f64, f64)> =
                        s.points.iter().copied().filter(|p| !chart.log_y || p.1 > 0.0).collect();
                    let colour = entry.colour;
                    context.draw_series(LineSeries::new(shown.clone(), colour.stroke_width(2))).ok()?;
                    context.draw_series(shown.iter().map(|&p| Circle::new(p, 3, colour.filled()))).ok()?;
                }
                if let Some((y, _)) = &chart.limit {
                    context.draw_series(LineSeries::new(vec![(x0, *y), (x1, *y)], LIMIT.stroke_width(1))).ok()?;
                }
                if let Some((points, _)) = &chart.crosses {
                    let shown = points.iter().filter(|p| !chart.log_y || p.1 > 0.0);
                    context.draw_series(shown.map(|&p| Cross::new(p, 6, LIMIT.stroke_width(2)))).ok()?;
                }
            }};
        }
        // A log axis is labelled where people read it: at the levels (a doubling sweep's 1, 2, 4…) when there are
        // few (with 1-2-5 steps when they are fewer than three), and at 1-2-5 steps otherwise; never at one power
        // of ten alone.
        let mut levels: Vec<f64> = points.iter().map(|p| p.0).filter(|&x| x > 0.0).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        let x_log = || {
            let mut ticks = match levels.len() {
                3..=12 => levels.clone(),
                0..=2 => levels.iter().copied().chain(log_ticks(x0, x1)).collect(),
                _ => log_ticks(x0, x1),
            };
            ticks.sort_by(f64::total_cmp);
            ticks.dedup();
            (x0..x1).log_scale().with_key_points(ticks)
        };
        let y_log = || (y0..y1).log_scale().with_key_points(log_ticks(y0, y1));
        match (chart.log_x, chart.log_y) {
            (false, false) => draw!(builder.build_cartesian_2d(x0..x1, y0..y1).ok()?),
            (true, false) => draw!(builder.build_cartesian_2d(x_log(), y0..y1).ok()?),
            (false, true) => draw!(builder.build_cartesian_2d(x0..x1, y_log()).ok()?),
            (true, true) => draw!(builder.build_cartesian_2d(x_log(), y_log()).ok()?),
        }
        draw_legend(&legend, &entries, &rows)?;
        root.present().ok()?;
    }
    Some(svg)
}

/// Where a log axis from `low` to `high` is labelled: at the powers of ten when they give three labels or more,
/// else at 1-2-5 steps, else at finer steps (1, 1.5, 2, 3, 4, 5, 6, 8), else at its ends and middle: never fewer
/// than three.
fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    const STEPS: [&[f64]; 3] = [&[1.0], &[1.0, 2.0, 5.0], &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]];
    if !(low > 0.0 && high > low) {
        return Vec::new();
    }
    for steps in STEPS {
        let mut ticks = Vec::new();
        let mut decade = 10f64.powf(low.log10().floor());
        while decade <= high {
            // Rounded to the digits the labels show, so that 0.1 × 3 is 0.3.
            let ticks_here = steps.iter().map(|m| format!("{:.12e}", m * decade).parse::<f64>().unwrap_or(m * decade));
            ticks.extend(ticks_here.filter(|&t| t >= low && t <= high));
            decade *= 10.0;
        }
        if ticks.len() >= 3 {
            return ticks;
        }
    }
    vec![low, (low * high).sqrt(), high]
}

/// The axes' ranges: the points' (and the limit's) bounds, with room around them; log axes start above zero.
fn ranges(chart: &Chart<'_>, points: &[(f64, f64)]) -> (f64, f64, f64, f64) {
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
    (x0, x1, y0, y1)
}

/// The legend's entries in rows as wide as the plotting area: for each row, each entry's index and left edge.
fn legend_rows(entries: &[Entry]) -> Vec<Vec<(usize, i32)>> {
    let mut rows: Vec<Vec<(usize, i32)>> = vec![Vec::new()];
    let mut x = PLOT_X.0;
    for (i, entry) in entries.iter().enumerate() {
        // A sample of the line, a gap, the name (about 0.6 em a character at 13 points, 10.5 px), a space.
        let width = 24 + (entry.name.chars().count() as f64 * 6.4).ceil() as i32 + 18;
        let row = rows.last_mut().expect("one row at least");
        if x + width > PLOT_X.1 && !row.is_empty() {
            rows.push(Vec::new());
            x = PLOT_X.0;
        }
        rows.last_mut().expect("one row at least").push((i, x));
        x += width;
    }
    rows
}

/// Draws the legend's rows in `area`, under the plot.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[Entry],
    rows: &[Vec<(usize, i32)>],
) -> Option<()> {
    for (r, row) in rows.iter().enumerate() {
        let y = 4 + r as i32 * LEGEND_ROW + LEGEND_ROW / 2;
        for &(i, x) in row {
            let entry = &entries[i];
            if entry.cross {
                area.draw(&Cross::new((x + 9, y), 6, entry.colour.stroke_width(entry.width))).ok()?;
            } else {
                let line = PathElement::new(vec![(x, y), (x + 18, y)], entry.colour.stroke_width(entry.width));
                area.draw(&line).ok()?;
            }
            let style =
                TextStyle::from(("sans-serif", LEGEND_FONT).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
            area.draw(&Text::new(entry.name.clone(), (x + 24, y), style)).ok()?;
        }
    }
    Some(())
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

/// The two second-by-second charts, throughput and p99 latency, of named timelines (already cut to whole
/// seconds), with `x_label` under them: each chart's SVG, or `None` when there is nothing to draw.
pub fn per_second_charts(timelines: &[(&str, &[Second])], x_label: &str) -> [Option<String>; 2] {
    let series = |f: &dyn Fn(&Second) -> Option<f64>| -> Vec<Series> {
        timelines
            .iter()
            .map(|(name, seconds)| Series {
                name: name.to_string(),
                points: seconds.iter().filter_map(|s| f(s).map(|v| (f64::from(s.second), v))).collect(),
            })
            .collect()
    };
    let chart =
        |title, y_label, log_y| Chart { title, x_label, y_label, log_x: false, log_y, limit: None, crosses: None };
    [
        line_chart(
            &chart("Throughput, second by second", "responses per second", false),
            &series(&|s| Some(s.requests as f64)),
        ),
        line_chart(
            &chart("p99 latency, second by second", "p99 latency (ms, log)", true),
            &series(&|s| s.p99_us.map(|v| v as f64 / 1000.0)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_axis_has_three_labels_or_more_whatever_its_range() {
        assert_eq!(log_ticks(0.05, 200.0), [0.1, 1.0, 10.0, 100.0], "powers of ten where they are enough");
        assert_eq!(log_ticks(0.4, 9.0), [0.5, 1.0, 2.0, 5.0], "1-2-5 within a decade and a bit");
        assert_eq!(log_ticks(1.2, 3.5), [1.5, 2.0, 3.0], "finer steps in a narrow range");
        assert_eq!(log_ticks(2.05, 2.1).len(), 3, "its ends and middle when nothing else fits");
        assert!(log_ticks(1.0, 1.0).is_empty());
    }

    #[test]
    fn a_latency_chart_spanning_less_than_a_decade_labels_its_axis() {
        // Latencies from 3.1 to 5.2 ms on a log axis (issue 38: one label, "1", and nothing to read values by).
        let series = vec![Series { name: "target".into(), points: vec![(1.0, 3.1), (2.0, 4.0), (4.0, 5.2)] }];
        let chart = Chart {
            title: "Mean latency",
            x_label: "load (users)",
            y_label: "latency (ms, log)",
            log_x: true,
            log_y: true,
            limit: None,
            crosses: None,
        };
        let svg = line_chart(&chart, &series).unwrap();
        let labels: Vec<&str> =
            svg.split("<text ").skip(1).filter_map(|t| t.split('>').nth(1)?.split('<').next()).map(str::trim).collect();
        // The axis runs from half the lowest to twice the highest (1.55 to 15.5 ms): 1-2-5 steps label it.
        for label in ["2", "5", "10"] {
            assert!(labels.contains(&label), "{label} on the y axis: {labels:?}");
        }
        for level in ["1", "2", "4"] {
            assert!(labels.contains(&level), "the level {level} on the x axis: {labels:?}");
        }
    }

    /// Issue 47: charts drew medians only, so lines that cross inside the noise looked like real differences.
    #[test]
    fn each_point_gets_a_bar_from_its_lowest_to_its_highest_repeat() {
        let series = vec![Series { name: "a".into(), points: vec![(1.0, 100.0), (2.0, 180.0)] }];
        let chart = Chart {
            title: "Throughput",
            x_label: "users",
            y_label: "requests/s",
            log_x: false,
            log_y: false,
            limit: None,
            crosses: None,
        };
        let plain = line_chart(&chart, &series).unwrap();
        let spread = vec![vec![(1.0, 90.0, 110.0), (2.0, 120.0, 400.0)]];
        let with = line_chart_with_spread(&chart, &series, &spread).unwrap();
        let paths = |svg: &str| svg.matches("opacity=\"0.6\" stroke=\"#0072B2\" stroke-width=\"3\"").count();
        assert_eq!((paths(&plain), paths(&with)), (0, 2), "one bar per point");
        assert!(with.contains("400"), "the axis reaches the highest repeat: {with}");
        assert!(!plain.contains(">400<"), "without the spread it need not");
    }

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
            crosses: None,
        };
        let svg = line_chart(&chart, &series).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("puma") && svg.contains("unicorn") && svg.contains("SLO p99"));
        assert!(svg.contains("p99 latency (ms)") && svg.contains("users"));
        assert!(svg.matches("<polyline").count() >= 3, "two series and the limit line");
        assert_eq!(line_chart(&chart, &[]), None);
    }

    /// The y of every `<text>` element whose content is `name`.
    fn text_y(svg: &str, name: &str) -> Vec<f64> {
        svg.split("<text ")
            .skip(1)
            .filter(|t| t.split('>').nth(1).is_some_and(|c| c.trim().starts_with(name)))
            .map(|t| t.split("y=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn the_legend_sits_under_the_plot_in_rows() {
        let names = ["apache + passenger -w 8", "puma -w 2 -t 16:16", "unicorn -w 3", "thin", "falcon --count 4"];
        let series: Vec<Series> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Series { name: n.to_string(), points: vec![(1.0, i as f64), (2.0, 10.0 + i as f64)] })
            .collect();
        let chart = Chart {
            title: "Throughput",
            x_label: "load (users)",
            y_label: "req/s",
            log_x: false,
            log_y: false,
            limit: Some((5.0, "SLO: rps >= 5".into())),
            crosses: None,
        };
        let svg = line_chart(&chart, &series).unwrap();
        if let Ok(dir) = std::env::var("SHOOTOUT_CHART_DIR") {
            std::fs::write(format!("{dir}/legend.svg"), &svg).unwrap();
        }
        let mut rows: Vec<f64> = Vec::new();
        for name in names.iter().chain(&["SLO: rps"]) {
            let y = text_y(&svg, name);
            assert_eq!(y.len(), 1, "{name} is in the legend once");
            assert!(y[0] > f64::from(SIZE.1), "{name} is under the plot, not on it: y = {}", y[0]);
            if !rows.contains(&y[0]) {
                rows.push(y[0]);
            }
        }
        assert!(rows.len() >= 2, "long names wrap onto a second row: {rows:?}");
        let height: f64 = svg.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(height > rows.iter().copied().fold(0.0, f64::max), "the picture is tall enough for the legend");
    }
}
