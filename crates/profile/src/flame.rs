//! Flame graphs of [`Stacks`], drawn by the `inferno` crate: an SVG that carries its own script (click to
//! zoom, Ctrl-F to search), so it works inside a report opened from disk with no network.

use inferno::flamegraph::{self, Options};

use crate::Stacks;

/// The flame graph of `stacks` as SVG text, titled `title`; frames too narrow to see are merged away.
pub fn svg(stacks: &Stacks, title: &str) -> Result<String, String> {
    draw(stacks.text().lines(), title).map_err(|e| format!("flame graph: {e}"))
}

/// Draws folded `lines` (`stack COUNT`, or `stack OLD NEW` for a differential graph) as SVG text titled `title`,
/// counting samples.
pub(crate) fn draw<'a>(lines: impl IntoIterator<Item = &'a str>, title: &str) -> Result<String, String> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = "samples".to_string();
    options.deterministic = true;
    let mut out = Vec::new();
    flamegraph::from_lines(&mut options, lines, &mut out).map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flame_graph_names_its_frames_and_counts_samples() {
        let stacks = Stacks::parse("main;serve;spin 7\nmain;serve;write 3\n").unwrap();
        let svg = svg(&stacks, "target at 500/s").unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("target at 500/s"), "{}", &svg[..200]);
        assert!(svg.contains("spin (7 samples, 70.00%)"), "the frame's title gives its samples");
    }
}
