//! The one-line shootout: `shootout run --server 'puma=puma -b tcp://127.0.0.1:{port} config.ru' --server …`
//! compares servers without a suite file, as hyperfine compares commands. The flags are written into a suite's
//! TOML, which is then read like any suite file and kept in the results folder as `suite.toml`: the command
//! line's first draft of a suite, which `shootout run` takes again as it is.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use clap::Args;

use super::{duration_arg, Failure};

/// The flags that make a suite of their own.
#[derive(Debug, Clone, Args)]
pub struct OneLine {
    /// A server to compare, as NAME=COMMAND (repeat for each); the command runs under sh -c, with {port} the free
    /// port shootout chose for it: --server 'puma=puma -b tcp://127.0.0.1:{port} config.ru'. The name ends at the
    /// first `=`.
    #[arg(long = "server", value_name = "NAME=COMMAND", conflicts_with_all = ["suite", "resume"])]
    pub servers: Vec<String>,
    /// With --server: the path loaded on every server [default: /].
    #[arg(long, value_name = "PATH", requires = "servers")]
    pub path: Option<String>,
    /// With --server: the levels of the closed model, users each with one request in flight [default: 1,8,64].
    #[arg(long, value_name = "N,N,…", value_delimiter = ',', requires = "servers", conflicts_with = "rates")]
    pub connections: Vec<u32>,
    /// With --server: the levels of the open model, requests per second.
    #[arg(long, value_name = "R,R,…", value_delimiter = ',', requires = "servers")]
    pub rates: Vec<f64>,
    /// With --server: measured time per level [default: 10s].
    #[arg(long, value_name = "D", value_parser = duration_arg, requires = "servers")]
    pub duration: Option<Duration>,
    /// With --server: load sent before each level's measurement, not counted [default: 2s].
    #[arg(long, value_name = "D", value_parser = duration_arg, requires = "servers")]
    pub warmup: Option<Duration>,
    /// With --server: how many times the whole sweep runs, servers taking turns [default: 3].
    #[arg(long, value_name = "N", requires = "servers")]
    pub repeats: Option<u32>,
    /// With --server: an objective, as --fail-if writes them ('mean<1s', 'p99<200ms', 'errors<1%'); repeatable.
    #[arg(long, value_name = "COND", requires = "servers")]
    pub slo: Vec<String>,
    /// With --server and --slo: find each server's capacity under the SLO instead of sweeping the levels (in the
    /// open model unless --connections is given). Implied by --slo without --rates or --connections.
    #[arg(long, requires = "slo")]
    pub search: bool,
    /// With --server: the CPUs every server runs on ('1', '1-3') [default: every CPU but the client's, CPU 0]. A
    /// server of more busy workers than CPUs is held to them, and the report says so.
    #[arg(long, value_name = "LIST", requires = "servers")]
    pub cpus: Option<String>,
    /// With --server: a parameter and its values, as NAME=V,V,… ('workers=1,2,4'): each server whose command
    /// holds {NAME} runs once per value, its name and command filled with it (a suite's matrix); repeatable.
    #[arg(long = "param", value_name = "NAME=V,V,…", requires = "servers")]
    pub params: Vec<String>,
    /// With --server: the suite's name, in its results folder's name [default: the servers' names].
    #[arg(long, value_name = "NAME", requires = "servers")]
    pub name: Option<String>,
}

