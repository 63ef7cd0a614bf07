//! `shootout load --find-rate` against an analytic truth. The built-in target's `/spin/US` on one thread is a
//! single server with a fixed service time S, so under Poisson arrivals the time a request waits and is served
//! is an M/D/1 queue's, S + ρS/(2(1−ρ)), plus a fixed delay d outside the queue (the client's and the kernel's
//! part of every request). S is measured as the inverse of the rate the target serves when it never idles
//! (4 users), d as the mean at a low rate less S; the rate at which the mean reaches W is then ρ*/S, with
//! ρ* = k/(1+k) and k = 2(W−d−S)/S.
//!
//! A binary of its own, because cargo runs test binaries one after another: the e2e binary's tests run side by
//! side and take the CPUs from the target mid-probe, which makes S during the search not the S measured before.
//! For the same reason its own tests take turns ([`ALONE`]).

#[path = "e2e/support.rs"]
#[allow(dead_code)] // the e2e tests' helpers, of which this binary needs a few
mod support;

use support::{assert_valid, describe, load, shootout, Target};

/// Held by each test for its whole run: the harness runs a binary's tests side by side, and each of these needs
/// the machine's CPUs to itself.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for the machine to be this test's alone (a test that failed while holding it does not stop the next).
fn alone() -> std::sync::MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The rate at which an M/D/1 queue of service time `service_ms`, behind a fixed delay of `delay_ms`, has a mean
/// response of `limit_ms`.
fn md1_rate(service_ms: f64, delay_ms: f64, limit_ms: f64) -> f64 {
    let k = 2.0 * (limit_ms - delay_ms - service_ms) / service_ms;
    k / (1.0 + k) / (service_ms / 1000.0)
}

#[test]
fn the_rate_found_is_a_single_server_queues() {
    let _alone = alone();
    let target = Target::start();
    let url = target.url("/spin/1000");
    let busy = load(&["-c", "4", "-t", "1", "-d", "2s", &url]);
    let service_ms = 1000.0 / busy.throughput.requests_per_s;
    let low = load(&["-R", "50", "--arrival", "poisson", "-t", "1", "-d", "3s", &url]);
    let delay_ms = (low.latency.mean_us / 1000.0 - service_ms).max(0.0);
    assert!((0.9..2.0).contains(&service_ms) && delay_ms < 1.0, "S = {service_ms} ms, d = {delay_ms} ms");
    let expected = md1_rate(service_ms, delay_ms, 5.0);

    let output = shootout()
        .args(["load", "--json", "--find-rate", "--slo", "mean<5ms", "--slo", "errors<1%"])
        .args(["--arrival", "poisson", "-R", "100", "-t", "1", "-d", "3s", &url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&document);
    let search = &document["search"];
    let found = search["rate"].as_f64().unwrap_or_else(|| panic!("no rate: {}", describe(&output)));
    eprintln!("find-rate: found {found}/s; M/D/1 says {expected:.0}/s (S = {service_ms:.3} ms, d = {delay_ms:.3} ms)");
    assert!(
        (found - expected).abs() <= 0.10 * expected,
        "found {found}/s, M/D/1 says {expected:.0}/s at S = {service_ms:.3} ms, d = {delay_ms:.3} ms: {search}"
    );

    // The search climbed by doubling from -R, then bisected to within 5%, and kept every probe.
    let probes = search["probes"].as_array().unwrap();
    let rates: Vec<f64> = probes.iter().map(|p| p["rate"].as_f64().unwrap()).collect();
    assert_eq!(&rates[..3], &[100.0, 200.0, 400.0], "{search}");
    let failed_at = search["failed_at"].as_f64().unwrap();
    assert!(failed_at > found && failed_at - found <= 0.05 * found, "{search}");
    assert_eq!(search["ended"], "precise");
    assert!(probes.iter().any(|p| p["passed"] == false && p["broke"][0].as_str().unwrap().starts_with("mean<5ms")));
    // The result printed is the probe at the rate found.
    assert_eq!(document["options"]["pacing"]["open"]["rate"].as_f64(), Some(found), "{}", document["options"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("probe ").count(), probes.len(), "{stderr}");
    assert!(stderr.contains("Rate found: "), "{stderr}");
}

/// A suite's search against its own sweep, run one after the other on the same server: the capacity the search
/// finds lies between the sweep's highest level that met the SLO and its lowest that broke it (each widened by 5%,
/// the search's precision, for the noise of a shared machine).
#[test]
fn a_suites_search_lands_between_the_levels_of_its_sweep() {
    let _alone = alone();
    let dir = support::workdir("capacity", "search-and-sweep");
    let suite = r#"
repeats = 1
duration = "2s"
warmup = "1s"
slo = ["mean < 5ms", "errors < 1%"]
search = { model = "open", start = 100 }
[full]
rates = [250, 500, 750, 850, 900, 950, 1000, 1100, 1250]
[load]
path = "/spin/1000"
[[server]]
name = "target"
command = "{shootout} target --port {port} --threads 1"
"#;
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let run = |extra: &[&str], results: &str| {
        let output = shootout()
            .arg("run")
            .args(extra)
            .arg(dir.join("suite.toml"))
            .arg("--results")
            .arg(dir.join(results))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        let made = std::fs::read_dir(dir.join(results)).unwrap().next().unwrap().unwrap().path();
        let analysis = std::fs::read_to_string(made.join("analysis.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&analysis).unwrap()
    };
    let searched = run(&[], "search");
    let swept = run(&["--full"], "sweep");
    let capacity = &searched["capacities"][0];
    let found = capacity["capacity"].as_f64().unwrap_or_else(|| panic!("no capacity: {capacity}"));
    let answer = &swept["slo"][0];
    let (met, broke) = (answer["level"].as_f64().unwrap(), answer["fails_at"].as_f64().unwrap());
    eprintln!("search: {found}/s in {} s; sweep: met at {met}/s, broken at {broke}/s", capacity["seconds"]);
    assert!(0.95 * met <= found && found < 1.05 * broke, "search {found}/s, sweep {met}–{broke}/s: {capacity}");
    assert_eq!(capacity["ended"], "precise", "{capacity}");
}
