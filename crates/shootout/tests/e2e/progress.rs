//! What a CI log shows while shootout runs, where stderr is not a terminal and no progress bar is drawn: `run`
//! says each trial as it ends (its figures, its place among all, the time so far and left) and each start
//! warm-up; `load` says where it is every 10 s.

use crate::support::{describe, run_suite, shootout, workdir, Target};

#[test]
fn a_run_without_a_terminal_says_each_trial_as_it_ends() {
    let dir = workdir("progress", "run");
    let suite = "name = \"logged\"\nrepeats = 1\nduration = \"500ms\"\nwarmup = \"100ms\"\nconnections = [1, 2]\n\
        [[server]]\nname = \"target\"\ncommand = \"{shootout} target --port {port} --threads 1\"\n\
        start_warmup = \"300ms\"\n";
    let output = run_suite(&dir, suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("shootout: trial ")).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("shootout: trial 1/2: target at 1 user, repeat 1: "), "{stderr}");
    assert!(lines[1].starts_with("shootout: trial 2/2: target at 2 users, repeat 1: "), "{stderr}");
    for part in [" req/s, mean ", " ms, p99 ", " ms, errors 0.00%, ", " elapsed, about ", " left"] {
        assert!(lines[1].contains(part), "{part:?} in {}", lines[1]);
    }
    assert!(stderr.contains("shootout: target: start warm-up 300ms, repeat 1"), "{stderr}");
}

#[test]
fn a_load_without_a_terminal_says_where_it_is_every_ten_seconds() {
    let target = Target::start();
    let output =
        shootout().args(["load", "-c", "1", "--warmup", "9s", "-d", "2s"]).arg(target.url("/")).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("shootout: load: ")).collect();
    assert_eq!(lines.len(), 1, "one line at 10 s of 11: {stderr}");
    assert!(
        lines[0].starts_with("shootout: load: 10 s: ") && lines[0].contains(" req/s in the last second, 0 errors"),
        "{stderr}"
    );
}