impl OneLine {
    /// The suite these flags make, as TOML, headed by the command line that made it; `typed` is that command line,
    /// and `here` the folder it was typed in, where each server's command runs (`cwd`, so that the suite runs as it
    /// is from anywhere, `./app.sh {port}` too).
    pub fn suite(&self, typed: &[String], here: &Path) -> Result<String, Failure> {
        let mut servers = Vec::new();
        for server in &self.servers {
            writable("--server", server)?;
            let written = |(n, c): &(&str, &str)| !n.trim().is_empty() && !c.trim().is_empty();
            let (name, command) = server.split_once('=').filter(written).ok_or_else(|| {
                Failure::Usage(format!(
                    "--server '{server}': write NAME=COMMAND, e.g. --server 'puma=puma -b tcp://127.0.0.1:{{port}} \
                     config.ru'"
                ))
            })?;
            servers.push((name.trim(), command.trim()));
        }
        if servers.len() < 2 {
            return Err(Failure::Usage(
                "--server: give two servers or more to compare (one --server NAME=COMMAND for each)".into(),
            ));
        }
        if let Some(name) = &self.name {
            writable("--name", name)?;
        }
        if let Some(path) = &self.path {
            writable("--path", path)?;
            if !path.starts_with('/') {
                return Err(Failure::Usage(format!(
                    "--path {path}: write the path from its root, e.g. --path /{}",
                    path.trim_start_matches('/')
                )));
            }
        }
        // What would measure nothing is refused by its flag, before the suite is written (where a NaN is no
        // TOML, and a zero passed).
        if let Some(rate) = self.rates.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(Failure::Usage(format!(
                "--rates {rate}: give arrival rates above 0 requests/s, e.g. --rates 100,200,400"
            )));
        }
        if self.duration == Some(Duration::ZERO) {
            return Err(Failure::Usage("--duration 0s: give a measured time above 0, e.g. --duration 10s".into()));
        }
        let window = Some(self.duration.unwrap_or(shootout_model::settings::DEFAULT_DURATION));
        for &rate in &self.rates {
            if let Some(why) = shootout_model::settings::unrunnable_rate(rate, window) {
                let rate = shootout_model::settings::rate_text(rate);
                return Err(Failure::Usage(format!("--rates {rate}: {why}")));
            }
        }
        if self.repeats == Some(0) {
            return Err(Failure::Usage("--repeats 0: give 1 or more, e.g. --repeats 3".into()));
        }
        for condition in &self.slo {
            shootout_model::slo::parse_condition(condition).map_err(|e| Failure::Usage(format!("--slo {e}")))?;
        }
        if let Some(cpus) = &self.cpus {
            check_cpus(cpus, available_cpus())?;
        }
        let params = self.params.iter().map(|p| param(p, &servers)).collect::<Result<Vec<_>, _>>()?;
        // An objective without levels asks for the capacity under it: the search finds it.
        let search = self.search || (!self.slo.is_empty() && self.rates.is_empty() && self.connections.is_empty());
        let name =
            self.name.clone().unwrap_or_else(|| servers.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" vs "));
        let mut text = String::from(
            "# A suite made by shootout's command line, to run again as it is (shootout run suite.toml):\n#",
        );
        for word in typed {
            let _ = write!(text, " {}", shell_word(word));
        }
        let _ = write!(text, "\nname = {}\n", quoted(&name));
        if let Some(repeats) = self.repeats {
            let _ = writeln!(text, "repeats = {repeats}");
        }
        if let Some(duration) = self.duration {
            let _ = writeln!(text, "duration = {}", quoted(&written(duration)));
        }
        if let Some(warmup) = self.warmup {
            let _ = writeln!(text, "warmup = {}", quoted(&written(warmup)));
        }
        if !self.rates.is_empty() {
            // Whole rates as integers (`1000`, not `1000.0`), as people write them.
            let rates: Vec<String> = self
                .rates
                .iter()
                .map(|r| if r.fract() == 0.0 && r.abs() < 1e15 { format!("{r}") } else { format!("{r:?}") })
                .collect();
            let _ = writeln!(text, "rates = [{}]", rates.join(", "));
        } else if !self.connections.is_empty() {
            let levels: Vec<String> = self.connections.iter().map(u32::to_string).collect();
            let _ = writeln!(text, "connections = [{}]", levels.join(", "));
        } else if !search {
            text.push_str("connections = [1, 8, 64]\n");
        }
        if !self.slo.is_empty() {
            let slo: Vec<String> = self.slo.iter().map(|s| quoted(s)).collect();
            let _ = writeln!(text, "slo = [{}]", slo.join(", "));
        }
        if search {
            let model = if self.connections.is_empty() { "open" } else { "closed" };
            let _ = writeln!(text, "search = {{ model = {} }}", quoted(model));
        }
        let _ = write!(text, "\n[load]\npath = {}\n", quoted(self.path.as_deref().unwrap_or("/")));
        for (name, command) in servers {
            let _ = write!(text, "\n[[server]]\nname = {}\ncommand = {}\n", quoted(name), quoted(command));
            let _ = writeln!(text, "cwd = {}", quoted(&here.display().to_string()));
            if let Some(cpus) = &self.cpus {
                let _ = writeln!(text, "cpus = {}", quoted(cpus));
            }
            let used: Vec<String> = params
                .iter()
                .filter(|(name, _)| command.contains(&format!("{{{name}}}")))
                .map(|(name, values)| format!("{name} = [{}]", values.join(", ")))
                .collect();
            if !used.is_empty() {
                let _ = writeln!(text, "matrix = {{ {} }}", used.join(", "));
            }
        }
        Ok(text)
    }
}

