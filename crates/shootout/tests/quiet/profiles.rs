//! Profiles of a Ruby app under Puma's forked workers through rbspy (tests/fixtures/hot-rack, whose time goes to
//! `burn`): its hottest Ruby frame, and `compare` naming the method made twice as costly; and where a server held
//! by a lock waited, in its off-CPU profile. Each reads the shares of the samples, or the limit column, which
//! another test's work on the same CPUs would move.

use shootout_profile::Stacks;

use crate::alone;
use crate::support::{describe, installed, results, run_suite, shootout, workdir};

#[test]
fn a_ruby_apps_hot_method_is_the_hottest_ruby_frame_across_pumas_workers() {
    // Puma with two forked workers on a Rack app whose time goes to `burn` (tests/fixtures/hot-rack): auto picks
    // rbspy for Ruby, which follows the workers, and `burn`'s block must be the Ruby frame that ran the most.
    let _alone = alone();
    if !ruby_installed() {
        return;
    }
    let dir = workdir("profile", "ruby");
    let output = run_suite(&dir, &hot_suite(20_000));
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("puma -w 2: rbspy at 4 users"), "{stdout}");
    let profiles = results(&dir).join("profiles");
    let stacks = Stacks::parse(&std::fs::read_to_string(profiles.join("puma--w-2-4.folded")).unwrap()).unwrap();
    let ruby = stacks.hottest(usize::MAX).into_iter().find(|f| !f.name.starts_with("(unknown)")).unwrap();
    assert!(ruby.name.contains("burn"), "the hottest Ruby frame is {ruby:?}:\n{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(profiles.join("puma--w-2-4.json")).unwrap()).unwrap();
    assert!(json["command"].as_str().unwrap().contains("--subprocesses"), "the workers are followed: {json}");
}

#[test]
fn compare_shows_the_method_made_twice_as_costly_as_the_largest_growth() {
    // The same app, its hot method twice as costly in the second run: compare names `burn` first among the
    // frames whose share changed, and draws the differential flame graph beside the new profile.
    let _alone = alone();
    if !ruby_installed() {
        return;
    }
    let (old, new) = (workdir("profile", "compare-old"), workdir("profile", "compare-new"));
    for (dir, rounds) in [(&old, 10_000), (&new, 20_000)] {
        let output = run_suite(dir, &hot_suite(rounds));
        assert!(output.status.success(), "{}", describe(&output));
    }
    let output = shootout().arg("compare").arg(results(&old)).arg(results(&new)).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let changes: Vec<&str> =
        stdout.lines().skip_while(|l| !l.contains("the frames whose own time changed most")).collect();
    let first = changes.get(1).copied().unwrap_or_default();
    assert!(
        first.contains("burn") && first.trim_start().starts_with('+'),
        "the largest change is {first:?}:\n{stdout}"
    );
    let svg = std::fs::read_to_string(results(&new).join("profiles/puma--w-2-4.diff.svg")).unwrap();
    assert!(svg.contains("burn") && svg.contains("rgb(255,"), "burn drawn in red, grown");
}

#[test]
fn a_server_held_by_a_lock_has_an_off_cpu_flame_graph_whose_widest_wait_is_the_lock() {
    // limited-server's lock: each request holds one lock 5 ms asleep, eight users. The limit column says a lock;
    // the profiled pass records where its threads blocked, and most of that time was on the lock's futex (seven
    // threads of eight waited there while one slept holding it).
    let _alone = alone();
    if !installed(&["perf"]) {
        return;
    }
    let dir = workdir("profile", "off-cpu");
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/limited-server");
    let suite = format!(
        "name = \"lock\"\nrepeats = 1\nduration = \"1500ms\"\nwarmup = \"300ms\"\nconnections = [8]\n\
         client_cpus = \"0\"\n[profile]\nduration = \"2s\"\nprofiler = \"perf\"\n\
         [[server]]\nname = \"lock\"\ncommand = \"{} lock --port {{port}}\"\ncpus = \"1\"\n",
        server.display()
    );
    let output = run_suite(&dir, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("a lock: threads waited on one another"), "{stdout}");
    assert!(stdout.contains("its threads blocked "), "{stdout}");
    let folded = std::fs::read_to_string(results(&dir).join("profiles/lock-8.offcpu.folded")).unwrap();
    let blocked = Stacks::parse(&folded).unwrap();
    let on_futex = blocked.share_with(|frame| frame == "futex_wait_[k]");
    assert!(on_futex >= 0.5, "{:.0}% of the time blocked was on a futex:\n{folded}", 100.0 * on_futex);
    let html = std::fs::read_to_string(results(&dir).join("report.html")).unwrap();
    assert!(html.contains("<iframe class=\"flame\" title=\"off-CPU flame graph of lock\""), "in report.html");
    // A second run, compared with the first: where its threads blocked, per response, side by side.
    let again = workdir("profile", "off-cpu-again");
    let output = run_suite(&again, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let output = shootout().arg("compare").arg(results(&dir)).arg(results(&again)).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("  its threads blocked "), "{stdout}");
    let blocked = std::fs::read_to_string(results(&again).join("profiles/lock-8.offcpu.diff.svg")).unwrap();
    assert!(blocked.contains(" µs, "), "its frames count µs blocked");
}

/// A suite of Puma with two workers on the hot Rack app, `rounds` square roots a request, profiled for 2 s.
fn hot_suite(rounds: u32) -> String {
    let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hot-rack");
    format!(
        "name = \"hot\"\nrepeats = 1\nduration = \"1s\"\nwarmup = \"500ms\"\nconnections = [4]\n\
         [profile]\nduration = \"2s\"\n\
         [[server]]\nname = \"puma -w 2\"\ncwd = \"{}\"\nenv = {{ HOT_ROUNDS = \"{rounds}\" }}\n\
         command = \"puma -b tcp://127.0.0.1:{{port}} -w 2 -t 2:2 config.ru\"\nstop = {{ signal = \"INT\", grace = \"10s\" }}\n",
        app.display()
    )
}

/// True when Puma and rbspy are installed.
fn ruby_installed() -> bool {
    installed(&["puma", "rbspy"])
}
