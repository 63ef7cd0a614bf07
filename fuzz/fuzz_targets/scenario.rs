//! The scenario reader (`shootout load --scenario`, a suite's `scenario`), on any text.
//!
//! Read with and without a base URL given on the command line; every error is formatted as the user would see
//! it. A scenario that reads is written back as JSON (as a coordinator sends it to its agents) and must read
//! back to the same scenario.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout_scenario::{parse, Scenario};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for base in [None, Some("http://127.0.0.1:8080/base/")] {
        match parse(text, "scenario.toml", base) {
            Ok(scenario) => {
                let json = serde_json::to_string(&scenario).expect("a scenario writes as JSON");
                let back: Scenario = serde_json::from_str(&json).expect("and reads back");
                assert_eq!(serde_json::to_string(&back).unwrap(), json, "the same scenario after a round trip");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
