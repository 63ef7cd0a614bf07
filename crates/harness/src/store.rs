//! [`Store`]: a results directory. A new one per suite run (never overwritten); every file is written to a
//! temporary name and renamed into place, so a crash or Ctrl-C leaves whole files only.
//!
//! ```text
//! results/NAME-YYYYMMDD-HHMMSS/
//!   suite.toml            the suite as run
//!   environment.json      machine, versions, CPU split
//!   trials/SERVER/LEVEL-rREPEAT.json        one TrialRecord per trial
//!   trials/SERVER/LEVEL-rREPEAT.failed      why a trial could not run (retried by --resume)
//!   trials/SERVER/LEVEL-rREPEAT.hgrm        its latency distribution in HdrHistogram's text format
//!   logs/SERVER-rREPEAT.log                  the server's stdout and stderr
//!   summary.csv, analysis.json               what the trials add up to, written by the report at the end
//!   report.html, report.md                   the report (shootout report DIR makes them again)
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use shootout_model::run::TrialRecord;

/// A results directory.
#[derive(Debug, Clone)]
pub struct Store {
    /// Its path.
    pub dir: PathBuf,
}

impl Store {
    /// Creates `root/NAME-TIMESTAMP` (with a suffix if that exists already).
    pub fn create(root: &Path, name: &str) -> io::Result<Store> {
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let stamp: String = stamp.chars().filter(char::is_ascii_digit).take(14).collect();
        let base = format!("{}-{}-{}", file_name(name), &stamp[..8], &stamp[8..]);
        fs::create_dir_all(root)?;
        for attempt in 1.. {
            let dir = root.join(if attempt == 1 { base.clone() } else { format!("{base}-{attempt}") });
            match fs::create_dir(&dir) {
                Ok(()) => {
                    fs::create_dir_all(dir.join("trials"))?;
                    fs::create_dir_all(dir.join("logs"))?;
                    return Ok(Store { dir });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        unreachable!("the loop returns")
    }

    /// Opens an existing results directory (to resume it).
    pub fn open(dir: &Path) -> io::Result<Store> {
        if !dir.join("suite.toml").is_file() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no suite.toml in it: is it a shootout results directory?",
            ));
        }
        Ok(Store { dir: dir.to_path_buf() })
    }

    fn trial_base(&self, server: &str, level: f64, repeat: u32) -> PathBuf {
        self.dir.join("trials").join(file_name(server)).join(format!("{level}-r{repeat}"))
    }

    /// The file of a trial with this extension (`json`, `failed`, `hgrm`).
    pub fn trial_file(&self, server: &str, level: f64, repeat: u32, extension: &str) -> PathBuf {
        self.trial_base(server, level, repeat).with_extension(extension)
    }

    /// True when this trial was measured already.
    pub fn has_trial(&self, server: &str, level: f64, repeat: u32) -> bool {
        self.trial_base(server, level, repeat).with_extension("json").is_file()
    }

    /// Saves a measured trial (and forgets an earlier failure of it).
    pub fn write_trial(&self, trial: &TrialRecord) -> io::Result<()> {
        let base = self.trial_base(&trial.server, trial.level, trial.repeat);
        write_atomically(&base.with_extension("json"), serde_json::to_string_pretty(trial)?.as_bytes())?;
        let _ = fs::remove_file(base.with_extension("failed"));
        Ok(())
    }

    /// Records why a trial could not run.
    pub fn write_failure(&self, server: &str, level: f64, repeat: u32, why: &str) -> io::Result<()> {
        write_atomically(&self.trial_base(server, level, repeat).with_extension("failed"), why.as_bytes())
    }

    /// Every measured trial, in no particular order.
    pub fn trials(&self) -> io::Result<Vec<TrialRecord>> {
        let mut trials = Vec::new();
        for server in fs::read_dir(self.dir.join("trials"))? {
            for file in fs::read_dir(server?.path())? {
                let path = file?.path();
                if path.extension().is_some_and(|e| e == "json") {
                    let text = fs::read_to_string(&path)?;
                    trials.push(
                        serde_json::from_str(&text)
                            .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?,
                    );
                }
            }
        }
        Ok(trials)
    }

    /// The levels of the trials that could not run (their `.failed` files), each once, ascending.
    pub fn failed_levels(&self) -> io::Result<Vec<f64>> {
        let mut levels = Vec::new();
        for server in fs::read_dir(self.dir.join("trials"))? {
            for file in fs::read_dir(server?.path())? {
                let path = file?.path();
                if path.extension().is_some_and(|e| e == "failed") {
                    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                    if let Some(level) = stem.rsplit_once("-r").and_then(|(level, _)| level.parse::<f64>().ok()) {
                        levels.push(level);
                    }
                }
            }
        }
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        Ok(levels)
    }

    /// Where a server's log goes for one repeat.
    pub fn log_path(&self, server: &str, repeat: u32) -> PathBuf {
        self.dir.join("logs").join(format!("{}-r{repeat}.log", file_name(server)))
    }

    /// Writes a file of the results directory atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        write_atomically(&self.dir.join(name), bytes)
    }
}

/// Writes through a temporary file in the same directory, then renames it into place.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".partial");
    fs::write(&temporary, bytes)?;
    fs::rename(&temporary, path)
}

/// A name safe as a file name: letters, digits, `-`, `_` and `.`; anything else becomes `-`.
fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '-' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_levels_of_failed_trials() {
        let root = std::env::temp_dir().join(format!("shootout-store-{}", std::process::id()));
        let store = Store::create(&root, "s").unwrap();
        store.write_failure("a", 16.0, 1, "crashed").unwrap();
        store.write_failure("b", 16.0, 2, "crashed").unwrap();
        store.write_failure("b", 4.0, 1, "crashed").unwrap();
        assert_eq!(store.failed_levels().unwrap(), [4.0, 16.0]);
        fs::remove_dir_all(root).unwrap();
    }
}