/// The CPUs of this machine.
fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Refuses a `--cpus` list this machine of `available` CPUs cannot give the servers: one it cannot read, a CPU it
/// does not have, or the client's own CPU 0 (with two or more CPUs the client runs there, and a server beside it
/// would take the CPU the load is measured with).
fn check_cpus(list: &str, available: usize) -> Result<(), Failure> {
    let refuse = |why: String| Err(Failure::Usage(format!("--cpus {list}: {why}")));
    let Some(cpus) = shootout_harness::process::parse_cpus(list) else {
        return refuse("write CPUs as a list, e.g. --cpus 1 or --cpus 1-3 or --cpus 1,3".into());
    };
    let last = available - 1;
    if let Some(cpu) = cpus.iter().find(|&&cpu| cpu > last) {
        return refuse(format!("this machine has no CPU {cpu}: its CPUs are 0-{last}"));
    }
    match shootout_suite::servers_cpus(available) {
        Some(apart) if cpus.contains(&0) => refuse(format!(
            "CPU 0 is the client's, and a server beside it would take the CPU the load is measured with: give \
             the servers the others (--cpus {apart}), or share it knowingly with cpus in the suite file this run \
             writes"
        )),
        _ => Ok(()),
    }
}

/// A `--param NAME=V,V,…` as its name and its values written as TOML (whole numbers as numbers), refused with the
/// fix when its name is not one a matrix may take or no command of `servers` holds `{NAME}`.
fn param(written: &str, servers: &[(&str, &str)]) -> Result<(String, Vec<String>), Failure> {
    writable("--param", written)?;
    let refuse = |why: String| Err(Failure::Usage(format!("--param '{written}': {why}")));
    let Some((name, values)) = written.split_once('=') else {
        return refuse("write NAME=V,V,…, e.g. --param workers=1,2,4".into());
    };
    let name = name.trim();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || !name.chars().all(word) {
        return refuse("name the parameter with letters, digits, _ or -, e.g. --param workers=1,2,4".into());
    }
    if shootout_suite::matrix::RESERVED.contains(&name) {
        return refuse(format!("{{{name}}} is filled by shootout itself: give the parameter another name"));
    }
    let values: Vec<&str> = values.split(',').map(str::trim).collect();
    if values.iter().any(|v| v.is_empty()) {
        return refuse(format!("give each value, e.g. --param {name}=1,2,4"));
    }
    if !servers.iter().any(|(_, command)| command.contains(&format!("{{{name}}}"))) {
        return refuse(format!(
            "no --server command holds {{{name}}}: write it where the value goes, e.g. --server 'app=node app.js \
             {{port}} {{{name}}}'"
        ));
    }
    let toml = |v: &str| if v.parse::<i64>().is_ok() { v.to_string() } else { quoted(v) };
    Ok((name.to_string(), values.into_iter().map(toml).collect()))
}

/// Refuses a flag's value with a control character in it (a CR, an ESC, a DEL; a tab is kept): a suite's string
/// cannot hold it as typed, and a terminal acts on it.
fn writable(flag: &str, value: &str) -> Result<(), Failure> {
    match value.chars().find(|&c| c.is_control() && c != '\t') {
        Some(c) => Err(Failure::Usage(format!(
            "{flag} '{}': it holds a control character ({}): leave it out",
            value.escape_debug(),
            c.escape_debug()
        ))),
        None => Ok(()),
    }
}

/// A duration as a suite writes it, exactly as the flag said it: in the largest of seconds, milliseconds,
/// microseconds and nanoseconds that counts it whole.
fn written(duration: Duration) -> String {
    match duration.as_nanos() {
        ns if ns % 1_000_000_000 == 0 => format!("{}s", ns / 1_000_000_000),
        ns if ns % 1_000_000 == 0 => format!("{}ms", ns / 1_000_000),
        ns if ns % 1000 == 0 => format!("{}us", ns / 1000),
        ns => format!("{ns}ns"),
    }
}

