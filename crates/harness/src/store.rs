//! [`Store`]: a results directory. A new one per suite run (never overwritten); every file is written to a
//! temporary name and renamed into place, so a crash or Ctrl-C leaves whole files only.
//!
//! ```text
//! results/NAME-YYYYMMDD-HHMMSS/
//!   suite.toml            the suite as run
//!   suite.sum             its fingerprint, for --resume to find a suite.toml replaced since
//!   environment.json      machine, versions, CPU split
//!   trials/SERVER/LEVEL-rREPEAT.json        one TrialRecord per trial
//!   trials/SERVER/LEVEL-rREPEAT.failed      why a trial could not run (retried by --resume)
//!   trials/SERVER/LEVEL-rREPEAT.hgrm        its latency distribution in HdrHistogram's text format
//!   disturbed/SERVER/LEVEL-rREPEAT-N.json   a trial something outside the run disturbed, measured again since
//!   searches/SERVER.json                    a capacity search's probes and bracket, saved after each probe
//!   profiles/SERVER-LEVEL.json               a server's profiled pass (profiler, samples, its trial) ...
//!   profiles/SERVER-LEVEL.folded             ... and its stacks, folded
//!   profiles/SERVER-LEVEL.offcpu.folded      ... and where its threads blocked, in microseconds
//!   logs/SERVER-rREPEAT.log                  the server's stdout and stderr (SERVER-profile.log: profiled pass)
//!   logs/services/NAME.log                   a service's stdout and stderr, each start appended
//!   summary.csv, analysis.json               what the trials add up to, written by the report at the end
//!   report.html, report.md                   the report (shootout report DIR makes them again)
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use shootout_model::profile::ServerProfile;
use shootout_model::reading::{from_results_json, read_results_file, within};
use shootout_model::run::TrialRecord;
use shootout_model::search::ServerSearch;
use shootout_suite::{file_name, results_folder, Suite};

/// A results directory.
#[derive(Debug, Clone)]
pub struct Store {
    /// Its path.
    pub dir: PathBuf,
}

