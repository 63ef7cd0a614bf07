//! `shootout run` of a suite with `search`: each server's capacity under the SLO bracketed and bisected, each probe
//! a saved trial (each end of the answer measured twice), the capacity in the summary and the reports, and a search cut
//! short by Ctrl-C finished by `--resume` without measuring again what was saved.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use shootout_model::search::{Ended, ServerSearch};

use crate::support::{describe, left_with, marked, results, shootout, start_run, workdir};

/// A closed-model search whose SLO holds up to about 10 users: each answer waits 20 ms, so a user makes about 48
/// requests per second, and `rps < 525` breaks at 11 users, whatever else the machine runs.
const SUITE: &str = r#"
repeats = 2
duration = "1s"
warmup = "200ms"
sample_every = "100ms"
slo = ["rps < 525", "errors < 1%"]
search = { model = "closed" }
[load]
path = "/delay/20"
[[server]]
name = "a"
command = "{shootout} target --port {port} --threads 1"
"#;

/// The trial files saved under `results`.
fn trials(results: &Path) -> Vec<PathBuf> {
    let folder = results.join("trials/a");
    let files = std::fs::read_dir(folder).into_iter().flatten().flatten().map(|e| e.path());
    files.filter(|p| p.extension().is_some_and(|e| e == "json")).collect()
}

#[test]
fn a_search_brackets_the_capacity_and_resume_finishes_a_search_cut_short() {
    let dir = workdir("search", "resume");
    std::fs::write(dir.join("suite.toml"), SUITE).unwrap();
    let child = start_run(marked("search-resume"), &dir);
    // Ctrl-C once two probes are saved.
    let deadline = Instant::now() + Duration::from_secs(60);
    // The results folder is made before the run's own folder inside it: neither may be there yet.
    let saved = || {
        let inside = std::fs::read_dir(dir.join("results")).ok().and_then(|mut d| d.next()).and_then(Result::ok);
        inside.map_or(0, |run| trials(&run.path()).len())
    };
    while Instant::now() < deadline && saved() < 2 {
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
    assert!(left_with("search-resume").is_empty(), "nothing is left running");
    let results = results(&dir);
    let saved: Vec<(PathBuf, SystemTime)> =
        trials(&results).into_iter().map(|p| (p.clone(), p.metadata().unwrap().modified().unwrap())).collect();
    let cut: ServerSearch =
        serde_json::from_str(&std::fs::read_to_string(results.join("searches/a.json")).unwrap()).unwrap();
    assert_eq!(cut.ended, Ended::Interrupted, "{cut:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("the search was cut short (finish it with shootout run --resume)"), "{stdout}");

    let resumed = shootout().arg("run").arg("--resume").arg(&results).output().unwrap();
    assert!(resumed.status.success(), "{}", describe(&resumed));
    for (path, modified) in &saved {
        assert_eq!(path.metadata().unwrap().modified().unwrap(), *modified, "{} was measured again", path.display());
    }
    let search: ServerSearch =
        serde_json::from_str(&std::fs::read_to_string(results.join("searches/a.json")).unwrap()).unwrap();
    let capacity = search.capacity.unwrap();
    assert_eq!(search.ended, Ended::Precise, "{search:?}");
    assert!((8.0..=12.0).contains(&capacity), "about 10 users: {search:?}");
    // Users are whole: the level that broke it is the next one, unless its probes fell both ways (at 11 users the
    // target serves about 539 requests/s against the limit of 525, and a busy machine served 517 once in CI): the
    // answer is then a band, its top a few users higher.
    let failed_at = search.failed_at.unwrap();
    match search.moved {
        false => assert_eq!(failed_at, capacity + 1.0, "users are whole: {search:?}"),
        true => assert!(failed_at > capacity && failed_at <= capacity + 4.0, "a band of a few users: {search:?}"),
    }
    // Doubling from one user, then bisecting between the last pass and the first failure.
    let levels: Vec<f64> = search.probes.iter().map(|p| p.level).collect();
    assert_eq!(&levels[..5], &[1.0, 2.0, 4.0, 8.0, 16.0], "{levels:?}");
    // Every probe is one trial (no percentile to decide), and each end of the answer is measured twice, its
    // trials numbered on from the earlier ones at its level.
    assert!(search.probes.iter().all(|p| p.repeats == 1), "{search:?}");
    let at = |level: f64| search.probes.iter().filter(|p| p.level == level).count() as u32;
    assert!(at(capacity) >= 2 && at(failed_at) >= 2, "{search:?}");
    for probe in &search.probes {
        for repeat in 1..=at(probe.level) {
            let file = results.join(format!("trials/a/{}-r{repeat}.json", probe.level));
            assert!(file.is_file(), "{} is saved", file.display());
        }
    }
    assert_eq!(trials(&results).len() as u32, search.probes.iter().map(|p| p.repeats).sum::<u32>());
    assert!(search.seconds > cut.seconds, "the time of both runs: {search:?}");
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    let found = format!("  a: {capacity} users ({failed_at} users breaks it)");
    assert!(stdout.contains("Capacity under the SLO (rps < 525, errors < 1%), searched to 5%:"), "{stdout}");
    assert!(stdout.contains(&found), "{found:?} in {stdout}");
    let markdown = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(markdown.contains(&format!("- **a**: {capacity} users")), "{markdown}");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(html.contains("Capacity under the SLO"), "the HTML report has the capacities");
    assert!(
        html.contains("Probes of a") && html.contains("broke the SLO"),
        "and a chart of the probes, failures crossed"
    );
    let analysis: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("analysis.json")).unwrap()).unwrap();
    assert_eq!(analysis["capacities"][0]["capacity"], capacity);
}

