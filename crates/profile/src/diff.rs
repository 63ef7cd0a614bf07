//! Two profiles of one server, old and new, each with the server's CPU time per response while it was recorded:
//! the frames whose cost per response changed most ([`changes`]), and the differential flame graph ([`svg`]),
//! drawn as the new profile, each frame coloured by how its cost per response moved (red where it grew, blue where
//! it shrank). Costs, not shares: a method made twice as costly in an app it already dominates barely moves its
//! share (85% to 92%), while its time per response doubles; and a longer or busier recording is no growth.

use crate::Stacks;

/// A profile and the server's CPU time per response (µs) while it was recorded.
#[derive(Debug, Clone, Copy)]
pub struct Costed<'a> {
    /// The stacks.
    pub stacks: &'a Stacks,
    /// CPU µs per response.
    pub cpu_us: f64,
}

/// One frame's own CPU time per response (µs: the samples it was the running frame in, the unnamed frames it
/// called counted as its own), old and new.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The frame.
    pub name: String,
    /// Its µs per response in the old profile (0 when absent).
    pub old: f64,
    /// Its µs per response in the new one.
    pub new: f64,
}

/// The `most` frames whose own time per response changed most, largest change first. Own time, not total: a
/// method made costly grows every caller's total by as much, but only its own. Frames the profiler could not
/// name (`[unknown]`, rbspy's `(unknown) [c function]`, a C function called from Ruby) say nothing of where:
/// their samples count for the named frame that called them.
pub fn changes(old: Costed<'_>, new: Costed<'_>, most: usize) -> Vec<Change> {
    let costs = |side: Costed<'_>| -> std::collections::HashMap<String, f64> {
        let mut own: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        for (stack, count) in side.stacks.iter() {
            if let Some(frame) = stack.rsplit(';').find(|f| named(f)) {
                *own.entry(frame.to_string()).or_default() += count;
            }
        }
        let all = side.stacks.samples().max(1) as f64;
        own.into_iter().map(|(frame, n)| (frame, n as f64 / all * side.cpu_us)).collect()
    };
    let (before, after) = (costs(old), costs(new));
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    let mut changes: Vec<Change> = names
        .into_iter()
        .map(|name| Change {
            name: name.clone(),
            old: before.get(name).copied().unwrap_or(0.0),
            new: after.get(name).copied().unwrap_or(0.0),
        })
        .collect();
    changes.sort_by(|a, b| (b.new - b.old).abs().total_cmp(&(a.new - a.old).abs()).then(a.name.cmp(&b.name)));
    changes.truncate(most);
    changes
}

/// True for a frame the profiler could name.
fn named(frame: &str) -> bool {
    !frame.starts_with("[unknown]") && !frame.starts_with("(unknown)")
}

/// The differential flame graph of `old` against `new`, titled `title`: the old counts are scaled so that a frame
/// with the same time per response has the same count in both.
pub fn svg(old: Costed<'_>, new: Costed<'_>, title: &str) -> Result<String, String> {
    svg_counting(old, new, title, "samples")
}

/// [`svg`] for stacks whose counts are `unit` (`µs` for where threads blocked), their cost per response in the
/// same unit.
pub fn svg_counting(old: Costed<'_>, new: Costed<'_>, title: &str, unit: &str) -> Result<String, String> {
    let per_us = |side: Costed<'_>| side.stacks.samples() as f64 / side.cpu_us;
    let scale = if old.stacks.samples() == 0 || old.cpu_us <= 0.0 || new.cpu_us <= 0.0 {
        0.0
    } else {
        per_us(new) / per_us(old)
    };
    let (old, new) = (old.stacks, new.stacks);
    let mut stacks: Vec<&str> = old.iter().chain(new.iter()).map(|(stack, _)| stack).collect();
    stacks.sort();
    stacks.dedup();
    let lines: Vec<String> = stacks
        .iter()
        .map(|stack| format!("{stack} {} {}", (old.count(stack) as f64 * scale).round() as u64, new.count(stack)))
        .collect();
    let options = crate::flame::options(title, unit);
    crate::flame::draw(lines.iter().map(String::as_str), options).map_err(|e| format!("differential flame graph: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_whose_time_per_response_grew_comes_first_though_its_share_barely_moved() {
        // burn takes 80% of 100 µs a response (half of it in an unnamed C function it calls), then 88.9% of
        // 180 µs: its share moves 9 points, its time doubles; write keeps its 20 µs, so its share falls by more
        // than burn's rises; main and serve, burn's callers, grow in total but not on their own.
        let old = Stacks::parse("main;serve;burn 40\nmain;serve;burn;(unknown) [c function] 40\nmain;serve;write 20\n");
        let new = Stacks::parse("main;serve;burn 80\nmain;serve;burn;(unknown) [c function] 80\nmain;serve;write 20\n");
        let (old, new) = (old.unwrap(), new.unwrap());
        let (old, new) = (Costed { stacks: &old, cpu_us: 100.0 }, Costed { stacks: &new, cpu_us: 180.0 });
        let changes = changes(old, new, 3);
        let names: Vec<&str> = changes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["burn", "write"], "{changes:?}");
        assert!((changes[0].old - 80.0).abs() < 1e-9 && (changes[0].new - 160.0).abs() < 1e-9, "{changes:?}");
        assert!((changes[1].old - changes[1].new).abs() < 1e-9, "write's time did not move: {changes:?}");
    }

    #[test]
    fn the_differential_graph_scales_the_old_counts_to_the_same_time_per_response() {
        // Twice the samples for the same 100 µs a response (a longer recording): only burn's doubling is growth.
        let old = Stacks::parse("main;burn 10\nmain;write 10\n").unwrap();
        let new = Stacks::parse("main;burn 40\nmain;write 20\n").unwrap();
        let (old, new) = (Costed { stacks: &old, cpu_us: 100.0 }, Costed { stacks: &new, cpu_us: 150.0 });
        let svg = svg(old, new, "puma: old against new").unwrap();
        let title = |frame: &str| svg.split("<title>").find(|t| t.starts_with(frame)).unwrap_or_default().to_string();
        assert!(svg.contains("puma: old against new"), "{}", &svg[..400]);
        // 60 samples for 150 µs against 20 for 100 µs: old counts × 2, so write's 10 → 20 is no change.
        assert!(title("write").starts_with("write (20 samples, 33.33%; 0.00%)"), "{}", title("write"));
        assert!(title("burn").starts_with("burn (40 samples, 66.67%; +33.33%)"), "{}", title("burn"));
    }
}
