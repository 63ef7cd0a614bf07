//! [`Csv`]: `summary.csv`, one row per trial ([`TrialRow`]: the figures the table summarises, before the medians,
//! and the SLO conditions its cell breaks, as the table marks them), written through the csv crate so that any
//! server name is quoted as RFC 4180 says.

use shootout_metrics::percentile_us;
use shootout_model::pressure::Stalls;
use shootout_model::run::TrialRecord;
use shootout_model::states::ThreadTime;

use super::Exporter;
use crate::suite::summary::SuiteSummary;

/// One trial's figures, as `summary.csv` holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRow {
    /// Server.
    pub server: String,
    /// Level.
    pub level: f64,
    /// Repeat, from 1.
    pub repeat: u32,
    /// Requests that ended in the measured window.
    pub requests: u64,
    /// Responses with a status below 400.
    pub ok: u64,
    /// Responses with a status of 400 or more.
    pub http_errors: u64,
    /// Requests with no complete response.
    pub failed: u64,
    /// Responses (any status) per second.
    pub requests_per_s: f64,
    /// Mean latency, µs.
    pub mean_us: f64,
    /// Latency percentiles, µs: 50, 90, 99.
    pub p50_us: u64,
    /// 90th.
    pub p90_us: u64,
    /// 99th.
    pub p99_us: u64,
    /// Largest latency, µs.
    pub max_us: u64,
    /// The server's CPU time per response, µs.
    pub server_cpu_us_per_request: f64,
    /// The server's mean PSS while measured, bytes.
    pub server_pss_mean_bytes: u64,
    /// The server's largest RSS while measured, bytes.
    pub server_rss_max_bytes: u64,
    /// CPUs the server could run on (0: not recorded).
    pub server_cpus: u32,
    /// The server's busy share of those CPUs, 0 to 1.
    pub server_busy: f64,
    /// The client's busy share, 0 to 1.
    pub client_busy: f64,
    /// The share of the server's CPU quota's periods that ran out (0 without a quota).
    pub server_throttled: f64,
    /// Where the server's threads were.
    pub threads: ThreadTime,
    /// Share of the window some task of its cgroup (of the host, for the root cgroup) stalled, by resource.
    pub stalled: Stalls,
    /// CPUs' worth of the kernel's network work on its CPUs.
    pub softirq_cpus: f64,
    /// Resets its host's TCP sent in the window.
    pub tcp_resets: u64,
    /// Connects its host dropped on a full listen queue in the window.
    pub listen_overflows: u64,
    /// Each service's CPU time per response, µs, and mean PSS, bytes, by name, in the suite's order.
    pub services: Vec<(String, f64, u64)>,
    /// The SLO conditions its server and level break, judged on the medians across repeats as the table marks
    /// them (empty when they meet every one, or without an SLO).
    pub cell_breaks_slo: Vec<String>,
}

impl TrialRow {
    /// The row of one trial of `summary`, with the SLO conditions its cell breaks there.
    pub fn in_summary(summary: &SuiteSummary, t: &TrialRecord) -> TrialRow {
        let cell = summary.cell(&t.server, t.level);
        let broken = cell.map(|c| c.objectives.iter().filter(|o| o.broken()).map(|o| o.condition.text.clone()));
        TrialRow { cell_breaks_slo: broken.into_iter().flatten().collect(), ..TrialRow::of(t) }
    }

    /// The row of one trial, on its own (no SLO conditions named).
    pub fn of(t: &TrialRecord) -> TrialRow {
        let r = &t.result;
        TrialRow {
            server: t.server.clone(),
            level: t.level,
            repeat: t.repeat,
            requests: r.requests.total,
            ok: r.requests.ok,
            http_errors: r.requests.http_errors,
            failed: r.requests.failed,
            requests_per_s: r.throughput.requests_per_s,
            mean_us: r.latency.mean_us,
            p50_us: percentile_us(&r.latency, 50.0),
            p90_us: percentile_us(&r.latency, 90.0),
            p99_us: percentile_us(&r.latency, 99.0),
            max_us: r.latency.max_us,
            server_cpu_us_per_request: t.usage.cpu_us_per_request,
            server_pss_mean_bytes: t.usage.pss_mean_bytes,
            server_rss_max_bytes: t.usage.rss_max_bytes,
            server_cpus: t.usage.cpus,
            server_busy: t.usage.busy,
            client_busy: r.client.busy,
            server_throttled: t.usage.throttled,
            threads: t.usage.time.clone(),
            stalled: t.usage.stalled,
            softirq_cpus: t.usage.softirq,
            tcp_resets: t.usage.resets,
            listen_overflows: t.usage.listen_overflows,
            services: t
                .services
                .iter()
                .map(|s| (s.name.clone(), s.usage.cpu_us_per_request, s.usage.pss_mean_bytes))
                .collect(),
            cell_breaks_slo: Vec::new(),
        }
    }
}

