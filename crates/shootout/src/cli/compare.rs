//! `shootout compare OLD NEW`: old results against new, for every server and level of either run, with a verdict
//! (for two searches, each server's capacity); runs that did not measure the same thing (model, request, levels)
//! are refused unless `--force`; exit code 3 when a regression passes `--max-regression` or something measured
//! before is missing, so a CI job can gate on it. Servers profiled in both runs get the frames whose own CPU
//! time per response changed most and a differential flame graph.

use std::path::{Path, PathBuf};

use clap::Args;
use shootout_harness::store::{write_atomically, Store};
use shootout_model::profile::ServerProfile;
use shootout_model::run::TrialRecord;
use shootout_model::search::ServerSearch;
use shootout_model::LoadResult;
use shootout_profile::diff::{self, Costed};
use shootout_profile::Stacks;
use shootout_report::analysis::capacity::compare_capacities;
use shootout_report::compare::matching::{difference, Shape};
use shootout_report::compare::{compare_results, compare_trials, Change, Verdict};
use shootout_report::statistics::bound::side;
use shootout_report::units::ms;

use super::{percent_arg, Failure};

/// Frames listed per server profiled in both runs.
const CHANGED_FRAMES: usize = 8;

/// Options of `shootout compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a results directory of `shootout run`, or a `shootout load` JSON file.
    old: PathBuf,
    /// The candidate, of the same kind.
    new: PathBuf,
    /// Fail (exit code 3) when any server and level regressed by more than this, e.g. 5%, or is missing from NEW.
    #[arg(long, value_name = "PERCENT", value_parser = percent_arg)]
    max_regression: Option<f64>,
    /// The noise floor: a change is improved or regressed only when its whole 95% interval is beyond it.
    #[arg(long, value_name = "PERCENT", value_parser = percent_arg, default_value = "2%")]
    noise: f64,
    /// Compare runs whose load model, request or levels differ (refused otherwise).
    #[arg(long)]
    force: bool,
}

