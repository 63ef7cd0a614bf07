//! How a `shootout run` ends other than by finishing: SIGTERM, SIGHUP, a second Ctrl-C, SIGKILL (the guards, and
//! the next run reaping what a run killed with its guards left), a signal during a server's setup, readiness,
//! verification or warm-up, and a disk too full to save a trial. Each keeps what was measured, leaves no process
//! and no cgroup, and can be finished with `--resume`.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::run::{files, first_trial_saved, resume_completes, running, start_run, workdir, QUICK};
use crate::support::{describe, results, shootout};

/// Starts `shootout run` on a two-level suite whose server ignores SIGTERM, SIGHUP and SIGINT and forks a child
/// marked `mark`; sends `signal` once the first trial is saved; returns the run's output, its results and its PID.
fn signalled_run(name: &str, mark: &str, signal: Signal) -> (std::process::Output, PathBuf, u32) {
    signalled_run_then(name, mark, signal, |_| {})
}

/// [`signalled_run`], doing `then` with the runner's PID right after the signal.
fn signalled_run_then(
    name: &str,
    mark: &str,
    signal: Signal,
    then: impl FnOnce(Pid),
) -> (std::process::Output, PathBuf, u32) {
    let dir = workdir(name);
    let suite = format!(
        "repeats = 1\nduration = \"1s\"\nwarmup = \"100ms\"\nconnections = [1, 2]\n[load]\npath = \"/hello\"\n\
         [[server]]\nname = \"stubborn\"\nstop = {{ signal = \"TERM\", grace = \"1s\" }}\n\
         command = \"trap '' TERM HUP INT; sleep {mark} & exec {{shootout}} target --port {{port}} --threads 1\"\n"
    );
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let child = start_run(&dir);
    first_trial_saved(&dir);
    assert!(running(mark), "the server's child runs");
    let pid = child.id();
    kill(Pid::from_raw(pid as i32), signal).unwrap();
    then(Pid::from_raw(pid as i32));
    (child.wait_with_output().unwrap(), results(&dir), pid)
}

/// The cgroups that the run with PID `runner` made for its servers, still there, under the cgroup v2 mount.
fn cgroups_of(runner: u32) -> Vec<String> {
    let Some(mount) = shootout_engine::cgroups::v2_mount() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(mount) else { return Vec::new() };
    let prefix = format!("shootout-run-{runner}-");
    entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(&prefix)).collect()
}

#[test]
fn sigterm_and_sighup_end_a_run_as_ctrl_c_does_and_leave_nothing() {
    for (signal, code, mark) in [(Signal::SIGTERM, 143, "3143"), (Signal::SIGHUP, 129, "3129")] {
        let (output, results, runner) = signalled_run(&format!("signal-{code}"), mark, signal);
        assert_eq!(output.status.code(), Some(code), "128 + the signal: {}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--resume"), "{stderr}");
        assert!(!running(&format!("sleep {mark}")), "no process of the server is left after {signal}");
        assert_eq!(cgroups_of(runner), Vec::<String>::new(), "no cgroup of the run is left");
        let kept = files(&results, "json").len();
        assert!(kept >= 1, "what was measured is kept");
        resume_completes(&results, 2);
        assert!(!running(&format!("sleep {mark}")));
    }
}

#[test]
fn a_second_signal_leaves_at_once_and_still_kills_every_server_and_its_cgroup() {
    // The server ignores SIGTERM, so the first Ctrl-C's stop waits out its 1 s grace; a second Ctrl-C meanwhile
    // leaves at once: the server's tree killed, its cgroup removed, the trials kept and the way to finish named.
    let (output, results, runner) = signalled_run_then("second-signal", "3130", Signal::SIGINT, |runner| {
        std::thread::sleep(Duration::from_millis(300));
        kill(runner, Signal::SIGINT).unwrap();
    });
    assert_eq!(output.status.code(), Some(130), "128 + the first signal: {}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("interrupted again: every server was killed; finish it with: shootout run --resume"),
        "{stderr}"
    );
    assert!(!running("sleep 3130"), "no process of the server is left");
    assert_eq!(cgroups_of(runner), Vec::<String>::new(), "no cgroup of the run is left");
    assert!(!files(&results, "json").is_empty(), "what was measured is kept");
    resume_completes(&results, 2);
}

#[test]
fn ctrl_c_ends_a_suite_at_a_billion_requests_a_second_at_once() {
    // Issue 41: a suite at rates = [1e9] took 68 s to end on Ctrl-C.
    let dir = workdir("billion");
    let suite = "repeats = 1\nduration = \"60s\"\nwarmup = \"0s\"\nrates = [1e9]\n[load]\npath = \"/hello\"\n\
                 [[server]]\nname = \"t\"\ncommand = \"{shootout} target --port {port} --threads 1\"\n";
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let child = start_run(&dir);
    std::thread::sleep(Duration::from_secs(3));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let signalled = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(signalled.elapsed() < Duration::from_secs(5), "it took {:?}", signalled.elapsed());
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
}

