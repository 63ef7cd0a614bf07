//! The one-line shootout: `shootout run --server NAME=COMMAND …` compares servers without a suite file, and the
//! suite.toml it keeps in its results folder runs again as it is.

use crate::support::{describe, shootout};

#[test]
fn two_servers_from_one_command_line_and_its_suite_runs_again() {
    let dir = crate::support::workdir("oneline", "two");
    // A command relative to where it was typed (issue 64, point 8: the kept suite ran it from the results folder,
    // where it was not found).
    let script = format!("#!/bin/sh\nexec '{}' target --port \"$1\" --threads 1\n", env!("CARGO_BIN_EXE_shootout"));
    std::fs::write(dir.join("fast.sh"), script).unwrap();
    std::fs::set_permissions(dir.join("fast.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = shootout()
        .current_dir(&dir)
        .args(["run", "--server", "fast=./fast.sh {port}"])
        .args(["--server", "slow = env SLOW=1 {shootout} target --port {port} --threads 1"])
        .args(["--path", "/delay/0", "--connections", "2", "--duration", "1s", "--warmup", "300ms"])
        .args(["--repeats", "2", "--slo", "mean < 1s", "--results", "first"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(out.contains("fast") && out.contains("slow: up to 2 users"), "both servers compared: {out}");
    // Issue 65, point 3: where each part runs is said before the first trial.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = match cpus {
        1 => "plan: the client on every CPU; fast, slow on every CPU".to_string(),
        2 => "plan: the client on CPU 0; fast, slow on CPU 1".to_string(),
        n => format!("plan: the client on CPU 0; fast, slow on CPUs 1-{}", n - 1),
    };
    assert!(String::from_utf8_lossy(&output.stderr).contains(&plan), "{plan}: {}", describe(&output));
    let results = std::fs::read_dir(dir.join("first")).unwrap().next().unwrap().unwrap().path();
    assert!(results.file_name().unwrap().to_string_lossy().starts_with("fast-vs-slow-"), "{}", results.display());
    assert_eq!(crate::run::files(&results, "json").len(), 4, "2 servers × 1 level × 2 repeats");
    let suite = std::fs::read_to_string(results.join("suite.toml")).unwrap();
    assert!(suite.contains("--server") && suite.contains("command = \"env SLOW=1 {shootout} target"), "{suite}");

    // The suite it kept is the command line's first draft of a suite file: it runs as it is, from anywhere.
    let again = shootout()
        .arg("run")
        .arg(results.join("suite.toml"))
        .arg("--smoke")
        .arg("--results")
        .arg(dir.join("again"))
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", describe(&again));
    let out = String::from_utf8_lossy(&again.stdout);
    assert!(out.contains("slow") && out.contains("fast"), "{}", describe(&again));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_one_line_shootout_is_refused_with_the_fix() {
    for (args, names) in [
        (&["run", "--server", "a={shootout} target --port {port}"][..], "give two servers or more"),
        (&["run", "--server", "x", "--server", "b=y"], "--server 'x': write NAME=COMMAND"),
        (&["run", "--server", "a=x", "--server", "b=y", "--slo", "p99>200"], "give a unit"),
        (&["run", "examples/hello.toml", "--server", "a=x"], "--server"),
        (&["run", "--connections", "1,2"], "--server"),
    ] {
        let output = shootout().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", describe(&output));
        assert!(String::from_utf8_lossy(&output.stderr).contains(names), "{args:?}: {}", describe(&output));
    }
}

/// `shootout run FLAGS` in `dir` is refused in one line that says `names`, exit 2, before a results folder is made.
fn refused_before_anything(dir: &std::path::Path, flags: &[&str], names: &str) {
    let mut command = crate::support::shootout();
    command.current_dir(dir).arg("run").args(flags);
    let output = crate::support::output_within(command, std::time::Duration::from_secs(30));
    assert_eq!(output.status.code(), Some(2), "{flags:?}: {}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(names) && stderr.lines().count() == 1, "{flags:?}: {}", describe(&output));
    assert!(!dir.join("results").exists(), "{flags:?}: refused before its results folder");
}

/// Issue 64, point 9: `--rates NaN` read "expected `nan`" at a column of the suite the flags made, `--duration 0`
/// started the servers first, and `--repeats 0` ran once. Each is one line naming the flag and its fix, exit 2,
/// before a server starts or a results folder is made.
#[test]
fn levels_durations_and_repeats_that_measure_nothing_are_refused_before_anything_starts() {
    let dir = crate::support::workdir("oneline", "nothing-measured");
    let servers = ["--server", "a={shootout} target --port {port}", "--server", "b={shootout} target --port {port}"];
    for (flags, names) in [
        (&["--rates", "NaN"][..], "--rates NaN: "),
        (&["--rates", "100,0"], "--rates 0: "),
        (&["--duration", "0"], "--duration 0s: "),
        (&["--repeats", "0"], "--repeats 0: "),
        // Issue 64, point 2: 1e300/s ran on past a minute; 1e-9/s sent nothing and read "errors 100.00%".
        (&["--rates", "1e300"], "--rates 1e300: 1e300 requests/s is past the 1e9"),
        (&["--rates", "1e-9"], "--rates 1e-9: at 1e-9 requests/s not one request falls due in 10s"),
    ] {
        refused_before_anything(&dir, &[&servers[..], flags].concat(), names);
    }
    // The same in a suite file, at the key.
    for (key, names) in [
        ("repeats = 0\nconnections = [1]", "repeats = 0: "),
        ("duration = \"0s\"\nconnections = [1]", "duration = \"0s\": "),
        ("rates = [100, 1e300]", "rates: 1e300 requests/s is past the 1e9"),
        ("duration = \"2s\"\nrates = [0.1]", "rates: at 0.1 requests/s not one request falls due in 2s"),
    ] {
        let suite = format!("{key}\n[[server]]\nname = \"a\"\ncommand = \"{{shootout}} target --port {{port}}\"\n");
        std::fs::write(dir.join("suite.toml"), suite).unwrap();
        let mut command = std::process::Command::new("timeout");
        command.args(["30", env!("CARGO_BIN_EXE_shootout"), "run", "suite.toml"]);
        let output = command.current_dir(&dir).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{key}: {}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("suite.toml") && stderr.contains(names), "{key}: {}", describe(&output));
        assert!(!dir.join("results").exists(), "{key}: refused before its results folder");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 65, point 2: `--cpus` on the client's CPU (or one the machine lacks) and a `--param` that no command
/// holds are one line each, exit 2, before a server starts or a results folder is made.
#[test]
fn cpus_and_parameters_the_servers_cannot_take_are_refused_before_anything_starts() {
    let dir = crate::support::workdir("oneline", "cpus-params");
    let servers = ["--server", "a={shootout} target --port {port}", "--server", "b={shootout} target --port {port}"];
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let none = cpus.to_string();
    let mut cases = vec![
        (vec!["--cpus", none.as_str()], format!("--cpus {cpus}: this machine has no CPU {cpus}")),
        (vec!["--param", "workers=1,2"], "--param 'workers=1,2': no --server command holds {workers}".into()),
        (vec!["--param", "port=1"], "--param 'port=1': {port} is filled by shootout itself".into()),
    ];
    if cpus >= 2 {
        cases.push((vec!["--cpus", "0-1"], "--cpus 0-1: CPU 0 is the client's".into()));
    }
    for (flags, names) in cases {
        refused_before_anything(&dir, &[&servers[..], &flags].concat(), &names);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 64, point 9: a CR, ESC or DEL in `--name`, `--path` or a command read "the suite of the --server
/// flags:2:251: carriage return must be followed by newline", and `--path hello` "host … 37377hello does not
/// resolve". Each is one line naming the flag and its fix, exit 2.
#[test]
fn flags_a_suite_cannot_hold_are_refused_by_name() {
    let dir = crate::support::workdir("oneline", "unwritable");
    let a = "a={shootout} target --port {port}";
    for (flags, names) in [
        (&["--server", a, "--server", "b={shootout} target --port {port}", "--path", "hello"][..], "--path hello: "),
        (&["--server", a, "--server", "b=x\ry", "--path", "/"], "--server 'b=x\\ry': "),
        (&["--server", a, "--server", "b=y", "--name", "x\u{1b}[31m"], "--name 'x\\u{1b}[31m': "),
        (&["--server", a, "--server", "b=y", "--path", "/a\u{7f}"], "--path '/a\\u{7f}': "),
    ] {
        refused_before_anything(&dir, flags, names);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 64, point 9: the suite a one-line run keeps wrote `--duration 1999us` as "1ms" and `--warmup 999us` as
/// "0s": run again, it measured something else. It keeps them to the microsecond.
#[test]
fn the_kept_suite_holds_its_durations_to_the_microsecond() {
    let dir = crate::support::workdir("oneline", "microseconds");
    let output = shootout()
        .current_dir(&dir)
        .args(["run", "--server", "a={shootout} target --port {port}", "--server", "b={shootout} target --port {port}"])
        .args(["--path", "/hello", "--connections", "1", "--repeats", "1", "--duration", "1999us", "--warmup", "999us"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let results = std::fs::read_dir(dir.join("results")).unwrap().next().unwrap().unwrap().path();
    let suite = std::fs::read_to_string(results.join("suite.toml")).unwrap();
    assert!(suite.contains("duration = \"1999us\"") && suite.contains("warmup = \"999us\""), "{suite}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 64, point 9: two servers of 150-character names made a suite name ("a… vs b…") too long for a folder's
/// name, and the run failed with "cannot make a results directory (File name too long)". Its folder takes the
/// name's first 200 bytes.
#[test]
fn servers_with_long_names_get_a_results_folder() {
    let dir = crate::support::workdir("oneline", "long-names");
    let (a, b) = ("a".repeat(150), "b".repeat(150));
    let output = shootout()
        .current_dir(&dir)
        .args(["run", "--server", &format!("{a}={{shootout}} target --port {{port}}")])
        .args(["--server", &format!("{b}={{shootout}} target --port {{port}}")])
        .args(["--path", "/hello", "--connections", "1", "--repeats", "1", "--duration", "200ms", "--warmup", "0s"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let results = std::fs::read_dir(dir.join("results")).unwrap().next().unwrap().unwrap().file_name();
    let results = results.to_string_lossy();
    assert!(results.starts_with(&format!("{a}-vs-{}-", &b[..46])) && results.len() <= 200 + 16, "{results}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 65, point 5: `--slo` without levels searches each server's capacity, climbing from 10 requests/s by
/// the server's own CPU. A server that spins 1 ms a request keeps its one CPU about 1% busy at 10/s, so the next
/// level is four times it, 40/s, not 20; each search answers, and says why its server stops where it does.
#[test]
fn an_objective_without_levels_searches_climbing_by_the_servers_cpu() {
    let dir = crate::support::workdir("oneline", "climb");
    let output = shootout()
        .current_dir(&dir)
        .args(["run", "--server", "a={shootout} target --port {port} --threads 1"])
        .args(["--server", "b={shootout} target --port {port} --threads 1"])
        .args(["--path", "/spin/1000", "--slo", "mean < 5ms", "--duration", "1s", "--warmup", "200ms"])
        .args(["--results", "results"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let results = crate::support::results(&dir);
    for server in ["a", "b"] {
        let saved = std::fs::read(results.join(format!("searches/{server}.json"))).unwrap();
        let search: shootout_model::search::ServerSearch = serde_json::from_slice(&saved).unwrap();
        let levels: Vec<f64> = search.probes.iter().map(|p| p.level).collect();
        assert_eq!(&levels[..2], &[10.0, 40.0], "{server}: {search:?}");
        assert!(search.capacity.is_some_and(|c| c >= 40.0), "{server}: {search:?}");
    }
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(out.starts_with("Capacity under the SLO (mean < 5ms)"), "the answer first: {out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
