//! Turns results into what people read. The code lives in seven rooms, lowest first; a room uses the rooms below
//! it and never one above (no two rooms use each other), so each can be read knowing only what is under it:
//!
//! 1. [`units`]: how durations, sizes, counts and levels are written in every format.
//! 2. [`statistics`]: the numbers under every answer: reading a figure out of a result ([`statistics::figures`]),
//!    thresholds compared on the values people read ([`statistics::bound`]), the 95% interval of a ratio of
//!    throughputs ([`statistics::interval`], on [`statistics::student_t`], checked by simulation in the tests) and
//!    the verdict it gives against the noise floor ([`statistics::verdict`]), the bounds of a latency percentile
//!    ([`statistics::quantile`]), and the seconds of a timeline measured whole ([`statistics::seconds`]).
//! 3. [`analysis`]: a suite's saved trials turned into answers: medians and spread across repeats, ratios with
//!    confidence intervals, the SLO judged on each cell and each server's answer to it ([`analysis::slo`]), the
//!    knee, what limited each cell ([`analysis::limit`]), failed trials ([`analysis::unmeasured`]), growing queues
//!    ([`analysis::queue`]), runs behind their schedule ([`analysis::behind`]), the one judge of a search's probes
//!    ([`analysis::judge`]) and each capacity ([`analysis::capacity`]), matrices along a parameter
//!    ([`analysis::by_parameter`]).
//! 4. [`compare`]: old results against new, with a verdict per server and level, and whether two runs can be
//!    compared at all ([`compare::matching`]).
//! 5. [`suite`]: a results directory gathered ([`suite::report`]) into what a suite's report says
//!    ([`suite::summary::SuiteSummary`]), its servers ranked ([`suite::ranking`]), the sentences every format
//!    shares ([`suite::words`], [`suite::verdicts`]), each figure marked against the SLO ([`suite::marks`]) and
//!    each profiled pass beside its unprofiled cell ([`suite::profiles`]).
//! 6. [`export`]: one file per format of a suite's summary (terminal, Markdown, HTML with [`export::charts`], CSV
//!    with its row, [`export::csv::TrialRow`]).
//! 7. [`load`]: one `shootout load` run: its figures ([`load::summary::LoadSummary`]), its terminal summary
//!    ([`load::text`]), which names who held a run back as [`analysis`] does a suite's cells, and its HTML page
//!    ([`load::html`]), drawn with [`export`]'s charts and style.
//!
//! A test in this file reads every file under `src/` and names each `crate::` path that reaches a room above its
//! own; a new room goes into this list, in its place, before it can be used.

