//! Where a tree's threads waited off a CPU: an off-CPU profile, recorded beside the on-CPU one in the same
//! profiled pass. perf records every context switch of the tree's threads with its stack (the `context-switches`
//! software event at a period of 1, with frame-pointer call chains: the kernel's whole path into the wait, and as
//! much of the user stack as its frame pointers give) and the switch records around it (`--switch-events`: out,
//! out preempted, in). Neither needs tracefs nor the scheduler's tracepoints, so it works wherever perf may record
//! the tree's kernel stacks (root, or `perf_event_paranoid` of 1 or less).
//!
//! Each switch out of a thread that blocked (not one preempted, which stayed runnable: the thread-state table
//! counts those) is paired with that thread's next switch in, and the time between weighs the stack it blocked
//! in, in microseconds ([`fold_script`]). The root frame of each stack is the thread's name, so that a pool's
//! workers and a runtime's own threads fall apart. A thread that blocked the whole recording never switched and
//! is not in it; one still blocked when the recording ends is left out for that last wait.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::Stacks;

/// The file the off-CPU recording of a profile named `name` goes to, in `dir`.
pub fn raw_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.offcpu.perf.data"))
}

/// The command line that records the context switches of `pids` into `raw` until it gets SIGINT.
pub fn command(pids: &[i32], raw: &Path) -> Vec<String> {
    let all = pids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    let raw = raw.display().to_string();
    let words = ["perf", "record", "-e", "context-switches", "-c", "1", "--call-graph", "fp", "--switch-events"];
    words.iter().map(|w| w.to_string()).chain(["-p".into(), all, "-o".into(), raw]).collect()
}

/// Reads the off-CPU recording in `raw` as stacks weighed in microseconds blocked.
pub fn fold(raw: &Path) -> Result<Stacks, String> {
    let failed = |e: &dyn std::fmt::Display| format!("perf: cannot read {} ({e})", raw.display());
    let mut script = crate::record::perf_script(raw, &["--show-switch-events"]).map_err(|e| failed(&e))?;
    let stacks = fold_script(BufReader::new(script.stdout.take().expect("piped")));
    let status = script.wait().map_err(|e| failed(&e))?;
    if !status.success() {
        return Err(failed(&format!("perf script ended with {status}")));
    }
    Ok(stacks)
}

/// What one thread was last seen doing.
#[derive(Default)]
struct Thread {
    /// The stack of its last switch, root first, once it is read whole.
    stack: Option<String>,
    /// When it switched out blocked, seconds.
    out_s: Option<f64>,
}

/// Folds `perf script --show-switch-events` output (fields comm, pid, tid, time, event, ip, sym, dso) into stacks
/// weighed in microseconds: each blocked switch's stack gets the time until its thread's next switch in.
pub fn fold_script(script: impl BufRead) -> Stacks {
    let mut stacks = Stacks::default();
    let mut threads: HashMap<i32, Thread> = HashMap::new();
    // The sample being read: its thread, its name, and its frames leaf first.
    let mut reading: Option<(i32, String, Vec<String>)> = None;
    for line in script.lines().map_while(Result::ok) {
        if line.starts_with(char::is_whitespace) && !line.trim().is_empty() {
            if let Some((_, _, frames)) = reading.as_mut() {
                frames.extend(frame(&line));
            }
            continue;
        }
        if let Some((tid, name, frames)) = reading.take() {
            let root_first = std::iter::once(name).chain(frames.into_iter().rev()).collect::<Vec<_>>();
            threads.entry(tid).or_default().stack = Some(root_first.join(";"));
        }
        let Some((name, tid, time_s, event)) = header(&line) else { continue };
        if event.starts_with("context-switches") {
            reading = Some((tid, name, Vec::new()));
        } else if let Some(how) = event.strip_prefix("PERF_RECORD_SWITCH OUT") {
            let thread = threads.entry(tid).or_default();
            thread.out_s = if how.trim_start().starts_with("preempt") { None } else { Some(time_s) };
            if thread.out_s.is_none() {
                thread.stack = None;
            }
        } else if event.starts_with("PERF_RECORD_SWITCH IN") {
            let thread = threads.entry(tid).or_default();
            if let (Some(stack), Some(out_s)) = (thread.stack.take(), thread.out_s.take()) {
                stacks.add(&stack, ((time_s - out_s) * 1e6).round().max(0.0) as u64);
            }
        }
    }
    stacks
}

