//! Where each server's threads were at each level, as shares of the time of the threads that ran: the section
//! of `report.md` under the table ([`markdown`]), a chart per server in `report.html` ([`charts`]), and the columns
//! of `summary.csv` ([`shares`]). Cells without sweeps (results saved before them, or a suite with
//! `thread_states = false`) have none.

use std::fmt::Write;

use shootout_model::states::ThreadTime;

use crate::analysis::{Cell, KernelCell};
use crate::export::charts::{line_chart, Chart, Series};
use crate::suite::summary::SuiteSummary;

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
            let kernel = kernel(&c.kernel);
            let server = c.server.replace('|', "\\|");
            Some(format!("| {server} | {} |{cells} {backends} | {throttled} | {kernel} |", c.level))
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Where the threads were\n\n");
    let headings: String = ThreadTime::CLASSES.iter().map(|class| format!(" {class} |")).collect();
    let _ = writeln!(out, "| server | {} |{headings} waited on | quota throttled | kernel |", summary.unit);
    let _ = writeln!(out, "|---|---:|{}---|---:|---|", "---:|".repeat(ThreadTime::CLASSES.len()));
    for row in rows {
        let _ = writeln!(out, "{row}");
    }
    out.push_str(
        "\nShares of the time of the server's threads that ran and serve, swept every 20 ms or so (on CPU and \
         runnable from the kernel's exact counts; a thread that woke under 5 times a second, a tenth as often as \
         the busiest at most, on under 1% of a CPU keeps house, a timer's way, and is left out, as are a \
         runtime's own helpers: Node's threads but its event loop, the JVM's collector and compilers); \
         \"waited on\" names the backends their sockets led to; \"quota throttled\" is the share of its CPU \
         quota's periods that ran out; \"kernel\" what the kernel counted that no thread sees: the share of the \
         time some task of the server's cgroup (of the host, for the root cgroup) stalled for a CPU, I/O or memory, \
         the CPUs' worth of the kernel's deferred work (softirq) on its CPUs, named as network or block I/O work by \
         which of the two ran more of it, the resets its host sent and the connects it dropped on a full listen \
         queue.\n",
    );
    out
}

/// What the kernel counted about a cell, in words, leaving out what it did not see: `stalled: cpu 12%, io 3%;
/// network work 0.15 CPU; 40 resets sent; 1,234 connects dropped`, or `—`.
pub fn kernel(k: &KernelCell) -> String {
    let stalls: Vec<String> = k
        .stalled
        .named()
        .iter()
        .filter(|(_, share)| *share >= 0.005)
        .map(|(name, share)| format!("{name} {}", percent(*share)))
        .collect();
    let mut parts = Vec::new();
    if !stalls.is_empty() {
        parts.push(format!("stalled: {}", stalls.join(", ")));
    }
    if k.softirq >= 0.005 {
        parts.push(format!("{} {:.2} CPU", crate::analysis::KernelCell::softirq_work(k.softirq_block), k.softirq));
    }
    if k.resets >= 1.0 {
        parts.push(format!("{} resets sent", crate::units::count(k.resets.round() as u64)));
    }
    if k.listen_overflows >= 1.0 {
        parts.push(format!("{} connects dropped", crate::units::count(k.listen_overflows.round() as u64)));
    }
    if parts.is_empty() {
        "—".into()
    } else {
        parts.join("; ")
    }
}

/// One chart per server with sweeps, its caption and SVG: each state's share against the load, stacked (each line
/// adds a state to the ones below it, so the gap between two lines is that state's share, and the top one is
/// 100%). The backends are drawn as one state, `backends`, under the client.
pub fn charts(summary: &SuiteSummary, x_label: &str, log_x: bool) -> Vec<(String, Option<String>)> {
    let mut charts = Vec::new();
    for server in summary.servers() {
        let cells: Vec<(&Cell, Vec<f64>)> = summary
            .cells
            .iter()
            .filter(|c| c.server == server)
            .filter_map(|c| {
                let (fixed, _) = shares(&c.time)?;
                let backends = 1.0 - fixed.iter().sum::<f64>();
                // on CPU, runnable, disk, lock, sleep, backends, client, idle
                let mut stacked = fixed[..5].to_vec();
                stacked.extend([backends.max(0.0), fixed[5], fixed[6]]);
                Some((c, stacked))
            })
            .collect();
        if cells.is_empty() {
            continue;
        }
        let names = ["on CPU", "+ runnable", "+ disk", "+ lock", "+ sleep", "+ backends", "+ client", "+ idle"];
        let mut sums = vec![0.0; cells.len()];
        let series: Vec<Series> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                for (sum, (_, stacked)) in sums.iter_mut().zip(&cells) {
                    *sum += stacked[i] * 100.0;
                }
                Series {
                    name: name.to_string(),
                    points: cells.iter().zip(&sums).map(|((c, _), &s)| (c.level, s)).collect(),
                }
            })
            .collect();
        let title = format!("Where the threads were: {server}");
        let chart = Chart {
            title: &title,
            x_label,
            y_label: "share of the threads' time (%)",
            log_x,
            log_y: false,
            limit: None,
            crosses: None,
        };
        charts.push((
            format!(
                "Where {server}'s threads that ran spent their time, stacked: the gap between two lines is that state's share \
                 (backends: waiting on a service or another server it connected to)."
            ),
            line_chart(&chart, &series),
        ));
    }
    charts
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

    #[test]
    fn a_chart_per_server_with_sweeps_whose_top_line_is_all_of_the_time() {
        use crate::suite::summary::tests::report;
        let mut summary = SuiteSummary::of_report(&report());
        assert!(charts(&summary, "users", true).is_empty(), "no sweeps, no charts");
        summary.cells[0].time = ThreadTime {
            on_cpu: 1.0,
            lock: 2.0,
            backends: vec![("db".into(), 1.0)],
            sweeps: 10,
            ..ThreadTime::default()
        };
        let drawn = charts(&summary, "users", true);
        assert_eq!(drawn.len(), 1, "one server swept");
        let (caption, svg) = &drawn[0];
        assert!(caption.starts_with(&format!("Where {}'s threads", summary.cells[0].server)), "{caption}");
        let svg = svg.as_ref().expect("drawn");
        assert!(svg.contains("+ backends") && svg.contains("+ idle"), "every state in the legend");
        assert!(
            markdown(&summary).contains("| 25% | 0% | 0% | 50% | 0% | 0% | 0% | db 25% | — | — |"),
            "{}",
            markdown(&summary)
        );
    }

    #[test]
    fn the_kernels_counts_in_words_leave_out_what_it_did_not_see() {
        assert_eq!(kernel(&KernelCell::default()), "—");
        let counted = KernelCell {
            stalled: shootout_model::pressure::Stalls { cpu: 0.123, io: 0.001, memory: 0.3 },
            softirq: 0.154,
            softirq_block: 0.1,
            resets: 1234.4,
            listen_overflows: 0.0,
        };
        assert_eq!(kernel(&counted), "stalled: cpu 12%, memory 30%; network work 0.15 CPU; 1,234 resets sent");
        let disk = KernelCell { softirq_block: 0.96, ..counted };
        assert!(kernel(&disk).contains("; block I/O work 0.15 CPU;"), "{}", kernel(&disk));
    }
}
