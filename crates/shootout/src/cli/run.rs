//! `shootout run SUITE.toml`: runs a suite with one progress bar for the whole of it (a spinner for a suite's
//! capacity search, whose length is not known ahead), then prints the comparison. `--full` takes the suite's long
//! sweep (its `[full]` table), `--smoke` a two-level check that every server runs; `--resume DIR` finishes an
//! interrupted run in its own results directory, with the sweep (or search) it was started with. With a
//! `[profile]` table or `--profile`, each server is then profiled once more at the level its trials point to.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{HumanDuration, ProgressBar, ProgressState, ProgressStyle};
use shootout_harness::place::Places;
use shootout_harness::profiles::pass::{run_profiles, Profiled};
use shootout_harness::run::runner::{run_suite, Event, Outcome};
use shootout_harness::run::search::run_search;
use shootout_harness::store::Store;
use shootout_model::profile::ProfileSpec;
use shootout_model::run::TrialRecord;
use shootout_report::export::text::trial_line;
use shootout_report::export::{Exporter, Text};
use shootout_report::suite::profiles::level_to_profile;
use shootout_suite::{Levels, Place, Suite, Sweep};

use super::oneline::OneLine;
use super::Failure;

/// Options of `shootout run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The suite file (TOML; every key: docs/reference/suite.md); or, without one, servers given by --server.
    suite: Option<PathBuf>,
    /// A suite made of flags instead of a file: --server NAME=COMMAND, twice or more, and its levels.
    #[command(flatten)]
    oneline: OneLine,
    /// Where results directories are made.
    #[arg(long, value_name = "DIR", default_value = "results")]
    results: PathBuf,
    /// Finish an interrupted run: the trials already in DIR are kept, the rest are run.
    #[arg(long, value_name = "DIR", conflicts_with = "suite")]
    resume: Option<PathBuf>,
    /// Run the suite's long sweep, its [full] table (the classic levels, durations and repeats).
    #[arg(long, conflicts_with_all = ["smoke", "resume"])]
    full: bool,
    /// Check that every server runs: the first and last level only, once, 1 s each (2 s at an arrival rate).
    #[arg(long, conflicts_with = "resume")]
    smoke: bool,
    /// Profile each server after its measured trials, as the suite's [profile] table says, or without one at its
    /// capacity for 10 s with the profiler that suits it (see docs/guide/profiles.md).
    #[arg(long, conflicts_with = "resume")]
    profile: bool,
}

