//! `shootout report PATH`: for a results directory of `shootout run`, writes `analysis.json`, `summary.csv`,
//! `report.html` (charts), `report.md` and an HdrHistogram `.hgrm` file beside each trial; for a `shootout load` JSON file, writes `FILE.html` (its
//! latency distribution and timeline) and `FILE.hgrm`. Works from saved results alone.

use shootout_report::suite::reconcile::{other_run, reconcile};
use std::path::{Path, PathBuf};

use clap::Args;
use shootout_harness::store::{write_atomically, Store};
use shootout_model::run::TrialRecord;
use shootout_model::LoadResult;
use shootout_report::export::{Csv, Exporter, Html, Markdown};
use shootout_report::suite::profiles::{name_collectors, ProfileView};
use shootout_report::suite::report::SuiteReport;
use shootout_report::suite::summary::SuiteSummary;

use super::Failure;

/// Options of `shootout report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results directory of `shootout run`, or a JSON result of `shootout load`.
    path: PathBuf,
    /// The load level whose second-by-second timelines the report shows [default: the highest].
    #[arg(long)]
    level: Option<f64>,
}

/// Writes the report files and names them.
pub fn run(args: ReportArgs) -> Result<(), Failure> {
    let written = if args.path.is_dir() { suite(&args.path, args.level)?.files } else { single(&args.path)? };
    for file in written {
        say!("{}", file.display());
    }
    Ok(())
}

/// What a results directory's report is made of and where it was written.
pub struct Written {
    /// The summary the report files render.
    pub summary: SuiteSummary,
    /// The main files: report.html, report.md.
    pub files: Vec<PathBuf>,
}

