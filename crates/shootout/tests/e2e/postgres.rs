//! A PostgreSQL of a test's own, as a suite's `[[service]]`: Debian's newest server, made by the suite's setup in
//! the test's folder (initdb, a free port, no Unix socket), so nothing of the machine's own cluster is touched.
//! Shared by the tests of services, of hosts and of the limit column.

use std::path::{Path, PathBuf};

/// The folder of the newest PostgreSQL's programs (Debian's `postgresql` package).
pub fn postgres_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (.ci/run installs Debian's postgresql)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("postgres").is_file())
        .collect();
    found.sort_by_key(|bin| bin.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0));
    found.pop().expect("a PostgreSQL server in /usr/lib/postgresql/*/bin")
}

/// What runs a PostgreSQL program: as the `postgres` user when the tests run as root, which PostgreSQL refuses
/// (setpriv execs, so the postmaster is the service's own process); the folder is made theirs too.
fn as_postgres(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to this process's effective user.
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        return String::new();
    }
    let id = |flag: &str| -> u32 {
        let output = std::process::Command::new("id").args([flag, "postgres"]).output().unwrap();
        assert!(output.status.success(), "Debian's postgresql makes a postgres user");
        String::from_utf8_lossy(&output.stdout).trim().parse().unwrap()
    };
    std::os::unix::fs::chown(dir, Some(id("-u")), Some(id("-g"))).unwrap();
    "setpriv --reuid=postgres --regid=postgres --clear-groups -- ".into()
}

/// A `[[service]]` named `db`: a PostgreSQL of its own in `dir`, made by its setup (a template database with one
/// table, `seen`), reset to a fresh copy of the template before each server, stopped by SIGINT; `more` adds keys
/// (`host = "ssh:h2"`).
pub fn postgres_service(dir: &Path, more: &str) -> String {
    let (bin, run_as) = (postgres_bin().display().to_string(), as_postgres(dir));
    let single =
        |database: &str, sql: &str| format!("echo '{sql}' | {run_as}{bin}/postgres --single -D data {database}");
    let setup = format!(
        "rm -rf data && {run_as}{bin}/initdb -D data --auth=trust -U postgres -E UTF8 --locale=C.UTF-8 -N && {} && {}",
        single("postgres", "CREATE DATABASE bench_template"),
        single("bench_template", "CREATE TABLE seen(server text)")
    );
    let psql = format!("{bin}/psql -q -h 127.0.0.1 -p {{port}} -U postgres -d postgres -v ON_ERROR_STOP=1");
    format!(
        "[[service]]\nname = \"db\"\n{more}setup = \"{setup}\"\n\
         command = \"{run_as}{bin}/postgres -D data -p {{port}} -c listen_addresses=127.0.0.1 -c unix_socket_directories=\"\n\
         ready = {{ command = \"{bin}/pg_isready -q -h 127.0.0.1 -p {{port}} -U postgres -d postgres\" }}\n\
         reset = \"{psql} -c 'DROP DATABASE IF EXISTS bench WITH (FORCE)' -c 'CREATE DATABASE bench TEMPLATE bench_template'\"\n\
         stop = {{ signal = \"INT\" }}\nversion_command = \"{bin}/postgres --version\"\n"
    )
}