/// A record's header: `COMM PID/TID TIME: EVENT…`, the thread's name possibly holding spaces (`puma srv tp 001`);
/// its name, thread id, time in seconds, and what follows the time.
fn header(line: &str) -> Option<(String, i32, f64, &str)> {
    let (before, event) = line.split_once(": ")?;
    let (rest, time) = before.trim_end().rsplit_once(char::is_whitespace)?;
    let (name, ids) = rest.trim_end().rsplit_once(char::is_whitespace)?;
    let tid: i32 = ids.rsplit('/').next()?.parse().ok()?;
    Some((name.trim().to_string(), tid, time.parse().ok()?, event.trim_end()))
}

/// A stack line, `ADDRESS SYMBOL (DSO)`, as a frame: its symbol, marked `_[k]` in the kernel (flame graphs draw
/// those apart), or the file it is in where perf found no symbol; none where perf knows neither (a frame-pointer
/// walk through code built without them reads such addresses, which would only split alike stacks apart).
fn frame(line: &str) -> Option<String> {
    let (_, rest) = line.trim().split_once(' ')?;
    let (symbol, dso) = match rest.rsplit_once(" (") {
        Some((symbol, dso)) => (symbol.trim(), dso.trim_end_matches(')')),
        None => (rest.trim(), ""),
    };
    let symbol = symbol.split("+0x").next().unwrap_or(symbol);
    let file = dso.rsplit('/').next().unwrap_or(dso);
    if dso.starts_with("[kernel.") {
        Some(format!("{symbol}_[k]"))
    } else if !symbol.is_empty() && symbol != "[unknown]" {
        Some(symbol.to_string())
    } else if file.is_empty() || file == "[unknown]" {
        None
    } else {
        Some(format!("[{file}]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf script's words, as it prints them, for two threads of one process.
    const SCRIPT: &str = "\
puma srv tp 001  9045/9047  100.000100: PERF_RECORD_SWITCH IN         \n\
puma srv tp 001  9045/9047  100.000200: context-switches: \n\
\tffffffff821fb643 schedule ([kernel.kallsyms])\n\
\tffffffff81441c0a futex_wait ([kernel.kallsyms])\n\
\t          101829 pthread_cond_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
\t            a0b1 [unknown] (/usr/lib/libruby.so.3.1)\n\
\t               0 [unknown] ([unknown])\n\
\n\
puma srv tp 001  9045/9047  100.000250: PERF_RECORD_SWITCH OUT        \n\
worker  9045/9048  100.000300: context-switches: \n\
\tffffffff821fb643 schedule ([kernel.kallsyms])\n\
\tffffffff82202aba do_epoll_wait ([kernel.kallsyms])\n\
\n\
worker  9045/9048  100.000310: PERF_RECORD_SWITCH OUT preempt \n\
worker  9045/9048  100.000400: PERF_RECORD_SWITCH IN         \n\
puma srv tp 001  9045/9047  100.010250: PERF_RECORD_SWITCH IN         \n\
puma srv tp 001  9045/9047  100.010300: context-switches: \n\
\tffffffff821fb643 schedule ([kernel.kallsyms])\n\
\tffffffff81441c0a futex_wait ([kernel.kallsyms])\n\
\n\
puma srv tp 001  9045/9047  100.010350: PERF_RECORD_SWITCH OUT        \n";

    #[test]
    fn a_blocked_switch_weighs_its_stack_by_the_time_to_the_threads_next_switch_in() {
        let stacks = fold_script(SCRIPT.as_bytes());
        // 10 ms blocked on a condition, from its switch out at 100.000250 to its switch in at 100.010250; the
        // preempted worker stayed runnable, and the last wait has no end in the recording.
        let blocked = "puma srv tp 001;[libruby.so.3.1];pthread_cond_wait;futex_wait_[k];schedule_[k]";
        assert_eq!(stacks.text(), format!("{blocked} 10000\n"));
    }

    #[test]
    fn a_record_header_gives_the_threads_name_id_and_time() {
        let (name, tid, time_s, event) = header("puma srv tp 001  9045/9047  100.000200: context-switches: ").unwrap();
        assert_eq!((name.as_str(), tid, time_s, event), ("puma srv tp 001", 9047, 100.0002, "context-switches:"));
        assert!(header("\tffffffff821fb643 schedule ([kernel.kallsyms])").is_none());
    }

    #[test]
    fn perf_records_every_switch_of_the_tree_with_its_switch_records() {
        let command = command(&[10, 11], Path::new("/r/x.offcpu.perf.data")).join(" ");
        assert_eq!(
            command,
            "perf record -e context-switches -c 1 --call-graph fp --switch-events -p 10,11 -o /r/x.offcpu.perf.data"
        );
    }
}
