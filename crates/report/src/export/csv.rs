//! [`Csv`]: `summary.csv`, one row per trial (the figures the table summarises, before the medians, and the SLO
//! conditions its cell breaks, as the table marks them), written through the csv crate so that any server name is
//! quoted as RFC 4180 says.

use super::Exporter;
use crate::suite::summary::SuiteSummary;
use shootout_model::states::ThreadTime;

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

/// `summary.csv`: a header, then [`SuiteSummary::trials`] (the thread shares empty for a trial without sweeps); after
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
        for t in &summary.trials {
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
    }
}