/// Compares and prints.
pub fn run(args: CompareArgs) -> Result<(), Failure> {
    for (name, path) in [("OLD", &args.old), ("NEW", &args.new)] {
        if !path.exists() {
            return Err(Failure::Usage(format!("{name}: not found: {}", path.display())));
        }
    }
    let (changes, shapes) = match (args.old.is_dir(), args.new.is_dir()) {
        (true, true) => {
            let (old, new) = (suite_run(&args.old)?, suite_run(&args.new)?);
            match (searches(&args.old)?, searches(&args.new)?) {
                (old_searches, new_searches) if !old_searches.is_empty() && !new_searches.is_empty() => {
                    let gate = capacities(&args, (&old_searches, &new_searches), (old.1, new.1));
                    profiles(&args.old, &args.new)?;
                    return gate;
                }
                (old_searches, new_searches) if old_searches.is_empty() != new_searches.is_empty() => {
                    let (searched, swept) = if old_searches.is_empty() { ("NEW", "OLD") } else { ("OLD", "NEW") };
                    return Err(Failure::Usage(format!(
                        "{searched} searched for each server's capacity and {swept} swept levels: compare two searches, or two sweeps"
                    )));
                }
                _ => (compare_trials(&old.0, &new.0, args.noise), (old.1, new.1)),
            }
        }
        (false, false) => {
            let (old, new) = (result(&args.old)?, result(&args.new)?);
            (vec![compare_results(&old, &new, args.noise)], (Shape::of_result(&old), Shape::of_result(&new)))
        }
        _ => {
            return Err(Failure::Usage(
                "compare two results directories, or two load JSON files, not one of each".into(),
            ))
        }
    };
    if let (Some(differs), false) = (difference(&shapes.0, &shapes.1), args.force) {
        return Err(Failure::Usage(format!(
            "{} and {} do not measure the same thing: {differs}; --force compares them anyway",
            args.old.display(),
            args.new.display()
        )));
    }
    if changes.is_empty() {
        return Err(Failure::Usage(format!(
            "{} and {} hold no trials: compare runs that measured something",
            args.old.display(),
            args.new.display()
        )));
    }
    print(&changes);
    if args.old.is_dir() {
        profiles(&args.old, &args.new)?;
    }
    if let Some(limit) = args.max_regression {
        let failed: Vec<&Change> = changes
            .iter()
            .filter(|c| {
                c.verdict.fails_the_gate()
                    || (c.verdict == Verdict::Regressed
                        && c.disturbed.is_empty()
                        && c.ratio.is_some_and(|r| side(r, 1.0 - limit).is_lt()))
            })
            .collect();
        if !failed.is_empty() {
            let names: Vec<String> =
                failed.iter().map(|c| format!("{} at {} ({})", c.server, c.level, c.verdict_text())).collect();
            return Err(Failure::Threshold(format!(
                "regression beyond --max-regression {:.1}%: {}",
                limit * 100.0,
                names.join(", ")
            )));
        }
        // A change that rests on a disturbed trial is no verdict on the server: neither a pass nor a regression.
        let disturbed: Vec<String> = changes
            .iter()
            .filter(|c| !c.disturbed.is_empty() && !c.verdict.fails_the_gate())
            .map(|c| format!("{} at {} (disturbed: {})", c.server, c.level, c.disturbed.join("; ")))
            .collect();
        if !disturbed.is_empty() {
            return Err(Failure::Unjudged(format!(
                "--max-regression could not judge {} of {}: {}; run them again on a quieter machine",
                disturbed.len(),
                changes.len(),
                disturbed.join(", ")
            )));
        }
        let unjudged: Vec<String> = changes
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::TooFew | Verdict::NoInterval))
            .map(|c| format!("{} at {} ({})", c.server, c.level, c.verdict_text()))
            .collect();
        if !unjudged.is_empty() {
            return Err(Failure::Unjudged(format!(
                "--max-regression could not judge {} of {}: {}; give each side at least {} repeats (a load result: \
                 whole seconds) that served something",
                unjudged.len(),
                changes.len(),
                unjudged.join(", "),
                shootout_report::statistics::interval::FEWEST
            )));
        }
    }
    Ok(())
}

/// Two searches: each server's capacity, old against new, with a verdict from their brackets; `--max-regression`
/// fails on a capacity that regressed by more than it, or is missing.
fn capacities(
    args: &CompareArgs,
    (old, new): (&[ServerSearch], &[ServerSearch]),
    (mut old_shape, mut new_shape): (Shape, Shape),
) -> Result<(), Failure> {
    // A search chooses its own levels: only the model and the requests must match.
    (old_shape.levels, new_shape.levels) = (Vec::new(), Vec::new());
    if let (Some(differs), false) = (difference(&old_shape, &new_shape), args.force) {
        return Err(Failure::Usage(format!(
            "{} and {} do not measure the same thing: {differs}; --force compares them anyway",
            args.old.display(),
            args.new.display()
        )));
    }
    let changes = compare_capacities(old, new);
    let unit = new_shape.unit;
    let bracket = |side: Option<(Option<f64>, Option<f64>)>| match side {
        None => "—".to_string(),
        Some((met, broke)) => {
            let figure = |l: Option<f64>| l.map_or("none".to_string(), |l| l.to_string());
            format!("{} [breaks at {}]", figure(met), figure(broke))
        }
    };
    say!("{:<24} {:>28} {:>28} {:>9}  verdict", "server", format!("old capacity ({unit})"), "new capacity", "change");
    for c in &changes {
        let change = c.ratio.map_or("—".to_string(), |r| format!("{:+.1}%", (r - 1.0) * 100.0));
        let verdict = match c.verdict {
            Verdict::WithinNoise => "within the searches' precision",
            Verdict::Improved => "improved (met where OLD broke)",
            Verdict::Regressed => "regressed (broke where OLD met)",
            Verdict::Missing => "missing",
            _ => "new",
        };
        say!("{:<24} {:>28} {:>28} {:>9}  {verdict}", c.server, bracket(c.old), bracket(c.new), change);
    }
    if let Some(limit) = args.max_regression {
        let failed: Vec<String> = changes
            .iter()
            .filter(|c| {
                c.verdict.fails_the_gate()
                    || (c.verdict == Verdict::Regressed && c.ratio.is_none_or(|r| side(r, 1.0 - limit).is_lt()))
            })
            .map(|c| c.server.clone())
            .collect();
        if !failed.is_empty() {
            return Err(Failure::Threshold(format!(
                "capacity regressed beyond --max-regression {:.1}%: {}",
                limit * 100.0,
                failed.join(", ")
            )));
        }
    }
    Ok(())
}