/// Runs the suite.
pub fn run(args: RunArgs) -> Result<(), Failure> {
    // What the suite's hooks leave running is stopped however this ends.
    let _end = shootout_harness::process::live::EndOfRun;
    if args.suite.is_none() && args.resume.is_none() && args.oneline.servers.is_empty() {
        return Err(Failure::Usage(
            "run what? give a suite file (shootout run SUITE.toml; see examples/), or servers on the command line \
             (shootout run --server NAME=COMMAND --server NAME=COMMAND, {port} in each command)"
                .into(),
        ));
    }
    // The hosts of a suite are reached before its results directory is made: an unreachable one leaves nothing.
    let connect = |suite: &Suite| Places::for_suite(suite).map_err(|e| Failure::Run(anyhow::anyhow!(e)));
    let (suite, store, places) = match (&args.suite, &args.resume) {
        (_, Some(dir)) => {
            let refused = |why: String| Failure::Usage(format!("--resume {}: {why}", dir.display()));
            let store = Store::resume(dir).map_err(refused)?;
            let text = |name: &str| store.text(name).map_err(refused);
            let home = text("suite-dir")?.unwrap_or_else(|| ".".into());
            let sweep = Sweep::from_name(&text("sweep")?.unwrap_or_default());
            let profile = dir.join("profile").exists();
            let label = dir.join("suite.toml").display().to_string();
            let suite =
                suite_of(&text("suite.toml")?.unwrap_or_default(), &label, Path::new(home.trim()), sweep, profile)?;
            if let Some(why) = store.not_of(&suite) {
                return Err(Failure::Usage(format!(
                    "--resume {}: {why}; put back the suite.toml the run was started with, or start a new run",
                    dir.display()
                )));
            }
            let places = connect(&suite)?;
            (suite, store, places)
        }
        (path, None) => {
            // A suite file is read from its folder; a suite of flags from where the command was typed.
            let (text, label, home) = match path {
                Some(path) => {
                    let text = suite_text(path)?;
                    let home = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                    (text, path.display().to_string(), home.to_path_buf())
                }
                None => {
                    let typed: Vec<String> = std::env::args().collect();
                    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
                    (args.oneline.suite(&typed, &here)?, "the suite of the --server flags".to_string(), here)
                }
            };
            let home = std::fs::canonicalize(&home).unwrap_or(home);
            let sweep = match (args.full, args.smoke) {
                (true, _) => Sweep::Full,
                (_, true) => Sweep::Smoke,
                _ => Sweep::Short,
            };
            let suite = suite_of(&text, &label, &home, sweep, args.profile)?;
            let places = connect(&suite)?;
            let store = Store::create(&args.results, &suite.name).map_err(|e| {
                Failure::Usage(format!("--results {}: cannot make a results directory ({e})", args.results.display()))
            })?;
            store
                .write_suite(text.as_bytes())
                .and_then(|()| store.write("suite-dir", home.display().to_string().as_bytes()))
                .and_then(|()| store.write("sweep", sweep.name().as_bytes()))
                .and_then(|()| if args.profile { store.write("profile", b"--profile") } else { Ok(()) })
                .map_err(|e| Failure::Run(e.into()))?;
            (suite, store, places)
        }
    };

    // What runs killed without a word left on this machine goes first, so that it takes no port or CPU from this one.
    let mut reaped = shootout_harness::process::reap::reap_dead_runs(shootout_engine::cgroups::v2_mount().as_deref());
    if suite.places().any(|p| p.container().is_some()) {
        reaped.extend(shootout_harness::place::container::reap_dead_containers());
    }
    if !reaped.is_empty() {
        tell!("shootout: reaped what earlier runs that died left behind: {}", reaped.join("; "));
    }
    let stop = Arc::new(AtomicBool::new(false));
    places.stop_with(&stop);
    // A second signal leaves at once, and the servers' trees and cgroups go with it; what was saved stays.
    let dir = store.dir.clone();
    super::signals::watch(stop.clone(), move || {
        shootout_harness::process::live::kill_all();
        tell!(
            "shootout: interrupted again: every server was killed; finish it with: shootout run --resume {}",
            dir.display()
        );
    });
    tell!("results: {}", store.dir.display());
    tell!("{}", plan(&suite));
    let outcome = match suite.search {
        Some(_) => search(&suite, &places, store, stop.clone()),
        None => sweep(&suite, &places, store, stop.clone()),
    };
    let mut outcome = outcome.map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
    if let Some(spec) = suite.profile.filter(|_| !outcome.interrupted && outcome.stopped.is_none()) {
        let profiled = profile(&suite, spec, &places, &outcome.store, &stop);
        // A server that could not be profiled is said, and its figures stand.
        profiled.skipped.iter().for_each(|why| tell!("shootout: {why}"));
        outcome.interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
        outcome.stopped = profiled.stopped;
    }
    let unreported = match super::report::suite(&outcome.store.dir, None) {
        Ok(written) => {
            say_raw!("{}", Text.export(&written.summary));
            say!("\nResults: {}\nReport:  {}", outcome.store.dir.display(), written.files[0].display());
            None
        }
        Err(e) => {
            say!("Results: {}", outcome.store.dir.display());
            Some(e)
        }
    };
    if outcome.interrupted {
        tell!("shootout: interrupted; finish it with: shootout run --resume {}", outcome.store.dir.display());
        return Err(Failure::Interrupted);
    }
    if let Some(why) = &outcome.stopped {
        return Err(Failure::Run(anyhow::anyhow!(
            "{why}\nthe suite stopped there; the trials measured before are kept: once it is fixed, finish it with: shootout run --resume {}",
            outcome.store.dir.display()
        )));
    }
    if !outcome.failures.is_empty() {
        let what = match (suite.search.is_some(), outcome.failed) {
            (true, 1) => "1 search was cut short".to_string(),
            (true, n) => format!("{n} searches were cut short"),
            (false, 1) => "1 trial could not be measured".to_string(),
            (false, n) => format!("{n} trials could not be measured"),
        };
        return Err(Failure::Run(anyhow::anyhow!("{what}:\n  {}", outcome.failures.join("\n  "))));
    }
    // The trials are saved, but a run that wrote no report has not done its work.
    match unreported {
        Some(e) => Err(Failure::Run(anyhow::anyhow!(
            "the trials are saved in {}, but its analysis and report could not be written: {}",
            outcome.store.dir.display(),
            e.message()
        ))),
        None => Ok(()),
    }
}

