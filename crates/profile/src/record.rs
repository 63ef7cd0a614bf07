//! How each [`Profiler`] is run and read: the command line that records a running process tree until it is
//! interrupted ([`command`]), the file it records into ([`raw_file`]), and how that file becomes [`Stacks`]
//! ([`fold`]). Each attaches to processes already running, by PID, and samples at [`RECORD_HZ`] what runs on a
//! CPU (perf's cpu-clock; rbspy's `--on-cpu`; py-spy's `--gil`, the thread holding Python's lock;
//! async-profiler's `itimer`, the process's CPU time); their measured costs are in docs/guide/profiles.md.
//!
//! async-profiler is a library loaded into the JVM rather than a program: its "command" is a small shell script
//! that loads it through the JDK's `jcmd` (started), waits for SIGINT, and then has it write its folded stacks
//! (stopped), so that the harness runs and stops it like the others.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use shootout_model::profile::Profiler;

use crate::Stacks;

/// Samples per second each profiler takes: 99, off the round 100 so that it does not beat in step with timers.
pub const RECORD_HZ: u32 = 99;

/// Where async-profiler's library is looked for when `SHOOTOUT_ASYNC_PROFILER` does not name it: where
/// `scripts/setup-examples.sh` puts it first, then where its own release archive is usually unpacked.
const ASYNC_PROFILER_PLACES: [&str; 3] = [
    "/usr/local/lib/libasyncProfiler.so",
    "/opt/async-profiler/lib/libasyncProfiler.so",
    "/usr/lib/libasyncProfiler.so",
];

/// async-profiler's library (`libasyncProfiler.so`): the file `SHOOTOUT_ASYNC_PROFILER` names, else the first of
/// its usual places that holds it.
pub fn async_profiler_library() -> Option<PathBuf> {
    match std::env::var_os("SHOOTOUT_ASYNC_PROFILER") {
        Some(path) => Some(PathBuf::from(path)).filter(|p| p.is_file()),
        None => ASYNC_PROFILER_PLACES.iter().map(PathBuf::from).find(|p| p.is_file()),
    }
}

/// What `profiler` needs that is not there, as the words "X is not installed", or `None` when it can run.
pub fn missing(profiler: Profiler) -> Option<String> {
    let absent = |program: &str| !on_path(program);
    match profiler {
        Profiler::AsyncProfiler if absent("jcmd") => Some("jcmd (a JDK's) is not installed".into()),
        Profiler::AsyncProfiler if async_profiler_library().is_none() => Some(format!(
            "async-profiler is not installed (no libasyncProfiler.so in SHOOTOUT_ASYNC_PROFILER or {})",
            ASYNC_PROFILER_PLACES.join(", ")
        )),
        Profiler::AsyncProfiler => None,
        _ if absent(profiler.name()) => Some(format!("{} is not installed", profiler.name())),
        _ => None,
    }
}

/// The file `profiler` records into, in `dir`, for a profile named `name`.
pub fn raw_file(profiler: Profiler, dir: &Path, name: &str) -> PathBuf {
    match profiler {
        Profiler::Perf => dir.join(format!("{name}.perf.data")),
        Profiler::Rbspy | Profiler::PySpy | Profiler::AsyncProfiler => dir.join(format!("{name}.raw.folded")),
    }
}

/// The command line that records the tree of `pids` (the first is its root) into `raw` until it gets SIGINT:
/// perf follows every PID given, rbspy and py-spy the root and every process it starts, async-profiler the one
/// JVM of the root.
pub fn command(profiler: Profiler, pids: &[i32], raw: &Path) -> Vec<String> {
    let hz = RECORD_HZ.to_string();
    let raw = raw.display().to_string();
    let root = pids.first().copied().unwrap_or_default().to_string();
    let all = pids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    let script;
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
        Profiler::AsyncProfiler => {
            script = async_profiler_script(&root, &raw);
            vec!["sh", "-c", &script]
        }
    };
    words.into_iter().map(String::from).collect()
}

/// The script that loads async-profiler into the JVM `pid` sampling its CPU time (`itimer`, the event that costs
/// it least: 2% of a JDK server's throughput where `cpu` cost 11%), and on SIGINT has it write folded stacks to
/// `raw`. jcmd answers "return code: 0" when the agent took its options, and exits 0 whatever it answered; its
/// options go in double quotes, or jcmd splits them at the commas.
fn async_profiler_script(pid: &str, raw: &str) -> String {
    let library = async_profiler_library().unwrap_or_else(|| PathBuf::from("libasyncProfiler.so"));
    let agent = |options: String| {
        format!("jcmd {pid} JVMTI.agent_load {} {}", quoted(&library.display().to_string()), quoted(&options))
    };
    let interval = 1_000_000_000 / u64::from(RECORD_HZ);
    let start = agent(format!("\"start,event=itimer,interval={interval}\""));
    let stop = agent(format!("\"stop,file={raw},collapsed\""));
    format!(
        "said=$({start} 2>&1); echo \"$said\"; case \"$said\" in *'return code: 0'*) ;; *) exit 1;; esac; \
         trap {} INT TERM; while :; do sleep 1; done",
        quoted(&format!("{stop}; exit 0"))
    )
}

/// `word` quoted for `sh`, when it needs quotes.
pub fn quoted(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./,:=".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// True when `program` is on the PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// `perf script` reading `raw` (with `options` before its fields), its records on its piped stdout, its words
/// dropped.
pub(crate) fn perf_script(raw: &Path, options: &[&str]) -> std::io::Result<std::process::Child> {
    Command::new("perf")
        .arg("script")
        .args(options)
        .args(["-F", "comm,pid,tid,time,event,ip,sym,dso", "-i"])
        .arg(raw)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
}

/// Reads what it recorded into `raw` as folded stacks: perf's samples through `perf script` and inferno's
/// collapser (one count per sample, not perf's summed periods), the others' folded file as written.
pub fn fold(profiler: Profiler, raw: &Path) -> Result<Stacks, String> {
    let failed = |e: &dyn std::fmt::Display| format!("{}: cannot read {} ({e})", profiler.name(), raw.display());
    match profiler {
        Profiler::Perf => {
            let mut script = perf_script(raw, &[]).map_err(|e| failed(&e))?;
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
        Profiler::Rbspy | Profiler::PySpy | Profiler::AsyncProfiler => {
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
        let jvm = command(Profiler::AsyncProfiler, &[12, 13], raw);
        assert_eq!(jvm[..2], ["sh", "-c"]);
        assert!(jvm[2].contains("jcmd 12 JVMTI.agent_load ") && !jvm[2].contains(" 13 "), "{}", jvm[2]);
        assert!(jvm[2].contains(r#"'"start,event=itimer,interval=10101010"'"#), "{}", jvm[2]);
        assert!(jvm[2].contains(r#"stop,file=/r/x,collapsed"#), "{}", jvm[2]);
    }

    #[test]
    fn a_word_is_quoted_for_sh_only_when_it_needs_it() {
        assert_eq!(quoted("/usr/bin/perf"), "/usr/bin/perf");
        assert_eq!(quoted("it's here"), r"'it'\''s here'");
    }
}