#[test]
fn a_search_without_an_slo_is_refused_at_its_line() {
    let dir = workdir("search", "no-slo");
    let suite = SUITE.replace("slo = [\"rps < 525\", \"errors < 1%\"]\n", "");
    let output = crate::support::run_suite(&dir, &suite);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("suite.toml:6:10: search finds the highest level that meets the SLO"), "{stderr}");
    assert!(!dir.join("results").exists(), "nothing was made");
}

#[test]
fn compare_gives_two_searches_capacities_and_gates_on_a_regression() {
    let searched = |name: &str, slo: &str| {
        let dir = workdir("search", name);
        let suite = SUITE.replace("repeats = 2", "repeats = 1").replace("rps < 525", slo);
        let output = crate::support::run_suite(&dir, &suite);
        assert!(output.status.success(), "{}", describe(&output));
        results(&dir)
    };
    // About 10 users, then about 5: each answer still waits 20 ms, but the SLO allows half the throughput.
    let (old, new) = (searched("compare-old", "rps < 525"), searched("compare-new", "rps < 260"));
    let output = shootout().arg("compare").arg(&old).arg(&new).arg("--max-regression").arg("10%").output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|l| l.starts_with("a ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.ends_with("regressed (broke where OLD met)"), "{stdout}");
    assert!(stdout.starts_with("server ") && stdout.contains("old capacity (users)"), "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("capacity regressed beyond --max-regression 10.0%: a"), "{stderr}");
    // The other way round, an improvement, and no gate fails.
    let output = shootout().arg("compare").arg(&new).arg(&old).arg("--max-regression").arg("10%").output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("improved (met where OLD broke)"),
        "{}",
        describe(&output)
    );
    // A search against a sweep measured other things.
    let dir = workdir("search", "compare-sweep");
    let sweep =
        SUITE.replace("search = { model = \"closed\" }", "connections = [1, 2]").replace("repeats = 2", "repeats = 1");
    let output = crate::support::run_suite(&dir, &sweep);
    assert!(output.status.success(), "{}", describe(&output));
    let output = shootout().arg("compare").arg(&old).arg(results(&dir)).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("OLD searched for each server's capacity and NEW swept levels"), "{stderr}");
}

#[test]
fn a_server_that_dies_mid_search_has_its_search_cut_short_and_the_next_goes_on() {
    let dir = workdir("search", "crash");
    let suite = SUITE
        .replace("repeats = 2", "repeats = 1")
        .replace("name = \"a\"", "name = \"crashy\"")
        .replace("command = \"{shootout} target", "command = \"timeout 3 {shootout} target")
        + "[[server]]\nname = \"steady\"\ncommand = \"{shootout} target --port {port} --threads 1\"\n";
    let output = crate::support::run_suite(&dir, &suite);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("1 search was cut short:\n  crashy: server 'crashy' exited"), "{stderr}");
    let results = results(&dir);
    let search = |server: &str| -> ServerSearch {
        serde_json::from_str(&std::fs::read_to_string(results.join(format!("searches/{server}.json"))).unwrap())
            .unwrap()
    };
    let (crashy, steady) = (search("crashy"), search("steady"));
    assert_eq!(crashy.ended, Ended::Interrupted, "{crashy:?}");
    assert!(!crashy.probes.is_empty() && crashy.probes.iter().all(|p| p.passed), "what it met is kept: {crashy:?}");
    assert_eq!(steady.ended, Ended::Precise, "the next server's search ran whole: {steady:?}");
    let failed = std::fs::read_dir(results.join("trials/crashy")).unwrap().flatten();
    assert_eq!(failed.filter(|e| e.path().extension().is_some_and(|x| x == "failed")).count(), 1, "its last probe");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("  crashy: ") && stdout.contains("so far"), "{stdout}");
}

/// Issue 48: a closed-model search whose objective held at every level read `at least 10000 users (the search's
/// ceiling)` while at 10000 users it served 0 requests/s. A server that answers two users at a time and holds the
/// rest meets `mean < 1s` with the users it answers; a probe where most users were held through the window measured
/// nothing, fails, and the search answers near the users it really takes (the held connections it never closes
/// keep each settling waiting its 30 s).
#[test]
fn a_closed_search_whose_objective_holds_for_the_answered_few_is_not_answered_at_its_ceiling() {
    let dir = workdir("search", "held");
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let suite = format!(
        "repeats = 1\nduration = \"1s\"\nwarmup = \"200ms\"\nslo = [\"mean < 1s\"]\n\
         search = {{ model = \"closed\", ceiling = 64 }}\n[load]\ntimeout = \"2s\"\n\
         [[server]]\nname = \"holds\"\ncommand = \"exec python3 {fixtures}/holding-server/server.py {{port}} 2\"\n"
    );
    let output = crate::support::run_suite(&dir, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let results = results(&dir);
    let search: ServerSearch =
        serde_json::from_str(&std::fs::read_to_string(results.join("searches/holds.json")).unwrap()).unwrap();
    assert_eq!(search.ended, Ended::Precise, "{search:?}");
    let capacity = search.capacity.unwrap_or_else(|| panic!("no capacity: {search:?}"));
    // Up to half the users held still leaves a measure (the rest answered under the mean's limit): 2 to 4 users.
    assert!((2.0..=4.0).contains(&capacity), "it answers 2 users at a time: {search:?}");
    let held = search.probes.iter().find(|p| p.level >= 8.0).unwrap_or_else(|| panic!("{search:?}"));
    assert!(!held.passed && held.broke.iter().any(|b| b.contains("measured nothing")), "{held:?}");
}