impl Store {
    /// Creates `root/NAME-TIMESTAMP` (with a suffix if that exists already): its [`results_folder`].
    pub fn create(root: &Path, name: &str) -> io::Result<Store> {
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let stamp: String = stamp.chars().filter(char::is_ascii_digit).take(14).collect();
        fs::create_dir_all(root)?;
        for attempt in 1.. {
            let dir = root.join(results_folder(name, &stamp, attempt));
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

    /// Opens an existing results directory (to report or resume it): its suite.toml must be there, a regular file
    /// inside it (a FIFO would hang the reading of it).
    pub fn open(dir: &Path) -> io::Result<Store> {
        let suite = dir.join("suite.toml");
        if fs::symlink_metadata(&suite).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no suite.toml in it: is it a shootout results directory?",
            ));
        }
        let store = Store { dir: dir.to_path_buf() };
        store.text("suite.toml").map_err(io::Error::other)?;
        Ok(store)
    }

    /// Opens a results directory to finish its run, which appends to its logs: besides what [`Store::open`] asks,
    /// `logs/` (and `logs/services/`) must be inside it and no log a symbolic link, which an append would write
    /// through, to another file of the run or out of it.
    pub fn resume(dir: &Path) -> Result<Store, String> {
        let store = Store::open(dir).map_err(|e| e.to_string())?;
        let logs = store.dir.join("logs");
        for folder in [logs.join("services"), logs] {
            within(&folder, &store.dir).map_err(|why| format!("{}: {why}", folder.display()))?;
            for entry in fs::read_dir(&folder).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
                    return Err(format!(
                        "{}: it is a symbolic link, and a run appends to its logs only in files of its own: remove it",
                        entry.path().display()
                    ));
                }
            }
        }
        Ok(store)
    }

    /// The text of this directory's file `name` (`suite.toml`, `sweep`), read as results files are
    /// ([`read_results_file`]: regular, bounded, inside); None when there is no such file.
    pub fn text(&self, name: &str) -> Result<Option<String>, String> {
        let path = self.dir.join(name);
        if fs::symlink_metadata(&path).is_err() {
            return Ok(None);
        }
        self.read(&path).map(Some).map_err(|why| format!("{}: {why}", path.display()))
    }

    /// The file of a trial with this extension (`json`, `failed`, `hgrm`): `LEVEL-rREPEAT.EXTENSION`, the
    /// extension appended, so that a fractional level keeps its digits (`2.5-r1.json`).
    pub fn trial_file(&self, server: &str, level: f64, repeat: u32, extension: &str) -> PathBuf {
        self.dir.join("trials").join(file_name(server)).join(format!("{level}-r{repeat}.{extension}"))
    }

    /// Where earlier releases put a trial's file: its extension replaced everything after the level's point,
    /// so the repeats of a fractional level (2.5 requests/s) all went to `2.json` and only the last one was kept.
    fn legacy_trial_file(&self, server: &str, level: f64, repeat: u32, extension: &str) -> PathBuf {
        self.dir.join("trials").join(file_name(server)).join(format!("{level}-r{repeat}")).with_extension(extension)
    }

    /// True when this trial was measured already: a file of either naming holds it whole (a damaged one, cut
    /// short or edited, does not: the trial is measured again, over it).
    pub fn has_trial(&self, server: &str, level: f64, repeat: u32) -> bool {
        let same = |t: TrialRecord| t.server == server && t.level == level && t.repeat == repeat;
        self.read_trial(&self.trial_file(server, level, repeat, "json")).is_ok_and(same)
            || self.read_trial(&self.legacy_trial_file(server, level, repeat, "json")).is_ok_and(same)
    }

    /// The trial measured already at `level` and `repeat`, if a file holds it whole.
    pub fn trial(&self, server: &str, level: f64, repeat: u32) -> Option<TrialRecord> {
        let same = |t: &TrialRecord| t.server == server && t.level == level && t.repeat == repeat;
        self.read_trial(&self.trial_file(server, level, repeat, "json")).ok().filter(same)
    }

    /// Where a server's capacity search is saved: `searches/SERVER.json`.
    fn search_file(&self, server: &str) -> PathBuf {
        self.dir.join("searches").join(format!("{}.json", file_name(server)))
    }

    /// Saves a server's capacity search as it stands.
    pub fn write_search(&self, search: &ServerSearch) -> io::Result<()> {
        self.write_file(&self.search_file(&search.server), serde_json::to_string_pretty(search)?.as_bytes())
    }

    /// A server's capacity search as last saved, if any.
    pub fn search(&self, server: &str) -> Option<ServerSearch> {
        self.read_search(&self.search_file(server)).ok()
    }

    /// Every server's capacity search (none for a sweep); one that cannot be read is an error naming its file.
    pub fn searches(&self) -> io::Result<Vec<ServerSearch>> {
        let Ok(entries) = fs::read_dir(self.dir.join("searches")) else { return Ok(Vec::new()) };
        let mut found = Vec::new();
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                let why =
                    |e: String| io::Error::other(format!("{}: {e}; resume the run to write it again", path.display()));
                found.push(self.read_search(&path).map_err(why)?);
            }
        }
        Ok(found)
    }

    /// Where a server's profile goes: `profiles/SERVER-LEVEL.EXTENSION` (`json` for the pass, `folded` for its
    /// stacks).
    pub fn profile_file(&self, server: &str, level: f64, extension: &str) -> PathBuf {
        self.profiles_dir().join(format!("{}.{extension}", profile_name(server, level)))
    }

    /// The folder of the profiles, where the profilers write what they record.
    pub fn profiles_dir(&self) -> PathBuf {
        self.dir.join("profiles")
    }

    /// Saves a server's profiled pass: its folded stacks, those of where its threads blocked (when it has any),
    /// then its record (which says the profile is whole).
    pub fn write_profile(&self, profile: &ServerProfile, folded: &str, off_cpu: &str) -> io::Result<()> {
        self.write_file(&self.profile_file(&profile.server, profile.level, "folded"), folded.as_bytes())?;
        if !off_cpu.is_empty() {
            self.write_file(&self.profile_file(&profile.server, profile.level, "offcpu.folded"), off_cpu.as_bytes())?;
        }
        let record = serde_json::to_string_pretty(profile)?;
        self.write_file(&self.profile_file(&profile.server, profile.level, "json"), record.as_bytes())?;
        let _ = fs::remove_file(self.profile_file(&profile.server, profile.level, "failed"));
        Ok(())
    }

    /// Records why a server's profiled pass at `level` kept no profile (`profiles/SERVER-LEVEL.failed`: the
    /// server's name on its first line, why on the rest), for the report to say.
    pub fn write_profile_failure(&self, server: &str, level: f64, why: &str) -> io::Result<()> {
        self.write_file(&self.profile_file(server, level, "failed"), format!("{server}\n{why}").as_bytes())
    }

    /// The servers whose profiled pass kept no profile, each with why, by name.
    pub fn profile_failures(&self) -> Vec<(String, String)> {
        let Ok(entries) = fs::read_dir(self.profiles_dir()) else { return Vec::new() };
        let mut found: Vec<(String, String)> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "failed"))
            .filter_map(|path| {
                let text = self.read(&path).ok()?;
                let (server, why) = text.split_once('\n')?;
                Some((server.to_string(), why.to_string()))
            })
            .collect();
        found.sort();
        found
    }

    /// Every server's profiled pass with its folded stacks (none when the run profiled nothing); one that cannot
    /// be read is an error naming its file. Its off-CPU stacks are read apart ([`Store::off_cpu_stacks`]).
    pub fn profiles(&self) -> io::Result<Vec<(ServerProfile, String)>> {
        let Ok(entries) = fs::read_dir(self.profiles_dir()) else { return Ok(Vec::new()) };
        let mut found = Vec::new();
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                let why = |e: String| io::Error::other(format!("{}: {e}", path.display()));
                let text = self.read(&path).map_err(why)?;
                let profile: ServerProfile =
                    serde_json::from_str(&text).map_err(|e| why(format!("not a server's profile ({e})")))?;
                let folded = self.read(&path.with_extension("folded")).map_err(why)?;
                found.push((profile, folded));
            }
        }
        found.sort_by(|a, b| a.0.server.cmp(&b.0.server));
        Ok(found)
    }

    /// The folded stacks of where `profile`'s threads blocked, when it recorded them; one that cannot be read is
    /// an error naming its file.
    pub fn off_cpu_stacks(&self, profile: &ServerProfile) -> io::Result<Option<String>> {
        if !matches!(profile.off_cpu, Some(shootout_model::profile::OffCpu::Recorded { .. })) {
            return Ok(None);
        }
        let path = self.profile_file(&profile.server, profile.level, "offcpu.folded");
        self.read(&path).map(Some).map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
    }

    /// True when `server` has a whole profile saved at `level` (its record, written last).
    pub fn has_profile(&self, server: &str, level: f64) -> bool {
        self.profile_file(server, level, "json").is_file()
    }

    /// The trial files that cannot be read as trials, each with why.
    pub fn damaged(&self) -> Vec<(PathBuf, String)> {
        let files = self.trial_files("json").unwrap_or_default();
        files.into_iter().filter_map(|path| Some((path.clone(), self.read_trial(&path).err()?))).collect()
    }

    /// Saves the suite as run, with its fingerprint, which [`Store::not_of`] checks when the run is resumed.
    pub fn write_suite(&self, text: &[u8]) -> io::Result<()> {
        self.write("suite.toml", text)?;
        self.write("suite.sum", fingerprint(text).as_bytes())
    }

    /// Why `suite` (read from this directory's suite.toml) is not the suite this directory's trials were measured
    /// for, if it is not: its text changed since the run started, or a trial names a server or level it does not
    /// have. None when it is.
    pub fn not_of(&self, suite: &Suite) -> Option<String> {
        let text = self.text("suite.toml").ok().flatten().unwrap_or_default();
        if let Ok(Some(sum)) = self.text("suite.sum") {
            if sum.trim() != fingerprint(text.as_bytes()) {
                return Some("its suite.toml has changed since the run started".into());
            }
        }
        // A search chooses its levels as it goes: any level is one of its own.
        let levels = suite.levels.values();
        let files = self.trial_files("json").unwrap_or_default();
        files.iter().filter_map(|path| self.read_trial(path).ok()).find_map(|t| {
            let level_known = suite.search.is_some() || levels.contains(&t.level);
            let known = suite.servers.iter().any(|s| s.name == t.server) && level_known;
            (!known).then(|| {
                format!(
                    "it holds a trial of server '{}' at level {}, which its suite.toml does not have",
                    t.server, t.level
                )
            })
        })
    }

    /// Every file under `trials/` with this extension (`json`, `failed`), in the folders of every server.
    fn trial_files(&self, extension: &str) -> io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for server in fs::read_dir(self.dir.join("trials"))? {
            for file in fs::read_dir(server?.path())? {
                let path = file?.path();
                if path.extension().is_some_and(|e| e == extension) {
                    files.push(path);
                }
            }
        }
        Ok(files)
    }

    /// Saves a measured trial (and forgets an earlier failure of it).
    pub fn write_trial(&self, trial: &TrialRecord) -> io::Result<()> {
        let file = |extension| self.trial_file(&trial.server, trial.level, trial.repeat, extension);
        self.write_file(&file("json"), serde_json::to_string_pretty(trial)?.as_bytes())?;
        let _ = fs::remove_file(file("failed"));
        Ok(())
    }

    /// Keeps aside a trial that something outside the run disturbed, before it is measured again:
    /// `disturbed/SERVER/LEVEL-rREPEAT-N.json`, its `nth` measurement.
    pub fn write_disturbed(&self, trial: &TrialRecord, nth: u32) -> io::Result<()> {
        let name = format!("{}-r{}-{nth}.json", trial.level, trial.repeat);
        let file = self.dir.join("disturbed").join(file_name(&trial.server)).join(name);
        self.write_file(&file, serde_json::to_string_pretty(trial)?.as_bytes())
    }

    /// Records why a trial could not run.
    pub fn write_failure(&self, server: &str, level: f64, repeat: u32, why: &str) -> io::Result<()> {
        self.write_file(&self.trial_file(server, level, repeat, "failed"), why.as_bytes())
    }

    /// Every measured trial, by server, repeat and level; a trial found under both namings (a legacy `2.json`
    /// beside the `2.5-r3.json` of a resumed run) once.
    pub fn trials(&self) -> io::Result<Vec<TrialRecord>> {
        let mut found: Vec<(bool, TrialRecord)> = Vec::new();
        for path in self.trial_files("json")? {
            let trial = self.read_trial(&path).map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
            if !(trial.level.is_finite() && trial.level > 0.0) {
                let why = format!("{}: level {:?} is not a level (a number above 0)", path.display(), trial.level);
                return Err(io::Error::other(why));
            }
            let named = path == self.trial_file(&trial.server, trial.level, trial.repeat, "json");
            found.push((named, trial));
        }
        // The file named after its trial first, then one trial per server, level and repeat.
        found.sort_by(|(a, x), (b, y)| {
            (&x.server, x.repeat).cmp(&(&y.server, y.repeat)).then(x.level.total_cmp(&y.level)).then(b.cmp(a))
        });
        found.dedup_by(|later, first| {
            (&later.1.server, later.1.level, later.1.repeat) == (&first.1.server, first.1.level, first.1.repeat)
        });
        Ok(found.into_iter().map(|(_, trial)| trial).collect())
    }

    /// The levels of the trials that could not run (their `.failed` files), each once, ascending.
    pub fn failed_levels(&self) -> io::Result<Vec<f64>> {
        let mut levels = Vec::new();
        for path in self.trial_files("failed")? {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if let Some(level) = stem.rsplit_once("-r").and_then(|(level, _)| level.parse::<f64>().ok()) {
                levels.push(level);
            }
        }
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        Ok(levels)
    }

    /// Where a server's log goes for one repeat; repeat 0 is its profiled pass (`SERVER-profile.log`).
    pub fn log_path(&self, server: &str, repeat: u32) -> PathBuf {
        let pass = if repeat == PROFILED_PASS { "profile".to_string() } else { format!("r{repeat}") };
        self.dir.join("logs").join(format!("{}-{pass}.log", file_name(server)))
    }

    /// Writes a file of the results directory atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.write_file(&self.dir.join(name), bytes)
    }

    /// Writes `path`, a file of the results directory, atomically; one reached through a symbolic link out of the
    /// directory is refused, and nothing is written there.
    pub fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        within(path, &self.dir).map_err(|why| io::Error::other(format!("{}: {why}", path.display())))?;
        write_atomically(path, bytes)
    }

    /// The text of a file of the results directory: a regular file of bounded size, inside it
    /// ([`read_results_file`]).
    pub fn read(&self, path: &Path) -> Result<String, String> {
        read_results_file(path, Some(&self.dir))
    }

    /// A search read from its file, or why it cannot be.
    fn read_search(&self, path: &Path) -> Result<ServerSearch, String> {
        let text = self.read(path)?;
        from_results_json(&text).map_err(|e| format!("not a server's search ({e})"))
    }

    /// A trial read from its file, or why it cannot be.
    fn read_trial(&self, path: &Path) -> Result<TrialRecord, String> {
        from_results_json(&self.read(path)?)
    }
}

