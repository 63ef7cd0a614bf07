//! `shootout load --profile-pid`: a real profiler (perf, from Debian's `linux-perf`) attached to the built-in
//! target while it is loaded, its stacks folded and drawn; what it refuses before any load; and that an
//! interrupted load still writes its profile and leaves no profiler running.

use std::time::Duration;

use shootout_profile::Stacks;

use crate::support::{
    assert_valid, ctrl_c, describe, installed, left_with, marked, results, run_suite, shootout, workdir, Target,
};

#[test]
fn the_target_spinning_spends_most_of_its_samples_in_spin() {
    // /spin/500 burns 0.5 ms of CPU per request on the target's one thread; four users keep it busy, so nearly
    // every on-CPU sample of its process must have the spin function on its stack (98% when measured by hand).
    let dir = workdir("profile", "spin");
    let target = Target::start();
    let file = dir.join("spin.folded");
    let output = shootout()
        .args(["load", "-c", "4", "-d", "2s", "--warmup", "500ms", "--profiler", "perf"])
        .args(["--profile-pid", &target.pid().to_string(), "--profile-file", file.to_str().unwrap()])
        .arg(target.url("/spin/500"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("profile: perf on 1 process, "), "{stdout}");
    let stacks = Stacks::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // 99 samples a second of its CPU time: fewer when the tests beside this one take its CPU.
    assert!(stacks.samples() >= 20, "about 99 samples a second for 2 s: {}", stacks.samples());
    let spin = stacks.share_with(|frame| frame.ends_with("routes::spin"));
    assert!(spin >= 0.8, "spin on {:.0}% of the samples:\n{stdout}", 100.0 * spin);
    let hottest_line = stdout.lines().skip_while(|l| !l.starts_with("   self")).nth(1).unwrap_or_default();
    assert!(hottest_line.contains('%'), "the table lists frames: {stdout}");
    let svg = std::fs::read_to_string(dir.join("spin.svg")).unwrap();
    assert!(svg.contains("routes::spin") && svg.contains("samples"), "the flame graph draws spin");
    assert!(!dir.join("spin.perf.data").exists(), "perf's raw data is removed once folded");
}

#[test]
fn a_json_result_keeps_the_profile_beside_the_figures() {
    // With --json, stdout is the result alone: its `profile` holds the profiler, the files and the hottest
    // frames, valid against the schema; the table goes to stderr.
    let dir = workdir("profile", "json");
    let target = Target::start();
    let file = dir.join("spin.folded");
    let output = shootout()
        .args(["load", "-c", "2", "-d", "1500ms", "--warmup", "300ms", "--json", "--profiler", "perf"])
        .args(["--profile-pid", &target.pid().to_string(), "--profile-file", file.to_str().unwrap()])
        .arg(target.url("/spin/500"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("stdout is the JSON alone");
    assert_valid(&json);
    let profile = &json["profile"];
    assert_eq!(profile["profiler"], "perf");
    assert_eq!(profile["pids"][0], target.pid());
    assert_eq!(profile["file"], file.to_str().unwrap());
    assert!(profile["flame_graph"].as_str().unwrap().ends_with("spin.svg"));
    let stacks = Stacks::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(profile["samples"], stacks.samples(), "the samples of the file written");
    let spin = profile["hottest"].as_array().unwrap().iter().find(|f| f["name"].as_str().unwrap().ends_with("::spin"));
    assert!(spin.is_some_and(|f| f["total_share"].as_f64().unwrap() >= 0.8), "{profile}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("   self   total  frame"), "the table on stderr");
}

#[test]
fn a_process_not_running_or_an_unknown_profiler_is_refused_before_the_load() {
    let target = Target::start();
    let refused = |args: &[&str]| {
        let output = shootout().args(["load", "-d", "1s"]).args(args).arg(target.url("/")).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let gone = refused(&["--profile-pid", "999999999"]);
    assert!(gone.contains("--profile-pid 999999999: no process 999999999 is running"), "{gone}");
    let unknown = refused(&["--profile-pid", &target.pid().to_string(), "--profiler", "gprof"]);
    assert!(unknown.contains("'gprof'") && unknown.contains("perf, rbspy, py-spy, async-profiler"), "{unknown}");
    if async_profiler_installed() {
        // jcmd's SIGQUIT would end the target: async-profiler is refused for a process that is not a JVM.
        let not_jvm = refused(&["--profile-pid", &target.pid().to_string(), "--profiler", "async-profiler"]);
        assert!(not_jvm.contains("async-profiler reads JVMs, and no process of"), "{not_jvm}");
    }
    assert_eq!(target.served(), 0, "nothing was loaded");
}

/// Issue 50: `--profile-pid` of shootout's own ancestor profiled shootout itself without a word; a profiler that
/// could not attach was found only after the whole load; errors about `--profile-file` named `-o`.
#[test]
fn an_ancestor_a_profiler_that_cannot_attach_and_an_unwritable_file_are_refused_before_the_load() {
    let target = Target::start();
    let refused = |args: &[&str]| {
        let output = shootout().args(["load", "-d", "2s"]).args(args).arg(target.url("/")).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        stderr
    };
    // This test's process runs shootout: its tree holds shootout's own load.
    let me = std::process::id().to_string();
    let ancestor = refused(&["--profile-pid", &me]);
    assert!(
        ancestor.contains(&format!("--profile-pid {me}: it is this shootout or a process it runs under")),
        "{ancestor}"
    );
    let file = refused(&["--profile-pid", &target.pid().to_string(), "--profile-file", "/proc/no/such/file.folded"]);
    assert!(file.starts_with("shootout: --profile-file /proc/no/such/file.folded: cannot write there"), "{file}");
    // py-spy reads Python, and the target is not: it says so within its first second or two.
    if which("py-spy") {
        let started = std::time::Instant::now();
        let cannot = refused(&["--profile-pid", &target.pid().to_string(), "--profiler", "py-spy"]);
        assert!(cannot.contains("checked before the load, py-spy could not record"), "{cannot}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    } else {
        assert!(std::env::var_os("CI").is_none(), "CI installs py-spy (scripts/setup-examples.sh)");
    }
    assert_eq!(target.served(), 0, "nothing was loaded");
}

/// Whether `program` is on the PATH.
fn which(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Issue 50: a server that died during its profiled pass read "perf recorded no sample … no process of the tree
/// was on a CPU", and report.md said nothing.
#[test]
fn a_server_that_ends_during_its_profiled_pass_is_said_in_the_terminal_and_the_report() {
    let dir = workdir("profile", "ends");
    // The second start (the profiled pass, after the one measured trial) ends itself a second in.
    let suite = "name = \"ends\"\nrepeats = 1\nduration = \"500ms\"\nwarmup = \"100ms\"\nconnections = [2]\n\
        [profile]\nduration = \"4s\"\nprofiler = \"perf\"\n\
        [[server]]\nname = \"short-lived\"\n\
        command = \"n=$(cat starts 2>/dev/null || echo 0); echo $((n + 1)) > starts; \
        if [ $n -ge 1 ]; then (sleep 1; kill $$) & fi; exec {shootout} target --port {port} --threads 1\"\n";
    let output = run_suite(&dir, suite);
    let said = "short-lived: not profiled: the server ended during its profiled pass (killed by signal 15), so no \
                profile is kept";
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(said), "{}", describe(&output));
    let markdown = std::fs::read_to_string(results(&dir).join("report.md")).unwrap();
    assert!(
        markdown.contains("**short-lived**: not profiled: the server ended during its profiled pass"),
        "{markdown}"
    );
    let html = std::fs::read_to_string(results(&dir).join("report.html")).unwrap();
    assert!(html.contains(": not profiled: the server ended during its profiled pass"), "the HTML says it too");
}

#[test]
fn ctrl_c_during_a_profiled_load_keeps_the_profile_and_leaves_no_profiler() {
    let dir = workdir("profile", "ctrl-c");
    let target = Target::start();
    let file = dir.join("cut.folded");
    let mark = "profile-ctrl-c";
    let run = marked(mark)
        .args(["load", "-c", "2", "-d", "60s", "--json", "--profiler", "perf"])
        .args(["--profile-pid", &target.pid().to_string(), "--profile-file", file.to_str().unwrap()])
        .arg(target.url("/spin/200"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // After the profiler's check before the load (3 s) and 2 s of the load. What perf recorded is then unwound
    // and folded (perf script over DWARF stacks), which takes seconds on a machine busy with the other tests: the
    // bound tells a load that stopped from one that ran its 60 s.
    ctrl_c(run, Duration::from_secs(5), Duration::from_secs(30), false);
    let stacks = Stacks::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(stacks.samples() > 0, "what was recorded before Ctrl-C is kept");
    assert_eq!(left_with(mark), Vec::<String>::new(), "no profiler outlives the load");
}

#[test]
fn a_suite_profiles_each_server_after_its_trials_and_reports_where_its_cpu_went() {
    // Two target servers on one thread each: one spinning 0.5 ms a request, one answering hello. With no SLO or
    // search, each is profiled at its capacity's fallback (its knee, else its highest level), after its trials.
    let dir = workdir("profile", "suite");
    let suite = "name = \"profiled\"\nrepeats = 1\nduration = \"1s\"\nwarmup = \"300ms\"\nconnections = [1, 4]\n\
        [profile]\nduration = \"1500ms\"\nprofiler = \"perf\"\n\
        [[server]]\nname = \"spin\"\ncommand = \"{shootout} target --port {port} --threads 1\"\npath = \"/spin/500\"\n\
        [[server]]\nname = \"hello\"\ncommand = \"{shootout} target --port {port} --threads 1\"\npath = \"/hello\"\n";
    let output = run_suite(&dir, suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Where each server's CPU went"), "{stdout}");
    assert!(stdout.contains("against the unprofiled trials at this level"), "the profiler's cost is printed: {stdout}");
    let results = results(&dir);
    let profiles: Vec<String> = std::fs::read_dir(results.join("profiles"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".folded") && !n.ends_with(".offcpu.folded"))
        .collect();
    assert_eq!(profiles.len(), 2, "{profiles:?}");
    let spin_file = profiles.iter().find(|n| n.starts_with("spin-")).unwrap();
    let spin = Stacks::parse(&std::fs::read_to_string(results.join("profiles").join(spin_file)).unwrap()).unwrap();
    let share = spin.share_with(|frame| frame.ends_with("routes::spin"));
    assert!(share >= 0.8, "spin on {:.0}% of its samples", 100.0 * share);
    let markdown = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(markdown.contains("## Where each server's CPU went"), "{markdown}");
    for server in ["spin", "hello"] {
        assert!(markdown.contains(&format!("**{server}**: perf at ")), "{markdown}");
    }
    assert_eq!(markdown.matches("| self | total | frame |").count(), 2, "a table of frames per server");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert_eq!(html.matches("<iframe class=\"flame\" title=\"flame graph of ").count(), 2, "a flame graph per server");
    for server in ["spin", "hello"] {
        // Where its threads blocked: drawn, or why not (a server whose CPU was its limit is not recorded so).
        let blocked = format!("<h4>Where {server}'s threads blocked</h4>");
        assert!(html.contains(&blocked), "{server}: {html}");
    }
    assert!(html.contains("src=\"data:image/svg+xml;base64,"), "drawn into the page, nothing fetched");
    let analysis: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("analysis.json")).unwrap()).unwrap();
    assert_eq!(analysis["profiles"].as_array().map(Vec::len), Some(2), "{analysis}");
    let raw = std::fs::read_dir(results.join("profiles")).unwrap().map(|e| e.unwrap().file_name());
    let raw: Vec<_> = raw.filter(|n| n.to_string_lossy().ends_with(".perf.data")).collect();
    assert_eq!(raw, Vec::<std::ffi::OsString>::new(), "perf's raw data is removed once folded");
}

#[test]
fn a_profiler_that_is_missing_is_said_once_per_server_and_the_figures_stand() {
    // PATH holds a shell and nothing else: perf cannot be found, the trials run, and the run ends well.
    let dir = workdir("profile", "missing");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let _ = std::os::unix::fs::symlink("/bin/sh", bin.join("sh"));
    let suite = "name = \"unprofiled\"\nrepeats = 1\nduration = \"500ms\"\nwarmup = \"100ms\"\nconnections = [2]\n\
        [profile]\nprofiler = \"perf\"\nduration = \"1s\"\n\
        [[server]]\nname = \"target\"\ncommand = \"{shootout} target --port {port} --threads 1\"\n";
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let output = shootout().current_dir(&dir).env("PATH", &bin).args(["run", "suite.toml"]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("target: not profiled: perf is not installed (apt-get install linux-perf installs it)"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("target"), "the table is printed");
}

#[test]
fn a_python_servers_hot_function_is_its_hottest_frame_through_py_spy() {
    // A threaded Python HTTP server whose time goes to `burn` (tests/fixtures/hot-python): auto picks py-spy,
    // which samples the thread holding Python's lock, and `burn` (a frame per line: `burn (server.py:16)`) must be
    // where it ran most.
    if !installed(&["python3", "py-spy"]) {
        return;
    }
    let dir = workdir("profile", "python");
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hot-python/server.py");
    let suite = format!(
        "name = \"hot python\"\nrepeats = 1\nduration = \"1s\"\nwarmup = \"300ms\"\nconnections = [2]\n\
         [profile]\nduration = \"2s\"\n\
         [[server]]\nname = \"python\"\ncommand = \"python3 {} {{port}}\"\n",
        server.display()
    );
    let output = run_suite(&dir, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("python: py-spy at 2 users"), "{stdout}");
    let folded = std::fs::read_to_string(results(&dir).join("profiles/python-2.folded")).unwrap();
    let stacks = Stacks::parse(&folded).unwrap();
    let share = stacks.share_with(|frame| frame.starts_with("burn ("));
    assert!(share >= 0.5, "burn on {:.0}% of the samples:\n{stdout}", 100.0 * share);
}

#[test]
fn a_jvm_servers_hot_method_is_its_hottest_frame_through_async_profiler() {
    // The JDK's HTTP server whose time goes to `HotServer.burn` (tests/fixtures/hot-java), run from its source:
    // auto picks async-profiler for a JVM, loaded through jcmd, and `burn` must be where the JVM ran most (90% of
    // the samples when measured by hand; the rest is the JIT compiling and the JDK's server).
    if !installed(&["java", "jcmd"]) || !async_profiler_installed() {
        return;
    }
    let dir = workdir("profile", "jvm");
    let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hot-java");
    let suite = format!(
        "name = \"hot jvm\"\nrepeats = 1\nduration = \"1s\"\nwarmup = \"1s\"\nconnections = [2]\n\
         [profile]\nduration = \"2s\"\n\
         [[server]]\nname = \"jdk\"\ncwd = \"{}\"\n\
         command = \"java -Dsun.net.httpserver.nodelay=true HotServer.java {{port}}\"\n",
        app.display()
    );
    let output = run_suite(&dir, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("jdk: async-profiler at 2 users"), "{stdout}");
    let folded = std::fs::read_to_string(results(&dir).join("profiles/jdk-2.folded")).unwrap();
    let stacks = Stacks::parse(&folded).unwrap();
    let share = stacks.share_with(|frame| frame == "HotServer.burn");
    assert!(share >= 0.5, "burn on {:.0}% of the samples:\n{stdout}", 100.0 * share);
}

/// True when async-profiler's library is where shootout looks for it; outside CI, its test is skipped without.
fn async_profiler_installed() -> bool {
    let found = shootout_profile::record::async_profiler_library().is_some();
    assert!(found || std::env::var_os("CI").is_none(), "under CI scripts/setup-examples.sh installs async-profiler");
    found
}
