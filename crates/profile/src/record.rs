//! How each [`Profiler`] is run and read: the command line that records a running process tree until it is
//! interrupted ([`command`]), the file it records into ([`raw_file`]), and how that file becomes [`Stacks`]
//! ([`fold`]). Each attaches to processes already running, by PID, and samples at [`RECORD_HZ`] what runs on a
//! CPU (perf's cpu-clock; rbspy's `--on-cpu`; py-spy's `--gil`, the thread holding Python's lock); their measured
//! costs are in the README's profiling section.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use shootout_model::profile::Profiler;

use crate::Stacks;

/// Samples per second each profiler takes: 99, off the round 100 so that it does not beat in step with timers.
pub const RECORD_HZ: u32 = 99;

/// The file `profiler` records into, in `dir`, for a profile named `name`.
pub fn raw_file(profiler: Profiler, dir: &Path, name: &str) -> PathBuf {
    match profiler {
        Profiler::Perf => dir.join(format!("{name}.perf.data")),
        Profiler::Rbspy | Profiler::PySpy => dir.join(format!("{name}.raw.folded")),
    }
}

/// The command line that records the tree of `pids` (the first is its root) into `raw` until it gets SIGINT:
/// perf follows every PID given, rbspy and py-spy the root and every process it starts.
pub fn command(profiler: Profiler, pids: &[i32], raw: &Path) -> Vec<String> {
    let hz = RECORD_HZ.to_string();
    let raw = raw.display().to_string();
    let root = pids.first().copied().unwrap_or_default().to_string();
    let all = pids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    let words: Vec<&str> = match profiler {
        Profiler::Perf => {
            vec!["perf", "record", "-e", "cpu-clock", "-F", &hz, "--call-graph", "dwarf", "-p", &all, "-o", &raw]
        }
        Profiler::Rbspy => vec![
            "rbspy",
            "record",
            "--pid",
            &root,
            "--subprocesses",
            "--on-cpu",
            "--silent",
            "--rate",
            &hz,
            "--format",
            "collapsed",
            "--file",
            &raw,
        ],
        Profiler::PySpy => vec![
            "py-spy",
            "record",
            "--pid",
            &root,
            "--subprocesses",
            "--gil",
            "--rate",
            &hz,
            "--format",
            "raw",
            "--output",
            &raw,
        ],
    };
    words.into_iter().map(String::from).collect()
}

/// Reads what it recorded into `raw` as folded stacks: perf's samples through `perf script` and inferno's
/// collapser (one count per sample, not perf's summed periods), the others' folded file as written.
pub fn fold(profiler: Profiler, raw: &Path) -> Result<Stacks, String> {
    let failed = |e: &dyn std::fmt::Display| format!("{}: cannot read {} ({e})", profiler.name(), raw.display());
    match profiler {
        Profiler::Perf => {
            let mut script = Command::new("perf")
                .args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso", "-i"])
                .arg(raw)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| failed(&e))?;
            let output = BufReader::new(script.stdout.take().expect("piped"));
            let mut folded = Vec::new();
            let mut options = Options::default();
            options.nthreads = 1;
            let collapsed = Folder::from(options).collapse(output, &mut folded);
            let status = script.wait().map_err(|e| failed(&e))?;
            collapsed.map_err(|e| failed(&e))?;
            if !status.success() {
                return Err(failed(&format!("perf script ended with {status}")));
            }
            Stacks::parse(&String::from_utf8_lossy(&folded)).map_err(|e| failed(&e))
        }
        Profiler::Rbspy | Profiler::PySpy => {
            let text = std::fs::read_to_string(raw).map_err(|e| failed(&e))?;
            Stacks::parse(&text).map_err(|e| failed(&e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_follows_every_pid_and_the_others_the_root_and_its_children() {
        let raw = Path::new("/r/x");
        let perf = command(Profiler::Perf, &[10, 11], raw).join(" ");
        assert_eq!(perf, "perf record -e cpu-clock -F 99 --call-graph dwarf -p 10,11 -o /r/x");
        let rbspy = command(Profiler::Rbspy, &[10, 11], raw).join(" ");
        assert!(rbspy.contains("--pid 10 --subprocesses") && rbspy.ends_with("--format collapsed --file /r/x"));
    }
}