pub mod analysis;
pub mod compare;
pub mod export;
pub mod load;
pub mod statistics;
pub mod suite;
pub mod units;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The rooms, lowest first: the list in this crate's documentation above.
    const ROOMS: [&str; 7] = ["units", "statistics", "analysis", "compare", "suite", "export", "load"];

    /// The place of `room` in [`ROOMS`].
    fn rank(room: &str) -> Option<usize> {
        ROOMS.iter().position(|r| *r == room)
    }

    /// The room a path after `crate::` reaches: its first name.
    fn room_of(path: &str) -> &str {
        let path = path.trim();
        let end = path.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(path.len());
        &path[..end]
    }

    /// A line without its comment: from a `//` at its start or after a space (a `//` inside `http://` stays).
    fn code(line: &str) -> &str {
        let bytes = line.as_bytes();
        let comment = (0..bytes.len().saturating_sub(1))
            .find(|&i| &bytes[i..i + 2] == b"//" && (i == 0 || bytes[i - 1].is_ascii_whitespace()));
        comment.map_or(line, |i| &line[..i])
    }

    /// Each path `code` names through `crate::`, as written after it: `analysis::limit::Limit`, and each item of
    /// `crate::{analysis::Cell, units::ms}` on its own (over several lines too), with its offset in `code`.
    fn crate_paths(code: &str) -> Vec<(usize, String)> {
        let mut paths = Vec::new();
        let mut from = 0;
        while let Some(found) = code[from..].find("crate::") {
            let at = from + found;
            from = at + "crate::".len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue; // `some_crate::`, `$crate::`
            }
            let rest = &code[from..];
            if let Some(group) = rest.strip_prefix('{') {
                let (mut depth, mut item, mut start) = (0usize, String::new(), None);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            paths.push((start.take().unwrap_or(at), std::mem::take(&mut item)));
                            continue;
                        }
                        _ => {}
                    }
                    if start.is_none() && !c.is_whitespace() {
                        start = Some(from + 1 + i);
                    }
                    item.push(c);
                }
                paths.push((start.unwrap_or(at), item));
            } else {
                let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
                paths.push((at, rest[..end].to_string()));
            }
        }
        paths.retain(|(_, path)| !path.trim().is_empty());
        paths
    }

    /// Every `.rs` file under `dir`, sorted.
    fn sources(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(sources(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        files.sort();
        files
    }

    /// Each use in `text`, the file `name` of `room`, of a room above it: `src/analysis/queue.rs:12: analysis uses
    /// export, a room above it: crate::export::Csv in `use crate::export::Csv;``.
    fn uses_above(name: &str, room: &str, text: &str) -> Vec<String> {
        let Some(own) = rank(room) else {
            return vec![format!("src/{name}: room `{room}` is not in the order lib.rs states; put it there")];
        };
        let lines: Vec<&str> = text.lines().collect();
        let code_only: String = lines.iter().map(|line| code(line)).collect::<Vec<_>>().join("\n");
        let mut found: Vec<String> = (code_only.lines().enumerate())
            .filter(|(_, code)| code.contains("super::super"))
            .map(|(n, _)| format!("src/{name}:{}: write the room's crate:: path: {}", n + 1, lines[n].trim()))
            .collect();
        for (at, path) in crate_paths(&code_only) {
            let n = code_only[..at].matches('\n').count();
            let used = room_of(&path);
            match rank(used) {
                Some(theirs) if theirs <= own => {}
                Some(_) => found.push(format!(
                    "src/{name}:{}: {room} uses {used}, a room above it: crate::{} in `{}`",
                    n + 1,
                    path.trim(),
                    lines[n].trim()
                )),
                None => found.push(format!(
                    "src/{name}:{}: crate::{} is in no room of the order lib.rs states",
                    n + 1,
                    path.trim()
                )),
            }
        }
        found
    }

    #[test]
    fn no_room_uses_a_room_above_it() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        // The order tested is the one this crate's documentation states, and every module of lib.rs is in it.
        let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
        let stated: Vec<&str> = lib
            .lines()
            .filter_map(|line| line.strip_prefix("//! "))
            .filter_map(|line| line.split_once(". [`").filter(|(n, _)| n.parse::<usize>().is_ok()))
            .filter_map(|(_, rest)| rest.split_once("`]").map(|(room, _)| room))
            .collect();
        assert_eq!(stated, ROOMS, "lib.rs's numbered list of rooms and ROOMS differ");
        let mut declared: Vec<&str> =
            lib.lines().filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';')).collect();
        declared.sort();
        let mut rooms = ROOMS.to_vec();
        rooms.sort();
        assert_eq!(declared, rooms, "every module of lib.rs is a room of the list");
        // What a use that reaches up looks like, grouped or not, and what does not.
        let said = uses_above(
            "statistics/x.rs",
            "statistics",
            "use crate::{units::ms, suite::summary::SuiteSummary};\nlet n = crate::units::count(1); // crate::load\n\
             use crate::{\n    statistics::bound,\n    compare::Verdict,\n};\n",
        );
        assert_eq!(
            said,
            [
                "src/statistics/x.rs:1: statistics uses suite, a room above it: crate::suite::summary::SuiteSummary in \
                 `use crate::{units::ms, suite::summary::SuiteSummary};`",
                "src/statistics/x.rs:5: statistics uses compare, a room above it: crate::compare::Verdict in \
                 `compare::Verdict,`"
            ]
        );
        // Every file.
        let mut found = Vec::new();
        for file in sources(&src) {
            let name = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            let room = name.split('/').next().unwrap().trim_end_matches(".rs");
            if room != "lib" {
                found.extend(uses_above(&name, room, &std::fs::read_to_string(&file).unwrap()));
            }
        }
        assert!(found.is_empty(), "the rooms, lowest first, are {ROOMS:?}; these uses reach up:\n{}", found.join("\n"));
    }
}