/// Each server profiled in both runs: the frames whose own CPU time per response changed most, and a differential
/// flame graph written beside NEW's profile (`profiles/SERVER-LEVEL.diff.svg`: red grew, blue shrank), so that a
/// regression comes with where; and, where both recorded where their threads blocked, the time blocked per
/// response and its differential flame graph (`profiles/SERVER-LEVEL.offcpu.diff.svg`).
fn profiles(old: &Path, new: &Path) -> Result<(), Failure> {
    let open = |dir: &Path| {
        let store = Store::open(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
        let profiles = store.profiles().map_err(|e| Failure::Usage(e.to_string()))?;
        Ok::<_, Failure>((store, profiles))
    };
    let ((old_store, before), (store, after)) = (open(old)?, open(new)?);
    let stacks = |folded: &str, dir: &Path| {
        Stacks::parse(folded).map_err(|e| Failure::Usage(format!("{}: a profile is damaged: {e}", dir.display())))
    };
    for (profile, folded) in &after {
        let Some((old_profile, old_folded)) = before.iter().find(|(p, _)| p.server == profile.server) else {
            continue;
        };
        let (was, is) = (stacks(old_folded, old)?, stacks(folded, new)?);
        if was.is_empty() || is.is_empty() {
            say!("\n{}: no on-CPU sample in one of the profiles: its threads were barely on a CPU", profile.server);
        } else {
            let was = Costed { stacks: &was, cpu_us: old_profile.trial.usage.cpu_us_per_request };
            let is = Costed { stacks: &is, cpu_us: profile.trial.usage.cpu_us_per_request };
            cpu_changes(&store, profile, was, is, old, new)?;
        }
        let blocked = |store: &Store, profile: &ServerProfile, dir: &Path| -> Result<Option<Stacks>, Failure> {
            let folded = store.off_cpu_stacks(profile).map_err(|e| Failure::Usage(e.to_string()))?;
            folded.map(|f| stacks(&f, dir)).transpose()
        };
        let (Some(was), Some(is)) = (blocked(&old_store, old_profile, old)?, blocked(&store, profile, new)?) else {
            continue;
        };
        // Stacks weighed in µs blocked: their cost per response is their time over the pass's responses.
        let per_response =
            |stacks: &Stacks, p: &ServerProfile| stacks.samples() as f64 / p.trial.result.requests.ok.max(1) as f64;
        let was = Costed { cpu_us: per_response(&was, old_profile), stacks: &was };
        let is = Costed { cpu_us: per_response(&is, profile), stacks: &is };
        let title =
            format!("{}: where its threads blocked, {} against {}", profile.server, new.display(), old.display());
        let file = write_beside(&store, profile, "offcpu.diff.svg", diff::svg_counting(was, is, &title, "µs"))?;
        say!(
            "  its threads blocked {:.1} → {:.1} µs per response while profiled (differential flame graph: {})",
            was.cpu_us,
            is.cpu_us,
            file.display()
        );
    }
    Ok(())
}

/// Writes the differential flame graph `svg` beside `profile` in `store` (`profiles/SERVER-LEVEL.EXTENSION`);
/// returns the file.
fn write_beside(
    store: &Store,
    profile: &ServerProfile,
    extension: &str,
    svg: Result<String, String>,
) -> Result<PathBuf, Failure> {
    let svg = svg.map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
    let file = store.profile_file(&profile.server, profile.level, extension);
    write_atomically(&file, svg.as_bytes())
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot write {}: {e}", file.display())))?;
    Ok(file)
}

/// The frames of `profile`'s stacks whose own CPU time per response changed most from `was` (in `old`) to `is`
/// (in `new`), printed, and their differential flame graph written beside the new profile.
fn cpu_changes(
    store: &Store,
    profile: &ServerProfile,
    was: Costed<'_>,
    is: Costed<'_>,
    old: &Path,
    new: &Path,
) -> Result<(), Failure> {
    let title = format!("{}: {} against {}", profile.server, new.display(), old.display());
    let file = write_beside(store, profile, "diff.svg", diff::svg(was, is, &title))?;
    say!(
        "\n{}: CPU {:.1} → {:.1} µs per response while profiled; the frames whose own time changed most \
         (differential flame graph: {})",
        profile.server,
        was.cpu_us,
        is.cpu_us,
        file.display()
    );
    for change in diff::changes(was, is, CHANGED_FRAMES) {
        let (from, to) = (change.old, change.new);
        say!("  {:+9.1} µs  {from:9.1} → {to:9.1} µs per response  {}", to - from, change.name);
    }
    Ok(())
}

/// The searches of a results directory (none for a sweep).
fn searches(dir: &Path) -> Result<Vec<ServerSearch>, Failure> {
    let store = Store::open(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    store.searches().map_err(|e| Failure::Usage(e.to_string()))
}

/// One line per server and level.
fn print(changes: &[Change]) {
    say!(
        "{:<24} {:>8} {:>12} {:>12} {:>7} {:>26}  {:<31} {:>22}  limit (new)",
        "server",
        "level",
        "old req/s",
        "new req/s",
        "n",
        "change [95% CI]",
        "verdict",
        "p99 ms old → new"
    );
    for c in changes {
        let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
        let figure = |side: Option<f64>| side.map_or("—".to_string(), |v| format!("{v:.1}"));
        let count = |side: &Option<shootout_report::compare::Side>| side.as_ref().map_or(0, |s| s.samples.len());
        let change = match (c.ratio, c.interval) {
            (Some(ratio), Some(i)) => format!("{} [{} – {}]", pct(ratio), pct(i.low), pct(i.high)),
            (Some(ratio), None) => pct(ratio),
            (None, _) => "—".into(),
        };
        let p99 = |side: &Option<shootout_report::compare::Side>| side.as_ref().map_or("—".into(), |s| ms(s.p99_us));
        say!(
            "{:<24} {:>8} {:>12} {:>12} {:>7} {:>26}  {:<31} {:>22}  {}",
            c.server,
            c.level,
            figure(c.old.as_ref().map(|s| s.rps)),
            figure(c.new.as_ref().map(|s| s.rps)),
            format!("{}/{}", count(&c.old), count(&c.new)),
            change,
            c.verdict_text(),
            format!("{} → {}", p99(&c.old), p99(&c.new)),
            if c.new.is_some() { c.new_limit.text() } else { String::new() }
        );
    }
    for c in changes.iter().filter(|c| !c.disturbed.is_empty()) {
        say!("{} at {} rests on disturbed trials: {}", c.server, c.level, c.disturbed.join("; "));
    }
}

/// A results directory's trials and shape.
fn suite_run(dir: &Path) -> Result<(Vec<TrialRecord>, Shape), Failure> {
    let store = Store::open(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    let trials = store.trials().map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    let failed = store.failed_levels().map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    let shape = Shape::of_trials(&trials, &failed);
    Ok((trials, shape))
}

fn result(path: &Path) -> Result<LoadResult, Failure> {
    let text = shootout_model::reading::read_results_file(path, None)
        .map_err(|e| Failure::Usage(format!("{}: cannot read it ({e}); check the path", path.display())))?;
    shootout_model::reading::from_results_json(&text)
        .map_err(|e| Failure::Usage(format!("{}: not a shootout load result ({e})", path.display())))
}