/// Where the run's parts run, said before its first trial: the client's CPUs, and each server's and service's
/// (`plan: the client on CPU 0; puma, unicorn on CPU 1`), so that a pool of two workers given one CPU is seen
/// before it is measured, not found in the report.
fn plan(suite: &Suite) -> String {
    let cpus = |list: Option<&str>| match list {
        None => "every CPU".to_string(),
        Some(list) if list.contains([',', '-']) => format!("CPUs {list}"),
        Some(list) => format!("CPU {list}"),
    };
    let client = match &suite.agents {
        Some(_) => "the load from its agents".to_string(),
        None => format!("the client on {}", cpus(suite.client_cpus.as_deref())),
    };
    let servers = suite.servers.iter().map(|s| (s.name.as_str(), s.cpus.as_deref(), &s.place));
    let services = suite.services.iter().map(|s| (s.name.as_str(), s.cpus.as_deref(), &s.place));
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, list, place) in servers.chain(services) {
        let at = match place {
            Place::Here => format!("on {}", cpus(list)),
            Place::Ssh { target } => match list {
                Some(_) => format!("on {target}, {}", cpus(list)),
                None => format!("on {target}"),
            },
            Place::Container(_) => format!("in a container on {}", cpus(list)),
        };
        match groups.iter_mut().find(|(other, _)| *other == at) {
            Some((_, names)) => names.push(name),
            None => groups.push((at, vec![name])),
        }
    }
    let groups: Vec<String> = groups.iter().map(|(at, names)| format!("{} {at}", names.join(", "))).collect();
    format!("plan: {client}; {}", groups.join("; "))
}

/// Runs the suite's sweep with one progress bar for the whole of it.
fn sweep(suite: &Suite, places: &Places, store: Store, stop: Arc<AtomicBool>) -> Result<Outcome, String> {
    // A trial that ends on a count of requests has no known length: the bar then moves a trial at a time. Each
    // server's start warm-up is added once per repeat.
    let trial_ms = if suite.requests.is_some() { 1 } else { (suite.warmup + suite.duration).as_millis() as u64 };
    let levels = suite.levels.values().len() as u64;
    let per_repeat: u64 = suite.servers.iter().map(|s| levels * trial_ms + s.start_warmup.as_millis() as u64).sum();
    let bar = ProgressBar::new(u64::from(suite.repeats) * per_repeat);
    let pace = Pace::default();
    let shown = pace.clone();
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} ETA {left} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("left", move |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                let left = shown.left(state.pos(), state.len().unwrap_or(0));
                let _ = write!(out, "{}", left.map_or_else(|| "…".to_string(), |d| HumanDuration(d).to_string()));
            }),
    );
    // Where the running trial or warm-up starts on the bar, how long it is, and the start warm-ups begun so far;
    // the running trial's place among all of them.
    let (mut base, mut span, mut warmed) = (0, trial_ms, 0);
    let (mut trial, mut trials) = (0, 0);
    let unit = suite.unit();
    let outcome = run_suite(suite, places, store, stop, &mut |event| match event {
        Event::Trial { server, level, repeat, done, total } => {
            (base, span) = (done as u64 * trial_ms + warmed, trial_ms);
            (trial, trials) = (done + 1, total);
            bar.set_position(base);
            pace.start(base);
            bar.set_message(format!("{server} at {}, repeat {repeat}", shootout_report::units::level(level, unit)));
        }
        Event::StartWarmup { server, repeat, duration, done } => {
            (base, span) = (done as u64 * trial_ms + warmed, duration.as_millis() as u64);
            warmed += span;
            bar.set_position(base);
            pace.start(base);
            tell(&bar, format!("{server}: start warm-up {duration:?}, repeat {repeat}"));
        }
        Event::Measured(record) => plain(
            &bar,
            format!(
                "trial {trial}/{trials}: {}; {} elapsed, about {} left",
                trial_line(&record, unit),
                HumanDuration(bar.elapsed()),
                pace.left(bar.position(), bar.length().unwrap_or(0))
                    .map_or_else(|| "…".into(), |d| HumanDuration(d).to_string())
            ),
        ),
        Event::Load(p) => bar.set_position(base + (p.elapsed.as_millis() as u64).min(span)),
        Event::Probe { .. } | Event::Profile { .. } => {}
        Event::Notice(text) => bar.suspend(|| tell!("shootout: {text}")),
    });
    bar.finish_and_clear();
    outcome
}

