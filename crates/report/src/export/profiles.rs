//! The profiles' section of every format: for each profiled server, the profiler, the level, the samples, what
//! profiling cost it (its figures beside the unprofiled ones at that level), the frames that ran the most, and
//! how long its threads blocked; the HTML adds each server's interactive flame graphs, where its CPU went and
//! where its threads blocked.

use std::fmt::Write as _;

use maud::{html, Markup};
use shootout_profile::{flame, Frame};

use crate::suite::profiles::ProfileView;
use crate::suite::summary::SuiteSummary;

/// The section's title.
const TITLE: &str = "Where each server's CPU went";

/// Frames the terminal lists per server.
const TERMINAL_FRAMES: usize = 5;

/// `puma: rbspy at 27,200 requests/s, 981 samples in 10.0 s; throughput −2.1%, …`
fn headline(summary: &SuiteSummary, p: &ProfileView) -> String {
    format!(
        "{} at {}, {} samples in {:.1} s; {}",
        p.profiler,
        summary.level(p.level),
        crate::units::count(p.samples),
        p.seconds,
        p.cost()
    )
}

/// Where its threads blocked, in one line: `its threads blocked 12.4 s in all (the off-CPU flame graph shows
/// where)`, or why that was not recorded; none for a profile saved before shootout recorded it.
fn blocked(p: &ProfileView) -> Option<String> {
    match (p.blocked_s, &p.off_cpu_left_out) {
        (Some(s), _) => {
            Some(format!("its threads blocked {s:.1} s in all (report.html's off-CPU flame graph shows where)"))
        }
        (None, Some(why)) => Some(format!("where its threads blocked was not recorded: {why}")),
        (None, None) => None,
    }
}

/// A share as the tables write it: `41.2%`.
fn percent(share: f64) -> String {
    format!("{:.1}%", 100.0 * share)
}

/// Frames as the terminal lists them, one a line after `indent`: self share, total share, name
/// (`  40.7%   98.6%  shootout_target_server::routes::spin`).
pub fn frame_lines(frames: &[Frame], indent: &str) -> String {
    frames
        .iter()
        .map(|f| format!("{indent}{:>7} {:>7}  {}\n", percent(f.self_share), percent(f.total_share), f.name))
        .collect()
}

/// The servers whose profiled pass kept no profile, each with the first line of why.
fn failed(summary: &SuiteSummary) -> impl Iterator<Item = (&str, &str)> {
    summary.profiles_failed.iter().map(|(server, why)| (server.as_str(), why.lines().next().unwrap_or_default()))
}

/// The terminal's lines: each server's headline and its hottest frames, then each server not profiled.
pub fn text(summary: &SuiteSummary) -> String {
    let mut out = String::new();
    if summary.profiles.is_empty() && summary.profiles_failed.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n{TITLE} (self share, total share; the report has the flame graphs):");
    for p in &summary.profiles {
        let _ = writeln!(out, "  {}: {}", p.server, headline(summary, p));
        out.push_str(&frame_lines(&p.hottest[..p.hottest.len().min(TERMINAL_FRAMES)], "   "));
        if let Some(blocked) = blocked(p) {
            let _ = writeln!(out, "   {blocked}");
        }
    }
    for (server, why) in failed(summary) {
        let _ = writeln!(out, "  {server}: not profiled: {why}");
    }
    out
}

/// `report.md`'s section: a table of the hottest frames per server.
pub fn markdown(summary: &SuiteSummary) -> String {
    let mut out = String::new();
    if summary.profiles.is_empty() && summary.profiles_failed.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n## {TITLE}\n");
    for (server, why) in failed(summary) {
        let _ = writeln!(out, "**{server}**: not profiled: {why}\n");
    }
    for p in &summary.profiles {
        let _ = writeln!(out, "**{}**: {}\n", p.server, headline(summary, p));
        if !p.hottest.is_empty() {
            let _ = writeln!(out, "| self | total | frame |\n|---:|---:|---|");
        }
        for frame in &p.hottest {
            let name = frame.name.replace('|', "\\|");
            let _ = writeln!(out, "| {} | {} | `{name}` |", percent(frame.self_share), percent(frame.total_share));
        }
        out.push('\n');
        if let Some(blocked) = blocked(p) {
            let _ = writeln!(out, "{}: {blocked}.\n", p.server);
        }
    }
    out
}

/// `svg` as a `data:` URL: the flame graph is its own SVG document, its script and search its own, and
/// nothing is fetched.
fn svg_data(svg: &str) -> String {
    use base64::Engine as _;
    format!("data:image/svg+xml;base64,{}", base64::engine::general_purpose::STANDARD.encode(svg))
}

/// The height the flame graph `svg` asks for, in pixels (deep stacks make it tall), so that its frame shows it
/// whole.
fn svg_height(svg: &str) -> u32 {
    let root = svg.split("<svg").nth(1).unwrap_or_default();
    let height = root.split(" height=\"").nth(1).and_then(|rest| rest.split('"').next());
    height.and_then(|h| h.parse().ok()).unwrap_or(600)
}

/// `report.html`'s section: per server, its headline, its flame graph (in a frame of its own: click a frame to
/// zoom, Ctrl-F or the Search button to find one), and the table of its hottest frames.
pub fn html(summary: &SuiteSummary) -> Markup {
    html! {
        @if !summary.profiles.is_empty() || !summary.profiles_failed.is_empty() {
            h2 { (TITLE) }
            @for (server, why) in failed(summary) {
                p class="warn" { strong { (server) } ": not profiled: " (why) }
            }
            @for p in &summary.profiles {
                h3 { (p.server) }
                p { (headline(summary, p)) ". Profiler: " code { (p.command) } }
                @if p.stacks.is_empty() {
                    p { "No on-CPU sample: its threads were barely on a CPU while profiled." }
                } @else {
                    @match flame::svg(&p.stacks, &format!("{} at {}", p.server, summary.level(p.level))) {
                        Ok(svg) => iframe class="flame" title={ "flame graph of " (p.server) } style={ "height:" (svg_height(&svg) + 8) "px" } src=(svg_data(&svg)) {},
                        Err(e) => p class="warn" { (e) },
                    }
                    table {
                        tr { th { "self" } th { "total" } th { "frame" } }
                        @for frame in &p.hottest {
                            tr { td { (percent(frame.self_share)) } td { (percent(frame.total_share)) } td class="frame" { (frame.name) } }
                        }
                    }
                }
                @if let Some(blocked) = blocked(p) {
                    h4 { "Where " (p.server) "'s threads blocked" }
                    p { "In the same pass, " (blocked) ": each stack is wide by the time the threads that blocked in it waited until they ran again, in microseconds (a thread preempted, still runnable, is not counted; its root frame is the thread's name)." }
                }
                @if let Some(stacks) = &p.off_cpu {
                    @match flame::off_cpu_svg(stacks, &format!("{} at {}: where its threads blocked", p.server, summary.level(p.level))) {
                        Ok(svg) => iframe class="flame" title={ "off-CPU flame graph of " (p.server) } style={ "height:" (svg_height(&svg) + 8) "px" } src=(svg_data(&svg)) {},
                        Err(e) => p class="warn" { (e) },
                    }
                }
            }
        }
    }
}
