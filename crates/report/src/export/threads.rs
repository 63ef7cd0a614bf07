//! Where each server's threads were at each level, as shares of the time of the threads that ran: the section
//! of `report.md` under the table, and the columns of `summary.csv` ([`shares`]). Cells without sweeps (results
//! saved before them, or a suite with `thread_states = false`) have none.

use std::fmt::Write;

use shootout_model::states::ThreadTime;

use crate::suite_summary::SuiteSummary;

/// The shares of `time` in [`ThreadTime::CLASSES`]' order, then its backends as `db 71%` (none without sweeps, or
/// when no thread ran).
pub fn shares(time: &ThreadTime) -> Option<(Vec<f64>, String)> {
    if time.sweeps == 0 || time.total() <= 0.0 {
        return None;
    }
    let all = time.shares();
    let fixed = all.iter().take(ThreadTime::CLASSES.len()).map(|(_, share)| *share).collect();
    let backends =
        all.iter().skip(ThreadTime::CLASSES.len()).map(|(name, share)| format!("{name} {}", percent(*share)));
    Some((fixed, backends.collect::<Vec<_>>().join(", ")))
}

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// The `## Where the threads were` section of `report.md`; empty when no cell has sweeps.
pub fn markdown(summary: &SuiteSummary) -> String {
    let rows: Vec<String> = summary
        .cells
        .iter()
        .filter_map(|c| {
            let (fixed, backends) = shares(&c.time)?;
            let cells: String = fixed.iter().map(|share| format!(" {} |", percent(*share))).collect();
            let throttled = if c.throttled > 0.0 { percent(c.throttled) } else { "—".into() };
            let backends = if backends.is_empty() { "—".to_string() } else { backends };
            Some(format!("| {} | {} |{cells} {backends} | {throttled} |", c.server.replace('|', "\\|"), c.level))
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Where the threads were\n\n");
    let headings: String = ThreadTime::CLASSES.iter().map(|class| format!(" {class} |")).collect();
    let _ = writeln!(out, "| server | {} |{headings} waited on | quota throttled |", summary.unit);
    let _ = writeln!(out, "|---|---:|{}---|---:|", "---:|".repeat(ThreadTime::CLASSES.len()));
    for row in rows {
        let _ = writeln!(out, "{row}");
    }
    out.push_str(
        "\nShares of the time of the server's threads that ran, swept every 20 ms (on CPU and runnable from the \
         kernel's exact counts); \"waited on\" names the backends their sockets led to; \"quota throttled\" is the \
         share of its CPU quota's periods that ran out.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_in_class_order_with_the_backends_named() {
        let time = ThreadTime {
            on_cpu: 1.0,
            lock: 2.0,
            backends: vec![("db".into(), 1.0)],
            sweeps: 10,
            ..ThreadTime::default()
        };
        let (fixed, backends) = shares(&time).unwrap();
        assert_eq!(fixed, vec![0.25, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0]);
        assert_eq!(backends, "db 25%");
        assert_eq!(shares(&ThreadTime { sweeps: 0, ..time }), None, "no sweeps, no shares");
        assert_eq!(shares(&ThreadTime { sweeps: 10, ..ThreadTime::default() }), None, "no thread ran");
    }
}
