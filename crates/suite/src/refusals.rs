//! What a suite may not ask for, found as the file is read, before anything starts, each at its place: server
//! names that cannot be file names or that make the same one ([`file_name`] is how a name becomes the folder of
//! its trials and its logs), a `cwd` that is not there, NUL bytes and `env` keys that no process can be given, a
//! command longer than the kernel passes to a shell, and totals past what a run can hold (trials, and servers
//! from matrices).

use std::path::Path;

use shootout_scenario::{FileError, Locator};

use crate::raw::ServerDef;

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

/// Refuses a server's name that makes no file name of its own (empty, `.`, `..`, control characters, too long),
/// and one whose file name an earlier server's already makes (`a/b` and `a-b`).
pub(crate) fn check_name(def: &ServerDef, earlier: &[ServerDef], at: &Locator<'_>) -> Result<(), FileError> {
    let name = def.name.get_ref();
    let refuse = |why: String| Err(at.span(def.name.span(), format!("server name {name:?}: {why}")));
    if name.trim().is_empty() || name == "." || name == ".." {
        return refuse("give each server a name of its own, like \"puma\"".into());
    }
    if name.chars().any(char::is_control) {
        return refuse("control characters cannot be in a name: write it on one line, without tabs".into());
    }
    let file = file_name(name);
    if file.len() > LONGEST_FILE_NAME {
        return refuse(format!("it is {} bytes as a file name: shorten it to {LONGEST_FILE_NAME}", file.len()));
    }
    if let Some(other) = earlier.iter().find(|e| file_name(e.name.get_ref()) == file && e.name.get_ref() != name) {
        return refuse(format!(
            "its trials would go to the folder of server {:?} (both make '{file}'): rename one",
            other.name.get_ref()
        ));
    }
    Ok(())
}

/// Refuses what cannot be given to a server's processes: NUL bytes, `env` keys that are empty or hold `=`, a
/// command longer than [`LONGEST_ARGUMENT`], and a `cwd` that is not a folder (taken from `dir`).
pub(crate) fn check_server(def: &ServerDef, at: &Locator<'_>, dir: &Path) -> Result<(), FileError> {
    let name = def.name.get_ref();
    let refuse = |why: String| Err(at.span(def.name.span(), format!("server '{name}': {why}")));
    let texts = [
        ("command", Some(def.command.get_ref())),
        ("setup", def.setup.as_ref()),
        ("teardown", def.teardown.as_ref()),
        ("version_command", def.version_command.as_ref()),
        ("cwd", def.cwd.as_ref()),
    ];
    let values = def.env.values().map(|v| ("an env value", Some(v)));
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
    if let Some(cwd) = &def.cwd {
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
