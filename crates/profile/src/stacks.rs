//! [`Stacks`]: folded stacks, the one format every profiler's output becomes: `root;caller;…;leaf COUNT` per
//! line, the count in samples. From it, the share of the samples spent in a frame, itself or below it
//! ([`Frame`], [`Stacks::hottest`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use shootout_model::profile::Frame;

/// Folded stacks: each distinct stack (frames root first, joined by `;`) and the samples that ended in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stacks {
    counts: BTreeMap<String, u64>,
}

impl Stacks {
    /// Reads folded stacks: one `stack COUNT` per line, the count after the last space (frames may hold
    /// spaces, as rbspy's `method - file:line` do); blank lines are skipped, and a stack seen twice adds up.
    pub fn parse(text: &str) -> Result<Stacks, String> {
        let mut stacks = Stacks::default();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let parsed = line.trim_end().rsplit_once(' ').and_then(|(stack, count)| {
                let count: u64 = count.parse().ok()?;
                Some((stack.trim(), count)).filter(|(stack, _)| !stack.is_empty())
            });
            let (stack, count) =
                parsed.ok_or_else(|| format!("line {} is not folded stacks ('a;b;c COUNT'): {line}", n + 1))?;
            stacks.add(stack, count);
        }
        Ok(stacks)
    }

    /// Adds `count` samples to `stack`.
    pub fn add(&mut self, stack: &str, count: u64) {
        if count > 0 {
            *self.counts.entry(stack.to_string()).or_default() += count;
        }
    }

    /// The folded text, one stack per line in order.
    pub fn text(&self) -> String {
        self.counts.iter().map(|(stack, count)| format!("{stack} {count}\n")).collect()
    }

    /// Every sample.
    pub fn samples(&self) -> u64 {
        self.counts.values().sum()
    }

    /// True when nothing was sampled.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The samples that ended in `stack` (0 when none did).
    pub fn count(&self, stack: &str) -> u64 {
        self.counts.get(stack).copied().unwrap_or(0)
    }

    /// Each stack and its samples, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.counts.iter().map(|(stack, count)| (stack.as_str(), *count))
    }

    /// Share of the samples (0 to 1) whose stack holds a frame that `is` accepts.
    pub fn share_with(&self, is: impl Fn(&str) -> bool) -> f64 {
        let with: u64 = self.iter().filter(|(stack, _)| stack.split(';').any(&is)).map(|(_, n)| n).sum();
        share(with, self.samples())
    }

    /// Share of the samples (0 to 1) in a runtime's garbage collector ([`is_collector`]): of the CPU the profiled
    /// tree used, what its collection took, on the thread that allocated or on the runtime's helpers.
    pub fn collector_share(&self) -> f64 {
        self.share_with(is_collector)
    }

    /// The `most` frames that ran the most themselves (self share, then total share, then name), each with both
    /// shares. A frame that recurses counts once per sample in its total.
    pub fn hottest(&self, most: usize) -> Vec<Frame> {
        let mut own: HashMap<&str, u64> = HashMap::new();
        let mut total: HashMap<&str, u64> = HashMap::new();
        for (stack, count) in self.iter() {
            let frames: Vec<&str> = stack.split(';').collect();
            if let Some(leaf) = frames.last() {
                *own.entry(leaf).or_default() += count;
            }
            for frame in frames.into_iter().collect::<HashSet<_>>() {
                *total.entry(frame).or_default() += count;
            }
        }
        let all = self.samples();
        let mut frames: Vec<Frame> = total
            .iter()
            .map(|(name, total)| Frame {
                name: name.to_string(),
                self_share: share(own.get(name).copied().unwrap_or(0), all),
                total_share: share(*total, all),
            })
            .collect();
        frames.sort_by(|a, b| {
            (b.self_share, b.total_share).partial_cmp(&(a.self_share, a.total_share)).unwrap().then(a.name.cmp(&b.name))
        });
        frames.truncate(most);
        frames
    }
}

/// `part` of `all`, 0 when there is nothing.
fn share(part: u64, all: u64) -> f64 {
    if all == 0 {
        0.0
    } else {
        part as f64 / all as f64
    }
}

/// Whether `frame` is a garbage collector's, by the names its runtime gives its collector's code: V8's (Node),
/// whose collector runs on the thread that allocates and on V8's helper threads, all named `node`, so that only
/// a profile's frames tell it apart (a JVM's collector threads have names of their own, read without a profile).
pub fn is_collector(frame: &str) -> bool {
    const V8: [&str; 7] = [
        "::Heap::CollectGarbage",
        "::Scavenge",
        "::MarkCompact",
        "::MinorMarkSweep",
        "::ConcurrentMarking",
        "::IncrementalMarking",
        "::Sweeper",
    ];
    frame.starts_with("v8::internal::") && V8.iter().any(|part| frame.contains(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v8s_collector_is_told_by_its_frames() {
        // As perf folded Node 20 allocating 10,000 objects a request in a 1 MB young generation.
        let text = "node;v8::internal::ScavengerCollector::JobTask::Run 3
                    node;Builtins_InterpreterEntryTrampoline;v8::internal::Heap::CollectGarbage 2
                    node;v8::internal::Execution::Call;[unknown] 4
                    node;v8::internal::Factory::NewFillerObject 1
";
        let stacks = Stacks::parse(text).unwrap();
        assert!((stacks.collector_share() - 0.5).abs() < 1e-12, "{}", stacks.collector_share());
        assert!(!is_collector("gc_mark_children"), "not V8's");
        assert!(!is_collector("v8::internal::compiler::PipelineImpl::Run"));
    }

    #[test]
    fn stacks_add_up_and_give_each_frames_self_and_total_share() {
        let text = "main;serve;spin 6\nmain;serve;write 2\n\nmain;serve;spin 1\nmain;idle 1\n";
        let stacks = Stacks::parse(text).unwrap();
        assert_eq!(stacks.samples(), 10);
        assert_eq!(stacks.text(), "main;idle 1\nmain;serve;spin 7\nmain;serve;write 2\n");
        let hottest = stacks.hottest(3);
        let names: Vec<&str> = hottest.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["spin", "write", "idle"]);
        assert_eq!((hottest[0].self_share, hottest[0].total_share), (0.7, 0.7));
        let main = &stacks.hottest(10).into_iter().find(|f| f.name == "main").unwrap();
        assert_eq!((main.self_share, main.total_share), (0.0, 1.0));
        assert!((stacks.share_with(|f| f == "serve") - 0.9).abs() < 1e-12);
    }

    #[test]
    fn a_recursive_frame_counts_once_per_sample_and_frames_may_hold_spaces() {
        let stacks = Stacks::parse("<main> - config.ru:1;fib - app.rb:3;fib - app.rb:3 4\n").unwrap();
        let fib = stacks.hottest(1).remove(0);
        assert_eq!((fib.name.as_str(), fib.self_share, fib.total_share), ("fib - app.rb:3", 1.0, 1.0));
    }

    #[test]
    fn a_line_without_a_count_is_named() {
        let err = Stacks::parse("a;b 3\na;b three\n").unwrap_err();
        assert!(err.starts_with("line 2 is not folded stacks"), "{err}");
        assert!(Stacks::parse("").unwrap().is_empty());
    }
}