/// The time a sweep has left, from the pace of this run's own work since its first trial or warm-up began: the
/// trials a resumed run found saved are neither work done now nor work left, so they do not speed up its estimate
/// (which then grew through the run: 8, 15, 24 … 56 s).
#[derive(Debug, Clone, Default)]
struct Pace(Arc<Mutex<Option<(Instant, u64)>>>);

impl Pace {
    /// Marks where this run's work began on the bar, once.
    fn start(&self, position: u64) {
        let mut began = self.0.lock().unwrap_or_else(|e| e.into_inner());
        began.get_or_insert((Instant::now(), position));
    }

    /// The time left at `position` of `length`: the work left at the pace of the work done since the start; none
    /// before any was done.
    fn left(&self, position: u64, length: u64) -> Option<Duration> {
        self.left_at(Instant::now(), position, length)
    }

    fn left_at(&self, now: Instant, position: u64, length: u64) -> Option<Duration> {
        let (since, from) = (*self.0.lock().unwrap_or_else(|e| e.into_inner()))?;
        let done = position.checked_sub(from).filter(|&d| d > 0)?;
        Some(now.saturating_duration_since(since).mul_f64(length.saturating_sub(position) as f64 / done as f64))
    }
}

/// Runs the suite's capacity search: its length is not known ahead, so a spinner says which server, probe and
/// level it is at.
fn search(suite: &Suite, places: &Places, store: Store, stop: Arc<AtomicBool>) -> Result<Outcome, String> {
    let bar = spinner();
    let (unit, servers) = (suite.unit(), suite.servers.len());
    let precision = suite.search.map_or(0.0, |s| s.precision);
    let judge = |trials: &[TrialRecord]| {
        shootout_report::analysis::judge::judge_probe(trials, &suite.slo, suite.statistic, precision)
    };
    let outcome = run_search(suite, places, store, stop, &judge, &mut |event| match event {
        Event::Probe { server, level, repeat, probe, servers_done } => bar.set_message(format!(
            "server {}/{servers}, {server}: probe {} at {}, repeat {repeat}",
            servers_done + 1,
            probe + 1,
            shootout_report::units::level(level, unit)
        )),
        Event::StartWarmup { server, duration, .. } => tell(&bar, format!("{server}: start warm-up {duration:?}")),
        Event::Measured(record) => {
            plain(&bar, format!("probe: {}; {} elapsed", trial_line(&record, unit), HumanDuration(bar.elapsed())))
        }
        Event::Notice(text) => bar.suspend(|| tell!("shootout: {text}")),
        Event::Trial { .. } | Event::Load(_) | Event::Profile { .. } => {}
    });
    bar.finish_and_clear();
    outcome
}

/// Profiles each server at the level its measured trials point to (`spec.at`), with a spinner; the levels come
/// from the summary of what was measured.
fn profile(suite: &Suite, spec: ProfileSpec, places: &Places, store: &Store, stop: &Arc<AtomicBool>) -> Profiled {
    let summary = match super::report::summary(&store.dir) {
        Ok(summary) => summary,
        Err(e) => return Profiled { skipped: vec![format!("every server: {}", e.message())], stopped: None },
    };
    let levels: Vec<(String, f64)> = suite
        .servers
        .iter()
        .filter_map(|s| Some((s.name.clone(), level_to_profile(&summary, &s.name, spec.at)?)))
        .collect();
    let bar = spinner();
    let unit = suite.unit();
    let profiled = run_profiles(suite, spec, places, store, &levels, stop, &mut |event| match event {
        Event::Profile { server, level, profiler } => tell(
            &bar,
            format!(
                "{server}: profiled by {profiler} at {} for {:?}",
                shootout_report::units::level(level, unit),
                spec.duration
            ),
        ),
        Event::StartWarmup { server, duration, .. } => tell(&bar, format!("{server}: start warm-up {duration:?}")),
        Event::Notice(text) => bar.suspend(|| tell!("shootout: {text}")),
        Event::Trial { .. } | Event::Probe { .. } | Event::Load(_) | Event::Measured(_) => {}
    });
    bar.finish_and_clear();
    profiled
}

