//! `shootout compare OLD NEW`: old results against new, per server and level, with a verdict; exit code 3 when
//! a regression passes `--max-regression`, so a CI job can gate on it.

use std::path::{Path, PathBuf};

use clap::Args;
use shootout_harness::store::Store;
use shootout_model::LoadResult;
use shootout_report::compare::{compare_results, compare_trials, Change, Verdict};
use shootout_report::units::ms;

use super::Failure;

/// Options of `shootout compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a results directory of `shootout run`, or a `shootout load` JSON file.
    old: PathBuf,
    /// The candidate, of the same kind.
    new: PathBuf,
    /// Fail (exit code 3) when any server and level regressed by more than this, e.g. 5%.
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    max_regression: Option<f64>,
    /// Changes smaller than this are never called improved or regressed.
    #[arg(long, value_name = "PERCENT", value_parser = percent, default_value = "2%")]
    noise: f64,
}

fn percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / 100.0),
        _ => Err(format!("'{text}' is not a percentage: write it like 5%")),
    }
}

/// Compares and prints.
pub fn run(args: CompareArgs) -> Result<(), Failure> {
    let changes = match (args.old.is_dir(), args.new.is_dir()) {
        (true, true) => compare_trials(&trials(&args.old)?, &trials(&args.new)?, args.noise),
        (false, false) => vec![compare_results(&result(&args.old)?, &result(&args.new)?, args.noise)],
        _ => {
            return Err(Failure::Usage(
                "compare two results directories, or two load JSON files, not one of each".into(),
            ))
        }
    };
    if changes.is_empty() {
        return Err(Failure::Usage(format!(
            "{} and {} have no server and level in common: compare runs of the same suite",
            args.old.display(),
            args.new.display()
        )));
    }
    println!(
        "{:<24} {:>8} {:>12} {:>12} {:>26} {:>14} {:>22}  limit (new)",
        "server", "level", "old req/s", "new req/s", "change [95% CI]", "verdict", "p99 ms old → new"
    );
    for c in &changes {
        let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
        println!(
            "{:<24} {:>8} {:>12.1} {:>12.1} {:>26} {:>14} {:>22}  {}",
            c.server,
            c.level,
            c.old_rps,
            c.new_rps,
            format!("{} [{} – {}]", pct(c.ratio), pct(c.low), pct(c.high)),
            c.verdict.as_str(),
            format!("{} → {}", ms(c.old_p99_us), ms(c.new_p99_us)),
            c.new_limit.text()
        );
    }
    if let Some(limit) = args.max_regression {
        let failed: Vec<&Change> =
            changes.iter().filter(|c| c.verdict == Verdict::Regressed && c.ratio < 1.0 - limit).collect();
        if !failed.is_empty() {
            let names: Vec<String> = failed.iter().map(|c| format!("{} at {}", c.server, c.level)).collect();
            return Err(Failure::Threshold(format!(
                "regression beyond --max-regression {:.1}%: {}",
                limit * 100.0,
                names.join(", ")
            )));
        }
    }
    Ok(())
}

fn trials(dir: &Path) -> Result<Vec<shootout_model::run::TrialRecord>, Failure> {
    let store = Store::open(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    store.trials().map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))
}

fn result(path: &Path) -> Result<LoadResult, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("{}: cannot read it ({e}); check the path", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{}: not a shootout load result ({e})", path.display())))
}
