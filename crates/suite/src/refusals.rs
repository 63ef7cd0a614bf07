//! What a suite may not ask for, found as the file is read, before anything starts, each at its place: server
//! names that cannot be file names or that make the same one ([`file_name`] is how a name becomes the folder of
//! its trials and its logs), a `cwd` that is not there, NUL bytes and `env` keys that no process can be given, a
//! command longer than the kernel passes to a shell, and totals past what a run can hold (trials, and servers
//! from matrices).

use std::collections::BTreeMap;
use std::path::Path;

use shootout_scenario::{FileError, Locator};
use toml::Spanned;

use crate::raw::{ServerDef, ServiceDef};

/// The most trials (servers × levels × repeats) a suite may plan: a day of 1-second trials.
pub const MOST_TRIALS: u64 = 100_000;

/// The most servers a suite's matrices may expand to.
pub const MOST_SERVERS: u64 = 10_000;

/// The longest command, setup, teardown, version command or `env` value: the kernel's limit on one argument of a
/// program (`MAX_ARG_STRLEN`), which `sh -c` is given the command as.
pub const LONGEST_ARGUMENT: usize = 128 * 1024 - 1;

/// The longest file name a server's name may make (its logs add `-rN.log`; file systems take 255 bytes).
const LONGEST_FILE_NAME: usize = 200;

/// The file name that a server's name makes, for the folder of its trials and its logs: letters, digits, `-`, `_`
/// and `.` as they are; anything else becomes `-`.
pub fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '-' }).collect()
}

/// How a results folder's name begins for the suite `name`: its [`file_name`], cut to its first 200 bytes (the
/// folder adds `-YYYYMMDD-HHMMSS` and perhaps `-N`; file systems take 255, and two servers of 150-character names
/// make a one-line suite's name of 304).
pub fn results_name(name: &str) -> String {
    let mut name = file_name(name); // ASCII: cut anywhere
    name.truncate(LONGEST_FILE_NAME);
    name
}

/// A results folder's name: the suite's [`results_name`], its stamp `YYYYMMDD-HHMMSS` (`stamp` holds its 14
/// digits, UTC), and `-N` for the `attempt`-th folder of the same second (none for the first).
pub fn results_folder(name: &str, stamp: &str, attempt: u32) -> String {
    let base = format!("{}-{}-{}", results_name(name), &stamp[..8], &stamp[8..14]);
    if attempt <= 1 {
        base
    } else {
        format!("{base}-{attempt}")
    }
}

/// The part of a results folder's name before its stamp ([`results_folder`]): `rack-hello` of
/// `rack-hello-20261129-101500` or of `rack-hello-20261129-101500-2`; none when it has no stamp (renamed).
pub fn results_folder_suite(folder: &str) -> Option<&str> {
    fn digits(text: &str, n: usize) -> bool {
        text.len() == n && text.bytes().all(|b| b.is_ascii_digit())
    }
    fn stamped(name: &str) -> Option<&str> {
        let (rest, time) = name.rsplit_once('-')?;
        let (suite, day) = rest.rsplit_once('-')?;
        (digits(time, 6) && digits(day, 8)).then_some(suite)
    }
    stamped(folder).or_else(|| {
        let (rest, attempt) = folder.rsplit_once('-')?;
        attempt.bytes().all(|b| b.is_ascii_digit()).then(|| stamped(rest)).flatten()
    })
}

/// What the refusals read of a `[[server]]` or a `[[service]]`: the same keys, checked the same way.
pub(crate) struct Launched<'a> {
    /// "server" or "service", for the messages.
    pub(crate) kind: &'static str,
    pub(crate) name: &'a Spanned<String>,
    pub(crate) command: &'a str,
    pub(crate) setup: Option<&'a String>,
    pub(crate) teardown: Option<&'a String>,
    pub(crate) version_command: Option<&'a String>,
    pub(crate) cwd: Option<&'a String>,
    pub(crate) env: &'a BTreeMap<String, String>,
    /// It runs on this machine, where its `cwd` must be (on another host, its `cwd` is a folder there).
    pub(crate) here: bool,
}

/// A `[[server]]` and a `[[service]]` name their common keys alike.
macro_rules! launched_from {
    ($def:ty, $kind:literal) => {
        impl<'a> From<&'a $def> for Launched<'a> {
            fn from(def: &'a $def) -> Launched<'a> {
                Launched {
                    kind: $kind,
                    name: &def.name,
                    command: def.command.get_ref(),
                    setup: def.setup.as_ref(),
                    teardown: def.teardown.as_ref(),
                    version_command: def.version_command.as_ref(),
                    cwd: def.cwd.as_ref(),
                    env: &def.env,
                    here: def.host.is_none(),
                }
            }
        }
    };
}

