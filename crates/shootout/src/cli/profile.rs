//! `shootout load --profile-pid PID`: a sampling profiler on a server the user started, for the measured part of
//! one load: attached once the warm-up is over, stopped when the load ends, its samples written as folded stacks
//! and a flame graph, and the frames that ran the most printed under the load's summary and kept in its JSON
//! result (`profile`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;
use shootout_harness::profiles::profiler::{self, Recorded, Subject};
use shootout_model::profile::{LoadProfile, Profiler};
use shootout_profile::flame;
use shootout_report::export::profiles::frame_lines;

use super::Failure;

/// Frames the table under the summary lists.
const HOTTEST: usize = 10;

/// The profiling options of `shootout load`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Profile these running processes, and every process each started (a server's master and its workers),
    /// while the load is measured: writes --profile-file and its flame graph, and prints the hottest frames.
    #[arg(long = "profile-pid", value_name = "PID", value_delimiter = ',')]
    pub(super) pids: Vec<i32>,
    /// With --profile-pid: perf, rbspy, py-spy, async-profiler, or auto: rbspy where Ruby runs, py-spy where
    /// Python does, async-profiler where a JVM does, perf for anything else [default: auto].
    #[arg(long, value_name = "NAME", value_parser = profiler_arg, requires = "pids")]
    profiler: Option<Choice>,
    /// With --profile-pid: the folded stacks' file; the flame graph goes beside it, as .svg
    /// [default: profile.folded].
    #[arg(long, value_name = "FILE", requires = "pids")]
    profile_file: Option<PathBuf>,
}

/// `--profiler`: one profiler, or auto (`None`).
#[derive(Debug, Clone, Copy)]
struct Choice(Option<Profiler>);

fn profiler_arg(text: &str) -> Result<Choice, String> {
    Profiler::parse(text).map(Choice)
}

/// A profile to take around one load.
#[derive(Debug)]
pub struct Profiling {
    subject: Subject,
    file: PathBuf,
}

impl ProfileArgs {
    /// What to profile, checked before any load (its profiler tried for a moment); `None` without --profile-pid.
    /// `stop` set meanwhile (Ctrl-C) ends it as interrupted.
    pub fn check(&self, stop: &AtomicBool) -> Result<Option<Profiling>, Failure> {
        if self.pids.is_empty() {
            return Ok(None);
        }
        let given: Vec<String> = self.pids.iter().map(i32::to_string).collect();
        let given = given.join(",");
        if let Some(pid) = self.pids.iter().copied().find(|&pid| runs_this_process(pid)) {
            return Err(Failure::Usage(format!(
                "--profile-pid {pid}: it is this shootout or a process it runs under (a shell, a terminal), whose \
                 tree holds shootout's own load: give the PID of the server (pgrep -f NAME)"
            )));
        }
        let subject = Subject::of(self.profiler.and_then(|c| c.0), &self.pids).map_err(|e| {
            Failure::Usage(format!("--profile-pid {given}: {e}; give the PID of a running server (pgrep -f NAME)"))
        })?;
        let file = self.profile_file.clone().unwrap_or_else(|| PathBuf::from("profile.folded"));
        super::load::writable("--profile-file", &file)?;
        // A profiler that cannot attach is found now, not after the whole load; a signal meanwhile ends it.
        let checked = profiler::check_attach(&subject, stop);
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Failure::Interrupted);
        }
        checked.map_err(|e| Failure::Usage(format!("--profile-pid {given}: checked before the load, {e}")))?;
        Ok(Some(Profiling { subject, file }))
    }
}

/// Whether `pid` is this process or one of its ancestors: its tree holds this shootout, whose profile would be
/// its own load's.
fn runs_this_process(pid: i32) -> bool {
    let mut at = std::process::id() as i32;
    for _ in 0..1024 {
        if at == pid {
            return true;
        }
        match shootout_harness::sampling::tree::Process::read(at) {
            Some(process) if process.ppid > 0 && process.ppid != at => at = process.ppid,
            _ => return false,
        }
    }
    false
}

impl Profiling {
    /// Runs `load`, with the profiler attached from the end of `warmup` to the end of the load.
    pub fn around<T>(
        &self,
        warmup: Duration,
        stop: &AtomicBool,
        load: impl FnOnce() -> T,
    ) -> (T, Result<Recorded, String>) {
        let dir = self.file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = self.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "profile".into());
        profiler::around(&self.subject, warmup, dir, &name, false, stop, load)
    }

    /// Writes what was recorded (the folded stacks, and the flame graph beside them) and returns the lines that
    /// say so, with the hottest frames, and the profile as the load's JSON result keeps it.
    pub fn write(&self, recorded: &Recorded) -> Result<(String, LoadProfile), Failure> {
        let svg_file = self.file.with_extension("svg");
        let profilers = recorded.profiler.names(recorded.native_perf);
        let title = format!("{profilers} on PID {}", self.subject.pids[0]);
        let svg = flame::svg(&recorded.stacks, &title).map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
        for (path, text) in [(&self.file, recorded.stacks.text()), (&svg_file, svg)] {
            shootout_harness::store::write_atomically(path, text.as_bytes())
                .map_err(|e| Failure::Run(anyhow::anyhow!("cannot write the profile to {} ({e})", path.display())))?;
        }
        let processes = self.subject.pids.len();
        let mut out = format!(
            "\nprofile: {} on {processes} process{}, {} samples in {:.1} s: {}, flame graph {}\n",
            profilers,
            if processes == 1 { "" } else { "es" },
            recorded.stacks.samples(),
            recorded.seconds,
            self.file.display(),
            svg_file.display(),
        );
        let hottest = recorded.stacks.hottest(HOTTEST);
        out.push_str("   self   total  frame\n");
        out.push_str(&frame_lines(&hottest, ""));
        let profile = LoadProfile {
            profiler: recorded.profiler,
            native_perf: recorded.native_perf,
            command: recorded.command.clone(),
            pids: self.subject.pids.clone(),
            samples: recorded.stacks.samples(),
            seconds: recorded.seconds,
            file: self.file.display().to_string(),
            flame_graph: svg_file.display().to_string(),
            hottest,
        };
        Ok((out, profile))
    }
}