/// Waits up to `within` for `check` to hold.
fn eventually(within: Duration, check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check()
}

#[test]
fn a_runner_killed_without_a_word_leaves_nothing_running_for_long() {
    // SIGKILL (the OOM killer, a crash): the server's guard kills its tree and removes its cgroup at once.
    let (output, results, runner) = signalled_run("sigkill", "3137", Signal::SIGKILL);
    assert_eq!(output.status.code(), None, "killed");
    assert!(eventually(Duration::from_secs(5), || !running("sleep 3137")), "the guard killed the server's tree");
    assert!(eventually(Duration::from_secs(5), || cgroups_of(runner).is_empty()), "{:?}", cgroups_of(runner));
    resume_completes(&results, 2);
}

#[test]
fn the_next_run_reaps_what_a_run_killed_with_its_guards_left() {
    // Everything killed at once, the guard too: the server's forked child goes on; the next run finds it by the
    // mark its run left, and kills it, and removes its cgroup, saying so in one line.
    let dir = workdir("reap");
    let suite = "repeats = 1\nduration = \"1s\"\nwarmup = \"100ms\"\nconnections = [1, 2]\n[load]\npath = \"/hello\"\n\
         [[server]]\nname = \"stubborn\"\nstop = { signal = \"TERM\", grace = \"1s\" }\n\
         command = \"trap '' TERM HUP INT; sleep 3138 & exec {shootout} target --port {port} --threads 1\"\n";
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let child = start_run(&dir);
    first_trial_saved(&dir);
    let pgrep = |pattern: &str| -> Vec<i32> {
        let out = Command::new("pgrep").args(["-f", pattern]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect()
    };
    let sleeper = pgrep("sleep 3138")[0];
    let group = nix::unistd::getpgid(Some(Pid::from_raw(sleeper))).unwrap().as_raw();
    for guard in pgrep(&format!("kill -9 -{group} ")) {
        kill(Pid::from_raw(guard), Signal::SIGKILL).unwrap();
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    let runner = child.id();
    drop(child.wait_with_output());
    std::thread::sleep(Duration::from_millis(500));
    // Every `shootout run` reaps what dead runs left as it starts: another test's run may reap the child before
    // this one resumes, and then it is gone already; anything else that ends it would be a fault of the guards.
    if pgrep("sleep 3138") != [sleeper] {
        eprintln!("the server's child was reaped before the resume, by another test's run");
    }
    let resumed = shootout().arg("run").arg("--resume").arg(results(&dir)).output().unwrap();
    assert!(resumed.status.success(), "{}", describe(&resumed));
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    // Another test's run starting meanwhile may reap it first: either way it is reaped, and named when this one did.
    let named = stderr.contains("reaped what earlier runs that died left behind") && stderr.contains("sleep 3138");
    if !named {
        eprintln!("another run reaped it first: {stderr}");
    }
    assert!(!running("sleep 3138"), "reaped");
    assert!(cgroups_of(runner).is_empty(), "{:?}", cgroups_of(runner));
}

#[test]
fn a_trial_that_cannot_be_saved_on_a_full_disk_ends_the_run_with_its_server_stopped() {
    // The results on a 1 MiB tmpfs of the run's own (a private mount namespace), which the server fills as it
    // first starts: the first trial cannot be saved. The run says so in one line, exits 1, and leaves no process
    // and no cgroup; once the disk has room again, --resume finishes the suite.
    let dir = workdir("full-disk");
    let disk = dir.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let filled = dir.join("filled");
    let suite = format!(
        "{QUICK}connections = [1]\n[[server]]\nname = \"filler\"\n\
         command = \"[ -e '{filled}' ] || {{ touch '{filled}'; head -c 2000000 /dev/zero > fill; }}; sleep 3141 & exec {{shootout}} target --port {{port}} --threads 1\"\n",
        filled = filled.display()
    );
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    // The first run's stderr and exit code go to files outside the tmpfs; then the disk is freed and the run resumed.
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs '{disk}' && cp '{dir}/suite.toml' '{disk}/' || exit 99
         '{shootout}' run '{disk}/suite.toml' --results '{disk}/results' 2> '{dir}/first.err' & echo $! > '{dir}/first.pid'
         wait $!; echo $? > '{dir}/first.code'
         rm -f '{disk}/fill'
         exec '{shootout}' run --resume '{disk}'/results/*",
        disk = disk.display(),
        dir = dir.display(),
        shootout = env!("CARGO_BIN_EXE_shootout"),
    );
    let output = Command::new("unshare").args(["-m", "sh", "-c", &script]).output().unwrap();
    if output.status.code() == Some(99) || String::from_utf8_lossy(&output.stderr).contains("unshare failed") {
        assert!(std::env::var_os("CI").is_none(), "under CI the full-disk test must run: {}", describe(&output));
        eprintln!("no mount namespace here (not root?): the full-disk test is skipped");
        return;
    }
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    assert_eq!(read("first.code").trim(), "1", "{}", read("first.err"));
    let stderr = read("first.err");
    // Saved as measured, or kept aside as disturbed (by the tests running beside this one) to be measured again.
    let unsaved = stderr.contains("cannot save a trial") || stderr.contains("cannot keep a trial");
    assert!(unsaved && stderr.contains("No space left on device"), "{stderr}");
    let runner: u32 = read("first.pid").trim().parse().unwrap();
    assert_eq!(cgroups_of(runner), Vec::<String>::new(), "no cgroup of the run is left");
    assert!(output.status.success(), "--resume finishes the suite once there is room: {}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("filler"), "{}", describe(&output));
    assert!(!running("sleep 3141"), "the server's tree was stopped");
}

#[test]
fn a_signal_while_a_server_sets_up_gets_ready_is_verified_or_warms_up_stops_at_once_and_blames_nobody() {
    // A setup that takes a minute, a server that never answers within its 60 s ready timeout, one whose verify
    // answer takes a minute (the probe waits 10 s), and a minute's start warm-up: SIGINT or SIGTERM a second and a
    // half in ends the run within seconds, says it was interrupted, marks no trial failed, and leaves nothing
    // running.
    let target = "sleep 3159 & exec {shootout} target --port {port} --threads 1";
    let verify = format!("command = \"{target}\"\nready = {{ path = \"/hello\" }}\npath = \"/delay/60000\"");
    let warmup = format!("command = \"{target}\"\nstart_warmup = \"60s\"\npath = \"/hello\"");
    let cases = [
        (
            "setup",
            "setup = \"sleep 3152\"\ncommand = \"{shootout} target --port {port} --threads 1\"".to_string(),
            Signal::SIGINT,
        ),
        ("ready", "command = \"sleep 3153\"\nready = { timeout = \"60s\" }".to_string(), Signal::SIGTERM),
        ("verify", verify, Signal::SIGINT),
        ("warm-up", warmup, Signal::SIGTERM),
    ];
    for (name, server, signal) in cases {
        let dir = workdir(&format!("interrupted-{name}"));
        let suite = format!("{QUICK}connections = [1]\n[[server]]\nname = \"slow\"\n{server}\n");
        std::fs::write(dir.join("suite.toml"), suite).unwrap();
        let child = start_run(&dir);
        std::thread::sleep(Duration::from_millis(1500));
        kill(Pid::from_raw(child.id() as i32), signal).unwrap();
        let signalled = Instant::now();
        let output = child.wait_with_output().unwrap();
        assert!(signalled.elapsed() < Duration::from_secs(5), "{name}: {:?}", signalled.elapsed());
        assert_eq!(output.status.code(), Some(128 + signal as i32), "{name}: {}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("interrupted") && !stderr.contains("not ready"), "{name}: {stderr}");
        assert!(files(&results(&dir), "failed").is_empty(), "{name}: no trial blamed on the server");
        assert!(!running("sleep 315[0-9]"), "{name}: nothing left running");
    }
}

/// A run whose standard error's reader went away (`shootout run … 2>&1 | head -1`, a closed terminal) panicked at
/// its first notice (exit 101, its results folder left without its report): it measures on, stores its results
/// and exits as it would have; and `load` prints its result.
#[test]
fn a_run_whose_stderr_reader_went_away_measures_on_and_stores_its_results() {
    let dir = workdir("stderr-gone");
    std::fs::create_dir_all(&dir).unwrap();
    let suite = format!(
        "{QUICK}connections = [1, 2]\n[load]\npath = \"/hello\"\n\
         [[server]]\nname = \"steady\"\ncommand = \"{{shootout}} target --port {{port}} --threads 1\"\n"
    );
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let mut run = shootout()
        .arg("run")
        .arg("suite.toml")
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(run.stderr.take());
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let results = results(&dir);
    assert_eq!(files(&results, "json").len(), 2, "both levels stored");
    assert!(results.join("report.html").exists(), "its report written");

    let target = crate::support::Target::start();
    let mut load = shootout()
        .args(["load", "--json", "-c", "2", "-n", "200", &target.url("/hello")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(load.stderr.take());
    let output = load.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.requests.ok, 200);
}
