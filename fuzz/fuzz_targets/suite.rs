//! The suite reader, on any text: a suite is a file people share and download.
//!
//! Both sweeps are read, and the outline that `report` reads from a results directory; every error is
//! formatted as the user would see it (`file:line:column: what`), so that a position inside a multi-byte
//! character or past the end is found. A suite that reads must also give its outline.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use shootout_suite::{outline, parse_sweep, Sweep};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = Path::new("/nonexistent/shootout-fuzz");
    for sweep in [Sweep::Short, Sweep::Full] {
        match parse_sweep(text, "suite.toml", dir, sweep) {
            Ok(suite) => {
                let _ = format!("{suite:?}");
                outline(text, "suite.toml", sweep).expect("a suite that reads has an outline");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    for sweep in [Sweep::Short, Sweep::Full, Sweep::Smoke] {
        if let Err(e) = outline(text, "suite.toml", sweep) {
            let _ = e.to_string();
        }
    }
});
