//! Profiles of a Ruby app under Puma's forked workers through rbspy (tests/fixtures/hot-rack, whose time goes to
//! `burn`): its hottest Ruby frame, and `compare` naming the method made twice as costly. Each reads the shares of
//! the samples, which another test's work on the same CPUs would move.

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
