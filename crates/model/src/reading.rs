//! [`from_results_json`]: a results document (a trial, a search, a load result) read from its JSON text, with every
//! figure held to what a measurement can be. JSON cannot hold an infinity or a NaN, but it can hold `1e308`, which
//! turns into one at the first sum of two: a median of two repeats, a ratio's interval. A figure written as a
//! fraction beyond [`LARGEST_FIGURE`] (more than any rate, duration in µs or byte count a run reaches) is refused,
//! naming its field, before any report or comparison is drawn from it.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The largest magnitude a fractional figure of a results file may have: 10^15 (a rate of a thousand million million
/// requests per second, 31 years in microseconds, a petabyte). Integer counts are read as they are.
pub const LARGEST_FIGURE: f64 = 1e15;

/// Parses `text` as a `T`, first refusing any fractional figure beyond [`LARGEST_FIGURE`]: the error names its field
/// (`throughput.requests_per_s is 1e308, …`).
pub fn from_results_json<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if let Some((field, figure)) = out_of_range(&value, String::new()) {
        return Err(format!(
            "{field} is {figure:e}, beyond any figure a run measures: the file was damaged or edited; run it again"
        ));
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// The first fractional figure beyond [`LARGEST_FIGURE`] under `value`, with its path from `at`.
fn out_of_range(value: &Value, at: String) -> Option<(String, f64)> {
    let join = |key: &str| if at.is_empty() { key.to_string() } else { format!("{at}.{key}") };
    match value {
        Value::Number(n) if n.is_f64() => {
            n.as_f64().filter(|f| !f.is_finite() || f.abs() > LARGEST_FIGURE).map(|f| (at.clone(), f))
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| out_of_range(v, format!("{at}[{i}]"))),
        Value::Object(fields) => fields.iter().find_map(|(k, v)| out_of_range(v, join(k))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_no_run_measures_is_refused_by_its_field() {
        let read = |text: &str| from_results_json::<Value>(text);
        assert!(read(r#"{"throughput": {"requests_per_s": 1234.5}, "bytes": 18446744073709551615}"#).is_ok());
        let why = read(r#"{"throughput": {"requests_per_s": 1e308}}"#).unwrap_err();
        assert!(why.starts_with("throughput.requests_per_s is 1e308, beyond any figure"), "{why}");
        let why = read(r#"{"timeline": [{"p": 1.0}, {"p": -2e16}]}"#).unwrap_err();
        assert!(why.starts_with("timeline[1].p is -2e16"), "{why}");
        assert!(read("{").is_err(), "not JSON");
    }
}