/// The name a server's profile at `level` goes by, its files' names without their extension: `SERVER-LEVEL`.
pub fn profile_name(server: &str, level: f64) -> String {
    format!("{}-{level}", file_name(server))
}

/// The repeat number of a server's profiled pass, after its measured repeats (which count from 1).
pub const PROFILED_PASS: u32 = 0;

/// A fingerprint of a suite's text (64-bit FNV-1a, in hex): what `--resume` compares to find a suite.toml that was
/// replaced after the run started.
fn fingerprint(text: &[u8]) -> String {
    let hash =
        text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3));
    format!("{hash:016x}")
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

    fn trial(server: &str, level: f64, repeat: u32) -> TrialRecord {
        let text = include_str!("../../report/tests/trial.json");
        let mut t: TrialRecord = serde_json::from_str(text).unwrap();
        (t.server, t.level, t.repeat) = (server.into(), level, repeat);
        t
    }

    /// The repeats of a fractional level (the open model's 2.5 requests/s) went to one file, `2.json`, each
    /// overwriting the one before: measured data lost.
    #[test]
    fn every_repeat_of_a_fractional_level_is_kept_and_read_back() {
        let root = std::env::temp_dir().join(format!("shootout-store-fraction-{}", std::process::id()));
        let store = Store::create(&root, "s").unwrap();
        for (level, repeat) in [(0.5, 1), (0.5, 2), (2.5, 1), (2.5, 2)] {
            store.write_trial(&trial("a", level, repeat)).unwrap();
        }
        let mut kept: Vec<(f64, u32)> = store.trials().unwrap().iter().map(|t| (t.level, t.repeat)).collect();
        kept.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        assert_eq!(kept, [(0.5, 1), (0.5, 2), (2.5, 1), (2.5, 2)]);
        assert!(store.trial_file("a", 2.5, 2, "json").ends_with("trials/a/2.5-r2.json"));
        assert!(store.has_trial("a", 0.5, 2) && !store.has_trial("a", 0.5, 3));
        store.write_failure("a", 2.5, 3, "crashed").unwrap();
        assert_eq!(store.failed_levels().unwrap(), [2.5], "the level read back from 2.5-r3.failed");
        fs::remove_dir_all(root).unwrap();
    }

    /// A results directory written before keeps its trials: a level's `2.json` (2.5 requests/s, repeat 3) is read,
    /// counts as measured when resuming, and is read once beside the same trial under its new name.
    #[test]
    fn a_trial_under_the_earlier_name_is_still_read() {
        let root = std::env::temp_dir().join(format!("shootout-store-legacy-{}", std::process::id()));
        let store = Store::create(&root, "s").unwrap();
        let legacy = store.dir.join("trials/a/2.json");
        write_atomically(&legacy, serde_json::to_string(&trial("a", 2.5, 3)).unwrap().as_bytes()).unwrap();
        write_atomically(
            &store.dir.join("trials/a/4-r1.json"),
            serde_json::to_string(&trial("a", 4.0, 1)).unwrap().as_bytes(),
        )
        .unwrap();
        assert!(store.has_trial("a", 2.5, 3) && store.has_trial("a", 4.0, 1), "measured: not run again on --resume");
        assert!(!store.has_trial("a", 2.5, 1), "2.json holds repeat 3 only");
        assert_eq!(store.trials().unwrap().len(), 2);
        store.write_trial(&trial("a", 2.5, 3)).unwrap();
        let read: Vec<(f64, u32)> = store.trials().unwrap().iter().map(|t| (t.level, t.repeat)).collect();
        assert_eq!(read, [(4.0, 1), (2.5, 3)], "one copy of 2.5 r3, by repeat then level");
        fs::remove_dir_all(root).unwrap();
    }
}
