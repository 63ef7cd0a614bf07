//! Flame graphs of [`Stacks`], drawn by the `inferno` crate: an SVG that carries its own script (click to
//! zoom, Ctrl-F to search), so it works inside a report opened from disk with no network.

use inferno::flamegraph::color::{BasicPalette, Palette};
use inferno::flamegraph::{self, Options};

use crate::Stacks;

/// The flame graph of `stacks` as SVG text, titled `title`; frames too narrow to see are merged away.
pub fn svg(stacks: &Stacks, title: &str) -> Result<String, String> {
    draw(stacks.text().lines(), options(title, "samples")).map_err(|e| format!("flame graph: {e}"))
}

/// The flame graph of where threads blocked ([`crate::off_cpu`]: stacks weighed in microseconds), titled
/// `title`, in the blue of off-CPU graphs.
pub fn off_cpu_svg(stacks: &Stacks, title: &str) -> Result<String, String> {
    let mut options = options(title, "µs");
    options.colors = Palette::Basic(BasicPalette::Blue);
    draw(stacks.text().lines(), options).map_err(|e| format!("flame graph: {e}"))
}

/// Draws folded `lines` (`stack COUNT`, or `stack OLD NEW` for a differential graph) as SVG text with `options`.
pub(crate) fn draw<'a>(lines: impl IntoIterator<Item = &'a str>, mut options: Options) -> Result<String, String> {
    let mut out = Vec::new();
    flamegraph::from_lines(&mut options, lines, &mut out).map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// The options every graph is drawn with: its title, what its counts are (`unit`), and the same drawing for the
/// same stacks.
pub(crate) fn options(title: &str, unit: &str) -> Options<'static> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = unit.to_string();
    options.deterministic = true;
    options
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
        let blocked = Stacks::parse("worker;read;schedule_[k] 9000\nworker;futex_wait_[k] 1000\n").unwrap();
        let svg = off_cpu_svg(&blocked, "blocked").unwrap();
        assert!(svg.contains("read (9,000 µs, 90.00%)"), "an off-CPU frame gives its time blocked");
    }
}
