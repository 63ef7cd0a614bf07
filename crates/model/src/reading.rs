//! [`from_results_json`]: a results document (a trial, a search, a load result) read from its JSON text, with every
//! figure held to what a measurement can be. JSON cannot hold an infinity or a NaN, but it can hold `1e308`, which
//! turns into one at the first sum of two: a median of two repeats, a ratio's interval. A figure written as a
//! fraction beyond [`LARGEST_FIGURE`] (more than any rate, duration in µs or byte count a run reaches) is refused,
//! naming its field, before any report or comparison is drawn from it; so is a figure below zero, which no run
//! measures, but in the fields that place a moment before another ([`MAY_BE_NEGATIVE`]).
//!
//! [`read_results_file`]: a results file's text, read only from a regular file of at most [`LARGEST_FILE`] bytes
//! and, within a results folder, only from inside it: a FIFO would hang a report, a link to `/dev/zero` would
//! grow it without end, and a link out of the folder would read (and the report would write) somewhere else.

use std::io::Read;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most bytes a results file may hold: 256 MiB, hundreds of times what a trial of an hour, sampled every
/// 100 ms, writes (about 5 MiB), and far less than the memory it takes to read.
pub const LARGEST_FILE: u64 = 256 << 20;

/// The text of the results file at `path`, when it is a regular file of at most [`LARGEST_FILE`] bytes and, with
/// `folder`, resolves to a place inside it (a symbolic link within the folder is followed); otherwise why not,
/// in words that end with what to do.
pub fn read_results_file(path: &Path, folder: Option<&Path>) -> Result<String, String> {
    if let Some(folder) = folder {
        within(path, folder)?;
    }
    let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !metadata.is_file() {
        return Err(format!("it is {}, not a regular file: results are read only from files", file_kind(&metadata)));
    }
    if metadata.len() > LARGEST_FILE {
        return Err(format!(
            "it holds {} bytes, more than the {} MiB a results file may: it is not one shootout wrote",
            metadata.len(),
            LARGEST_FILE >> 20
        ));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(LARGEST_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > LARGEST_FILE {
        return Err(format!("it grew past the {} MiB a results file may while it was read", LARGEST_FILE >> 20));
    }
    String::from_utf8(bytes).map_err(|_| "it is not text (UTF-8): it is not a file shootout wrote".into())
}

/// Whether `path` (which may not exist yet) resolves to a place inside `folder`: its deepest existing ancestor,
/// links followed, must be the folder or under it.
pub fn within(path: &Path, folder: &Path) -> Result<(), String> {
    let root = std::fs::canonicalize(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let mut existing = path;
    let real = loop {
        match std::fs::canonicalize(existing) {
            Ok(real) => break real,
            Err(_) => match existing.parent() {
                Some(parent) => existing = parent,
                None => return Ok(()),
            },
        }
    };
    if real.starts_with(&root) {
        return Ok(());
    }
    Err(format!(
        "it is reached through a symbolic link out of the results folder {} (to {}): results are read and written \
         only inside it; replace the link with the files themselves",
        folder.display(),
        real.display()
    ))
}

/// What a file that is not a regular one is, for a message.
fn file_kind(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The largest magnitude a fractional figure of a results file may have: 10^15 (a rate of a thousand million million
/// requests per second, 31 years in microseconds, a petabyte). Integer counts are read as they are.
pub const LARGEST_FIGURE: f64 = 1e15;

/// The fields of a results file whose figures may be below zero: a sample's time (before its window, in the
/// warm-up) and an agent's clock offset from the coordinator's.
pub const MAY_BE_NEGATIVE: [&str; 2] = ["t_s", "clock_offset_ms"];

/// Parses `text` as a `T`, first refusing any fractional figure beyond [`LARGEST_FIGURE`], and any figure below zero
/// outside [`MAY_BE_NEGATIVE`]: the error names its field (`throughput.requests_per_s is 1e308, …`).
pub fn from_results_json<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if let Some((field, figure)) = out_of_range(&value, String::new(), false) {
        let (figure, why) = if figure.is_finite() && figure.abs() <= LARGEST_FIGURE {
            (figure.to_string(), "below zero, as no figure a run measures is")
        } else {
            (format!("{figure:e}"), "beyond any figure a run measures")
        };
        return Err(format!("{field} is {figure}, {why}: the file was damaged or edited; run it again"));
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// The first figure under `value` that no run measures, with its path from `at`: a fraction beyond
/// [`LARGEST_FIGURE`], or (unless `signed`, a field of [`MAY_BE_NEGATIVE`]) a number below zero.
fn out_of_range(value: &Value, at: String, signed: bool) -> Option<(String, f64)> {
    let join = |key: &str| if at.is_empty() { key.to_string() } else { format!("{at}.{key}") };
    match value {
        Value::Number(n) => n
            .as_f64()
            .filter(|f| (n.is_f64() && (!f.is_finite() || f.abs() > LARGEST_FIGURE)) || (!signed && *f < 0.0))
            .map(|f| (at.clone(), f)),
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, v)| out_of_range(v, format!("{at}[{i}]"), signed))
        }
        Value::Object(fields) => {
            fields.iter().find_map(|(k, v)| out_of_range(v, join(k), MAY_BE_NEGATIVE.contains(&k.as_str())))
        }
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
        assert!(why.starts_with("timeline[1].p is -2e16, beyond"), "{why}");
        let why = read(r#"{"throughput": {"requests_per_s": -5.0}}"#).unwrap_err();
        assert!(why.starts_with("throughput.requests_per_s is -5, below zero"), "{why}");
        assert!(read(r#"{"requests": {"total": -3}}"#).unwrap_err().contains("below zero"));
        assert!(read(r#"{"samples": [{"t_s": -0.5}], "agents": [{"clock_offset_ms": -1.5}]}"#).is_ok());
        assert!(read("{").is_err(), "not JSON");
    }
}