/// A TOML string holding `text` exactly.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A word as a shell reads it back: quoted when it holds anything but plain characters.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | ',' | '=' | '+' | '@'));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''").replace('\n', " "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(servers: &[&str]) -> OneLine {
        OneLine {
            servers: servers.iter().map(|s| s.to_string()).collect(),
            path: None,
            connections: Vec::new(),
            rates: Vec::new(),
            duration: None,
            warmup: None,
            repeats: None,
            slo: Vec::new(),
            search: false,
            cpus: None,
            params: Vec::new(),
            name: None,
        }
    }

    #[test]
    fn the_suite_holds_each_server_exactly_as_typed() {
        let line = flags(&["a=sh -c 'echo \"{port}\"' # x", "b = env X=1 app --port={port}"]);
        let text = line.suite(&["shootout".into(), "run".into()], Path::new("/srv/app")).unwrap();
        let suite: toml::Table = toml::from_str(&text).unwrap();
        let servers = suite["server"].as_array().unwrap();
        assert_eq!(servers[0]["name"].as_str(), Some("a"));
        assert_eq!(servers[0]["command"].as_str(), Some("sh -c 'echo \"{port}\"' # x"));
        assert_eq!(servers[1]["name"].as_str(), Some("b"));
        assert_eq!(servers[1]["command"].as_str(), Some("env X=1 app --port={port}"));
        assert_eq!(servers[1]["cwd"].as_str(), Some("/srv/app"), "run from where it was typed: {text}");
        assert_eq!(suite["name"].as_str(), Some("a vs b"));
        assert_eq!(suite["connections"].as_array().unwrap().len(), 3, "the default levels: {text}");
        assert!(text.starts_with("# A suite made by shootout's command line"), "{text}");
    }

    #[test]
    fn a_search_in_the_open_model_gives_no_levels() {
        let mut line = flags(&["a=x {port}", "b=y {port}"]);
        line.search = true;
        line.slo = vec!["mean<1s".into()];
        let suite: toml::Table = toml::from_str(&line.suite(&[], Path::new("/srv/app")).unwrap()).unwrap();
        assert!(suite.get("connections").is_none() && suite.get("rates").is_none());
        assert_eq!(suite["search"]["model"].as_str(), Some("open"));
        assert_eq!(suite["slo"][0].as_str(), Some("mean<1s"));
    }

    #[test]
    fn an_objective_without_levels_searches_for_the_capacity_under_it() {
        let mut line = flags(&["a=x {port}", "b=y {port}"]);
        line.slo = vec!["p99<20ms".into()];
        let suite: toml::Table = toml::from_str(&line.suite(&[], Path::new("/srv/app")).unwrap()).unwrap();
        assert_eq!(suite["search"]["model"].as_str(), Some("open"), "{suite}");
        assert!(suite.get("connections").is_none(), "no levels to guess: {suite}");
        line.connections = vec![1, 4];
        let suite: toml::Table = toml::from_str(&line.suite(&[], Path::new("/srv/app")).unwrap()).unwrap();
        assert!(suite.get("search").is_none(), "levels given are swept, judged by the objective: {suite}");
        assert_eq!(suite["connections"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn cpus_and_parameters_reach_the_servers_that_use_them() {
        let mut line = flags(&["cluster=node cluster.js {port} {workers}", "plain=node plain.js {port}"]);
        line.cpus = Some("1".into());
        line.params = vec!["workers=1,2".into(), "mode= fast ,slow".into()];
        let Err(Failure::Usage(message)) = line.suite(&[], Path::new("/srv/app")) else {
            panic!("a parameter no command holds is refused")
        };
        assert!(message.starts_with("--param 'mode= fast ,slow': no --server command holds {mode}"), "{message}");
        line.params.pop();
        let here = std::env::temp_dir();
        let text = line.suite(&[], &here).unwrap();
        let suite = shootout_suite::parse(&text, "the flags", &here).unwrap();
        let names: Vec<&str> = suite.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cluster (workers=1)", "cluster (workers=2)", "plain"], "{text}");
        assert_eq!(suite.servers[1].command, "node cluster.js {port} 2");
        assert!(suite.servers.iter().all(|s| s.cpus.as_deref() == Some("1")), "{text}");
    }

    #[test]
    fn cpus_the_machine_cannot_give_the_servers_are_refused_with_the_fix() {
        let refused = |list: &str, available: usize| match check_cpus(list, available) {
            Err(Failure::Usage(message)) => message,
            _ => String::new(),
        };
        assert!(refused("0-1", 2).contains("CPU 0 is the client's") && refused("0-1", 2).contains("(--cpus 1)"));
        assert!(refused("0,2", 4).contains("(--cpus 1-3)"), "{}", refused("0,2", 4));
        assert_eq!(refused("2", 2), "--cpus 2: this machine has no CPU 2: its CPUs are 0-1");
        assert!(refused("one", 2).contains("write CPUs as a list"));
        assert!(check_cpus("1", 2).is_ok() && check_cpus("1-3", 4).is_ok());
        assert!(check_cpus("0", 1).is_ok(), "one CPU: the client is not pinned, and shares it");
    }

    #[test]
    fn a_server_without_its_name_or_alone_is_refused_with_the_fix() {
        for servers in [&["puma -b tcp://127.0.0.1:{port}", "b=y"][..], &["=x", "b=y"], &["a=x"]] {
            let Err(Failure::Usage(message)) = flags(servers).suite(&[], Path::new("/srv/app")) else {
                panic!("{servers:?} is refused")
            };
            assert!(message.starts_with("--server"), "{message}");
        }
        let mut line = flags(&["a=x", "b=y"]);
        line.slo = vec!["p99>200".into()];
        let Err(Failure::Usage(message)) = line.suite(&[], Path::new("/srv/app")) else {
            panic!("a bad objective is refused")
        };
        assert!(message.contains("give a unit"), "{message}");
    }
}
