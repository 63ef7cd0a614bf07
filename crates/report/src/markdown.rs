//! [`render_suite`]: a suite's report as Markdown, for a pull-request comment: the comparison table, the
//! verdicts and the environment (the charts are in the HTML report).

use std::fmt::Write as _;

use crate::suite_report::SuiteReport;
use crate::units::ms;

/// The Markdown report.
pub fn render_suite(report: &SuiteReport) -> String {
    let unit = report.unit;
    let a = &report.analysis;
    let mut out = format!("# shootout: {}\n\n", report.name);
    let _ = writeln!(
        out,
        "| server | {unit} | req/s (median) | min–max | mean ms | p99 ms | errors | server CPU µs/req | PSS MiB |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in &a.cells {
        let _ = writeln!(
            out,
            "| {}{} | {} | {:.1} | {:.1}–{:.1} | {} | {} | {:.2}% | {:.1} | {:.1} |",
            c.server.replace('|', "\\|"),
            if c.client_bound { " ⚠ client-bound" } else { "" },
            c.level,
            c.rps_headline,
            c.rps_min,
            c.rps_max,
            ms(c.mean_us),
            ms(c.p99_us),
            c.errors_pct,
            c.server_cpu_us,
            c.pss_bytes / 1_048_576.0
        );
    }
    if !a.ratios.is_empty() || !a.slo.is_empty() {
        out.push('\n');
    }
    for r in &a.ratios {
        let _ = writeln!(
            out,
            "- **{}** served **{:.2}×** [{:.2}–{:.2}] the requests/s of **{}** at {} {unit}",
            r.faster, r.ratio, r.low, r.high, r.slower, r.level
        );
    }
    let slo: Vec<&str> = report.slo.iter().map(|c| c.text.as_str()).collect();
    for s in &a.slo {
        let answer = match (s.level, s.rps) {
            (Some(level), Some(rps)) => format!("up to {level} {unit}, {rps:.1} requests/s"),
            _ => "not met at any level".into(),
        };
        let _ = writeln!(out, "- SLO ({}): **{}** {answer}", slo.join(", "), s.server);
    }
    if a.cells.iter().any(|c| c.client_bound) {
        out.push_str(
            "\n> ⚠ The client was the bottleneck in the cells marked client-bound: those figures measure shootout.\n",
        );
    }
    if let Some(e) = &report.environment {
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
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Analysis, Cell, Ratio, SloAnswer};

    fn cell(server: &str, level: f64, rps: f64, client_bound: bool) -> Cell {
        Cell {
            server: server.into(),
            level,
            rps: vec![rps],
            rps_median: rps,
            rps_headline: rps,
            rps_min: rps - 10.0,
            rps_max: rps + 10.0,
            mean_us: 1500.0,
            p50_us: 1200.0,
            p90_us: 2000.0,
            p99_us: 4321.0,
            errors_pct: 0.5,
            server_cpu_us: 42.25,
            pss_bytes: 50.0 * 1_048_576.0,
            client_bound,
            meets_slo: true,
        }
    }

    #[test]
    fn snapshot() {
        let report = SuiteReport {
            name: "rack hello".into(),
            unit: "users",
            servers: vec!["puma".into(), "unicorn|3".into()],
            slo: vec![shootout_model::slo::parse_condition("mean < 1s").unwrap()],
            analysis: Analysis {
                cells: vec![cell("puma", 16.0, 1320.0, false), cell("unicorn|3", 16.0, 1000.0, true)],
                ratios: vec![Ratio {
                    level: 16.0,
                    faster: "puma".into(),
                    slower: "unicorn|3".into(),
                    ratio: 1.32,
                    low: 1.25,
                    high: 1.4,
                }],
                slo: vec![SloAnswer { server: "puma".into(), level: Some(16.0), rps: Some(1320.0) }],
                knees: vec![],
                statistic: shootout_model::run::Statistic::Median,
            },
            environment: None,
            timeline_level: 16.0,
            timelines: vec![],
            trials: vec![],
        };
        let expected = "# shootout: rack hello

| server | users | req/s (median) | min–max | mean ms | p99 ms | errors | server CPU µs/req | PSS MiB |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
| puma | 16 | 1320.0 | 1310.0–1330.0 | 1.500 | 4.321 | 0.50% | 42.2 | 50.0 |
| unicorn\\|3 ⚠ client-bound | 16 | 1000.0 | 990.0–1010.0 | 1.500 | 4.321 | 0.50% | 42.2 | 50.0 |

- **puma** served **1.32×** [1.25–1.40] the requests/s of **unicorn|3** at 16 users
- SLO (mean < 1s): **puma** up to 16 users, 1320.0 requests/s

> ⚠ The client was the bottleneck in the cells marked client-bound: those figures measure shootout.
";
        assert_eq!(render_suite(&report), expected);
    }
}