/// The columns of `summary.csv`, in order.
pub const COLUMNS: [&str; 35] = [
    "server",
    "level",
    "repeat",
    "requests",
    "ok",
    "http_errors",
    "failed",
    "requests_per_s",
    "mean_us",
    "p50_us",
    "p90_us",
    "p99_us",
    "max_us",
    "server_cpu_us_per_request",
    "server_pss_mean_bytes",
    "server_rss_max_bytes",
    "server_cpus",
    "server_busy",
    "client_busy",
    "server_throttled",
    "threads_on_cpu",
    "threads_runnable",
    "threads_disk",
    "threads_lock",
    "threads_sleep",
    "threads_client",
    "threads_idle",
    "threads_waited_on",
    "stalled_cpu",
    "stalled_io",
    "stalled_memory",
    "softirq_cpus",
    "tcp_resets",
    "listen_overflows",
    "cell_breaks_slo",
];

/// `summary.csv`: a header, then a [`TrialRow`] of each of [`SuiteSummary::trials`] (the thread shares empty for a
/// trial without sweeps); after
/// [`COLUMNS`], a pair for each service
/// (`service_db_cpu_us_per_request`, `service_db_pss_mean_bytes`), empty where a server ran without it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, summary: &SuiteSummary) -> String {
        let mut writer = ::csv::WriterBuilder::new().terminator(::csv::Terminator::Any(b'\n')).from_writer(Vec::new());
        let services = summary.services();
        let pairs = services
            .iter()
            .flat_map(|name| [format!("service_{name}_cpu_us_per_request"), format!("service_{name}_pss_mean_bytes")]);
        let header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).chain(pairs).collect();
        writer.write_record(&header).expect("writing into memory cannot fail");
        for trial in &summary.trials {
            let t = TrialRow::in_summary(summary, trial);
            let (shares, waited_on) = match super::threads::shares(&t.threads) {
                Some((fixed, backends)) => (fixed.iter().map(|s| format!("{s:.3}")).collect(), backends),
                None => (vec![String::new(); ThreadTime::CLASSES.len()], String::new()),
            };
            let mut record: Vec<String> = vec![
                t.server.clone(),
                t.level.to_string(),
                t.repeat.to_string(),
                t.requests.to_string(),
                t.ok.to_string(),
                t.http_errors.to_string(),
                t.failed.to_string(),
                format!("{:.3}", t.requests_per_s),
                format!("{:.1}", t.mean_us),
                t.p50_us.to_string(),
                t.p90_us.to_string(),
                t.p99_us.to_string(),
                t.max_us.to_string(),
                format!("{:.2}", t.server_cpu_us_per_request),
                t.server_pss_mean_bytes.to_string(),
                t.server_rss_max_bytes.to_string(),
                t.server_cpus.to_string(),
                format!("{:.3}", t.server_busy),
                format!("{:.3}", t.client_busy),
                format!("{:.3}", t.server_throttled),
            ];
            record.extend(shares);
            record.push(waited_on);
            let stalled = t.stalled.named().map(|(_, share)| format!("{share:.3}"));
            record.extend(stalled);
            record.extend([format!("{:.3}", t.softirq_cpus), t.tcp_resets.to_string(), t.listen_overflows.to_string()]);
            record.push(t.cell_breaks_slo.join("; "));
            debug_assert_eq!(record.len(), COLUMNS.len());
            let pairs = services.iter().flat_map(|name| match t.services.iter().find(|s| &s.0 == name) {
                Some((_, cpu_us, pss)) => [format!("{cpu_us:.2}"), pss.to_string()],
                None => [String::new(), String::new()],
            });
            record.extend(pairs);
            writer.write_record(&record).expect("writing into memory cannot fail");
        }
        let bytes = writer.into_inner().expect("writing into memory cannot fail");
        String::from_utf8(bytes).expect("every field is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::tests::{report, slo_report, trial};

    #[test]
    fn one_row_per_trial_by_server_repeat_and_level() {
        let trials = [trial("b", 4.0, 1), trial("a", 16.0, 2), trial("a", 4.0, 2), trial("a", 16.0, 1)];
        let summary = SuiteSummary::new("s", "users", &[], &report().analysis).with_trials(&trials);
        let order: Vec<(&str, f64, u32)> =
            summary.trials.iter().map(|t| (t.server.as_str(), t.level, t.repeat)).collect();
        assert_eq!(order, [("a", 16.0, 1), ("a", 4.0, 2), ("a", 16.0, 2), ("b", 4.0, 1)]);
        assert_eq!(summary.trial_count, 4);
        let row = TrialRow::of(&summary.trials[0]);
        assert_eq!((row.requests, row.ok, row.p50_us, row.p90_us, row.p99_us), (1268, 1268, 3163, 3249, 3341));
    }

    #[test]
    fn a_header_and_one_row_per_trial_with_names_quoted() {
        let trials = [trial("puma, \"tuned\"", 16.0, 1), trial("thin", 0.5, 2)];
        let summary = SuiteSummary::of_report(&report()).with_trials(&trials);
        let expected = "server,level,repeat,requests,ok,http_errors,failed,requests_per_s,mean_us,p50_us,p90_us,p99_us,max_us,server_cpu_us_per_request,server_pss_mean_bytes,server_rss_max_bytes,server_cpus,server_busy,client_busy,server_throttled,threads_on_cpu,threads_runnable,threads_disk,threads_lock,threads_sleep,threads_client,threads_idle,threads_waited_on,stalled_cpu,stalled_io,stalled_memory,softirq_cpus,tcp_resets,listen_overflows,cell_breaks_slo
\"puma, \"\"tuned\"\"\",16,1,1268,1268,0,0,1265.232,3151.4,3163,3249,3341,4719,23.66,2461696,5042176,0,0.000,0.024,0.000,,,,,,,,,0.000,0.000,0.000,0.000,0,0,
thin,0.5,2,1268,1268,0,0,1265.232,3151.4,3163,3249,3341,4719,23.66,2461696,5042176,0,0.000,0.024,0.000,,,,,,,,,0.000,0.000,0.000,0.000,0,0,
";
        assert_eq!(Csv.export(&summary), expected);
        let mut swept = trial("puma", 16.0, 1);
        swept.usage.time = ThreadTime {
            on_cpu: 1.0,
            lock: 2.0,
            backends: vec![("db".into(), 1.0)],
            sweeps: 10,
            ..ThreadTime::default()
        };
        swept.usage.stalled.io = 0.125;
        (swept.usage.softirq, swept.usage.resets, swept.usage.listen_overflows) = (0.05, 7, 3);
        let out = Csv.export(&SuiteSummary::of_report(&report()).with_trials(&[swept]));
        let kernel = "0.000,0.125,0.000,0.050,7,3,";
        assert!(
            out.lines()
                .nth(1)
                .unwrap()
                .ends_with(&format!(",0.250,0.000,0.000,0.500,0.000,0.000,0.000,db 25%,{kernel}")),
            "{out}"
        );
    }

    #[test]
    fn each_row_names_the_slo_conditions_its_cell_breaks() {
        let trials = [trial("puma", 16.0, 1), trial("unicorn|3", 16.0, 1), trial("unicorn|3", 16.0, 2)];
        let summary = SuiteSummary::of_report(&slo_report()).with_trials(&trials);
        let out = Csv.export(&summary);
        let last: Vec<&str> = out.lines().skip(1).map(|l| l.rsplit_once(',').unwrap().1).collect();
        assert_eq!(last, ["", "mean < 4ms; max < 10ms", "mean < 4ms; max < 10ms"], "{out}");
        let rows = SuiteSummary::of_report(&slo_report()).with_trials(&[trial("unicorn|3", 16.0, 1)]);
        assert_eq!(TrialRow::in_summary(&rows, &rows.trials[0]).cell_breaks_slo, ["mean < 4ms", "max < 10ms"]);
    }
}