/// Writes what a results directory's trials add up to: `analysis.json`, `summary.csv`, the reports and a `.hgrm`
/// beside each trial (`shootout run` calls it when its trials are done, `shootout report` at any time after).
pub fn suite(dir: &Path, level: Option<f64>) -> Result<Written, Failure> {
    let store = Store::open(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    let trials = store.trials().map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    // A trial whose histogram cannot be read gets no .hgrm; the rest of the report is written, then it is named.
    let mut unreadable = Vec::new();
    for trial in &trials {
        let file = store.trial_file(&trial.server, trial.level, trial.repeat, "hgrm");
        match shootout_metrics::decode_histogram(&trial.result.latency.histogram) {
            Ok(histogram) => store
                .write_file(&file, shootout_metrics::hgrm(&histogram).as_bytes())
                .map_err(|e| cannot_write(&file, e))?,
            Err(e) => unreadable.push(format!(
                "{}: its latency histogram cannot be read ({e}), so it has no .hgrm",
                store.trial_file(&trial.server, trial.level, trial.repeat, "json").display()
            )),
        }
    }
    let (report, summary) = summarize(&store, trials, level)?;
    // A search's capacities go beside the cells they were read from.
    let mut analysis = serde_json::to_value(&report.analysis).unwrap_or_default();
    if let (Some(object), false) = (analysis.as_object_mut(), summary.capacities.is_empty()) {
        object.insert("capacities".into(), serde_json::to_value(&summary.capacities).unwrap_or_default());
    }
    if let Some(object) = analysis.as_object_mut() {
        object.insert("unit".into(), summary.unit.into());
    }
    if let (Some(object), false) = (analysis.as_object_mut(), summary.reconciled.is_empty()) {
        object.insert("reconciled".into(), serde_json::to_value(&summary.reconciled).unwrap_or_default());
    }
    if let (Some(object), false) = (analysis.as_object_mut(), summary.profiles.is_empty()) {
        object.insert("profiles".into(), serde_json::to_value(&summary.profiles).unwrap_or_default());
    }
    let analysis = serde_json::to_string_pretty(&analysis).unwrap_or_default();
    let files = [
        ("analysis.json", analysis),
        ("summary.csv", Csv.export(&summary)),
        ("report.html", Html.export(&summary)),
        ("report.md", Markdown.export(&summary)),
    ];
    for (name, text) in files {
        store.write(name, text.as_bytes()).map_err(|e| cannot_write(&dir.join(name), e))?;
    }
    if !unreadable.is_empty() {
        return Err(Failure::Run(anyhow::anyhow!("{}", unreadable.join("; "))));
    }
    Ok(Written { summary, files: vec![dir.join("report.html"), dir.join("report.md")] })
}

/// What a results directory's trials (read by the caller), searches and profiles add up to, its timelines at
/// `level` (default: the highest); nothing is written.
fn summarize(
    store: &Store,
    trials: Vec<TrialRecord>,
    level: Option<f64>,
) -> Result<(SuiteReport, SuiteSummary), Failure> {
    let dir = &store.dir;
    let searches = store.searches().map_err(|e| Failure::Usage(e.to_string()))?;
    let mut report = SuiteReport::load(dir, trials).map_err(|e| Failure::Usage(e.to_string()))?.with_searches(searches);
    if let Some(level) = level {
        if !report.trials.iter().any(|t| t.level == level) {
            return Err(Failure::Usage(format!("--level {level}: no trial at that level in {}", dir.display())));
        }
        report = report.with_timeline_level(level);
    }
    let mut summary = SuiteSummary::of_report(&report);
    let slo: Vec<String> = report.slo.iter().map(|c| c.text.clone()).collect();
    let searched = !summary.capacities.is_empty();
    let unit = summary.unit;
    if let (false, Some((other, analysis))) = (slo.is_empty(), other_run(dir, &report.name, &slo, unit, searched)) {
        summary.reconciled = reconcile(&summary, &other, &analysis);
    }
    for (profile, folded) in store.profiles().map_err(|e| Failure::Usage(e.to_string()))? {
        let off_cpu = store.off_cpu_stacks(&profile).map_err(|e| Failure::Usage(e.to_string()))?;
        let view = ProfileView::of(&profile, &folded, off_cpu.as_deref(), &summary).map_err(Failure::Usage)?;
        summary.profiles.push(view);
    }
    name_collectors(&mut summary);
    summary.profiles_failed = store.profile_failures();
    Ok((report, summary))
}

/// What a results directory adds up to, as its report would say it, without writing the report.
pub fn summary(dir: &Path) -> Result<SuiteSummary, Failure> {
    let store = Store::open(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    let trials = store.trials().map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    Ok(summarize(&store, trials, None)?.1)
}

/// A report file that could not be written, named.
fn cannot_write(file: &Path, e: std::io::Error) -> Failure {
    Failure::Run(anyhow::anyhow!("cannot write {}: {e}", file.display()))
}

fn single(path: &Path) -> Result<Vec<PathBuf>, Failure> {
    let text = shootout_model::reading::read_results_file(path, None).map_err(|e| {
        Failure::Usage(format!("{}: cannot read it ({e}); give a results directory or a load JSON", path.display()))
    })?;
    let result: LoadResult = shootout_model::reading::from_results_json(&text)
        .map_err(|e| Failure::Usage(format!("{}: not a shootout load result ({e})", path.display())))?;
    let html = path.with_extension("html");
    let failed = |e: std::io::Error| Failure::Run(anyhow::anyhow!("cannot write beside {}: {e}", path.display()));
    write_atomically(&html, shootout_report::load::html::render_load(&result).as_bytes()).map_err(failed)?;
    let histogram = shootout_metrics::decode_histogram(&result.latency.histogram).map_err(|e| {
        Failure::Run(anyhow::anyhow!(
            "{}: its latency histogram cannot be read ({e}), so it has no .hgrm ({} is written)",
            path.display(),
            html.display()
        ))
    })?;
    let hgrm = path.with_extension("hgrm");
    write_atomically(&hgrm, shootout_metrics::hgrm(&histogram).as_bytes()).map_err(failed)?;
    Ok(vec![html, hgrm])
}