/// Says `text` on the bar, and, where the bar is not drawn (stderr is not a terminal: a CI log), on a line of its
/// own, so that a log shows where a long run is.
fn tell(bar: &ProgressBar, text: String) {
    plain(bar, text.clone());
    bar.set_message(text);
}

/// Prints `text` on a line of its own where the bar is not drawn.
fn plain(bar: &ProgressBar, text: String) {
    if bar.is_hidden() {
        tell!("shootout: {text}");
    }
}

/// A spinner for work whose length is not known ahead (a search, the profiled passes), its message saying where
/// it is.
fn spinner() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// The text of a suite file, or one line naming it.
fn suite_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("{}: cannot read the suite ({e}); check the path", path.display())))
}

/// The suite of a file's `text` (`label` names it in errors), its relative paths from `home`, checked with what
/// only this machine can tell: whether it may open the connections of its highest level (the open model's limit of
/// connections, in the open model). With `profile` (`--profile`), a suite without a `[profile]` table gets the
/// defaults.
fn suite_of(text: &str, label: &str, home: &Path, sweep: Sweep, profile: bool) -> Result<Suite, Failure> {
    let mut suite = shootout_suite::parse_sweep(text, label, home, sweep).map_err(|e| Failure::Usage(e.to_string()))?;
    let connections = match (&suite.levels, suite.search) {
        _ if suite.agents.is_some() => 0, // each agent opens its share, where it runs
        (Levels::Connections(_), Some(search)) => search.ceiling as u64,
        (Levels::Connections(levels), None) => levels.iter().copied().max().map_or(0, u64::from),
        (Levels::Rates(_), _) => u64::from(shootout_model::settings::DEFAULT_MAX_CONNECTIONS),
    };
    shootout_engine::open_files::ensure(connections).map_err(|e| Failure::Usage(format!("{label}: {e}")))?;
    if profile {
        suite.profile = suite.profile.or(Some(sweep.profile(ProfileSpec::default())));
    }
    Ok(suite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_says_where_the_client_and_each_server_run() {
        let text = "name = \"n\"\nclient_cpus = \"0\"\nconnections = [1]\n[load]\npath = \"/\"\n\
                    [[server]]\nname = \"a\"\ncommand = \"a {port}\"\ncpus = \"1\"\n\
                    [[server]]\nname = \"b\"\ncommand = \"b {port}\"\ncpus = \"1\"\n\
                    [[server]]\nname = \"c\"\ncommand = \"c {port}\"\ncpus = \"0-1\"\n";
        let suite = shootout_suite::parse(text, "suite.toml", &std::env::temp_dir()).unwrap();
        assert_eq!(plan(&suite), "plan: the client on CPU 0; a, b on CPU 1; c on CPUs 0-1");
    }

    /// Issue 47: after `--resume`, the time left grew (8, 15, 24 … 56 s) as the saved trials' jump wore off.
    #[test]
    fn the_time_left_counts_only_this_runs_work() {
        let pace = Pace::default();
        assert_eq!(pace.left(500, 1000), None, "nothing begun");
        pace.start(600); // a resumed run: 600 of 1000 saved before it
        pace.start(700); // later trials do not move where it began
        let began = pace.0.lock().unwrap().unwrap().0;
        assert_eq!(pace.left_at(began, 600, 1000), None, "nothing done yet");
        let left = |seconds: u64, at: u64| pace.left_at(began + Duration::from_secs(seconds), at, 1000).unwrap();
        assert_eq!(left(10, 700), Duration::from_secs(30), "100 in 10 s, 300 to go");
        assert_eq!(left(20, 800), Duration::from_secs(20), "the same pace, the estimate falls");
    }
}
