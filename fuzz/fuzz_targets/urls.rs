//! The siege-style urls file reader (`shootout load --urls`), on any text: variables, methods, inline and
//! `<file` bodies, with and without a base URL.
//!
//! Body files are looked up in a folder that does not exist, so every `<file` is a clean error; every error is
//! formatted as the user would see it.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use shootout_scenario::parse_urls;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = Path::new("/nonexistent/shootout-fuzz");
    for base in [None, Some("http://127.0.0.1:8080/")] {
        match parse_urls(text, "urls.txt", dir, base) {
            Ok(scenario) => {
                let _ = serde_json::to_string(&scenario).expect("a scenario writes as JSON");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