launched_from!(ServerDef, "server");
launched_from!(ServiceDef, "service");

/// Refuses a server's or service's name that makes no file name of its own (empty, `.`, `..`, control
/// characters, too long), and one whose file name an earlier one's (`earlier`) already makes (`a/b` and `a-b`).
pub(crate) fn check_name(def: &Launched<'_>, earlier: &[&String], at: &Locator<'_>) -> Result<(), FileError> {
    let (kind, name) = (def.kind, def.name.get_ref());
    let refuse = |why: String| Err(at.span(def.name.span(), format!("{kind} name {name:?}: {why}")));
    if name.trim().is_empty() || name == "." || name == ".." {
        return refuse(format!("give each {kind} a name of its own, like \"{}\"", example(kind)));
    }
    if name.chars().any(char::is_control) {
        return refuse("control characters cannot be in a name: write it on one line, without tabs".into());
    }
    let file = file_name(name);
    if file.len() > LONGEST_FILE_NAME {
        return refuse(format!("it is {} bytes as a file name: shorten it to {LONGEST_FILE_NAME}", file.len()));
    }
    if let Some(other) = earlier.iter().find(|e| file_name(e) == file && *e != &name) {
        let whose = if kind == "service" { "logs would go to the files" } else { "trials would go to the folder" };
        return refuse(format!("its {whose} of {kind} {other:?} (both make '{file}'): rename one"));
    }
    Ok(())
}

fn example(kind: &str) -> &'static str {
    if kind == "service" {
        "db"
    } else {
        "puma"
    }
}

/// Refuses what cannot be given to a server's or service's processes: NUL bytes, `env` keys that are empty or
/// hold `=`, a command longer than [`LONGEST_ARGUMENT`], and a `cwd` that is not a folder (taken from `dir`; on
/// another host it is that host's to have).
pub(crate) fn check_launched(def: &Launched<'_>, at: &Locator<'_>, dir: &Path) -> Result<(), FileError> {
    let name = def.name.get_ref();
    let refuse = |why: String| Err(at.span(def.name.span(), format!("{} '{name}': {why}", def.kind)));
    let texts = [
        ("command", Some(def.command)),
        ("setup", def.setup.map(String::as_str)),
        ("teardown", def.teardown.map(String::as_str)),
        ("version_command", def.version_command.map(String::as_str)),
        ("cwd", def.cwd.map(String::as_str)),
    ];
    let values = def.env.values().map(|v| ("an env value", Some(v.as_str())));
    for (key, text) in texts.into_iter().chain(values) {
        let Some(text) = text else { continue };
        if text.contains('\0') {
            return refuse(format!("{key} holds a NUL byte, which no process can be given: take it out"));
        }
        if text.len() > LONGEST_ARGUMENT {
            return refuse(format!(
                "{key} is {} bytes, and a shell takes at most {LONGEST_ARGUMENT}: put it in a script and run that",
                text.len()
            ));
        }
    }
    if let Some(key) = def.env.keys().find(|k| k.is_empty() || k.contains(['=', '\0'])) {
        return refuse(format!("env key {key:?}: a variable's name is not empty and holds no '=' or NUL"));
    }
    if let Some(cwd) = def.cwd.filter(|_| def.here) {
        let path = dir.join(cwd);
        if !path.is_dir() {
            return refuse(format!(
                "cwd {}: there is no such folder; check the path (it is taken from the suite's folder)",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Refuses a plan of more than [`MOST_TRIALS`] trials, before any is made; `place` is where the file says
/// `repeats` (or its start).
pub(crate) fn check_trials(
    servers: usize,
    levels: usize,
    repeats: u32,
    place: usize,
    at: &Locator<'_>,
) -> Result<(), FileError> {
    let trials = servers as u64 * levels as u64 * u64::from(repeats.max(1));
    if trials > MOST_TRIALS {
        return Err(at.at(
            place,
            format!(
                "{servers} servers × {levels} levels × {repeats} repeats make {trials} trials, more than the {MOST_TRIALS} a run can hold: \
                 take fewer repeats, levels or servers"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_folder_is_known_by_its_name_up_to_its_stamp() {
        assert_eq!(results_folder("rack hello", "20261129101500", 1), "rack-hello-20261129-101500");
        assert_eq!(results_folder("rack hello", "20261129101500", 12), "rack-hello-20261129-101500-12");
        for attempt in [1, 2, 12] {
            let folder = results_folder("a-vs-b", "20261129101500", attempt);
            assert_eq!(results_folder_suite(&folder), Some("a-vs-b"), "{folder}");
        }
        assert_eq!(results_folder_suite("my-results"), None, "renamed: no stamp");
        assert_eq!(results_folder_suite("x-2026112-101500"), None);
    }
}
