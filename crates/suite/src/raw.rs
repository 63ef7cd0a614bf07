//! The suite file as written: serde types with the place of every value that can be wrong, unknown keys
//! rejected. [`SuiteFile::outline`] reads the parts a report needs (name, servers, objectives, statistic)
//! without touching the file system, so a report can be made from a results directory on another machine;
//! [`validate`](crate::validate) builds the whole [`Suite`](crate::Suite) from the same file.

use std::collections::BTreeMap;

use serde::Deserialize;
use shootout_model::run::Statistic;
use shootout_model::slo::{parse_condition, Slo};
use shootout_scenario::{FileError, Locator};
use toml::Spanned;

use crate::{Requires, Sweep};

/// A suite file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    pub(crate) name: Option<String>,
    pub(crate) repeats: Option<Spanned<u32>>,
    pub(crate) duration: Option<Spanned<String>>,
    pub(crate) warmup: Option<Spanned<String>>,
    pub(crate) connections: Option<Spanned<Vec<u32>>>,
    pub(crate) rates: Option<Spanned<Vec<f64>>>,
    pub(crate) order: Option<Spanned<String>>,
    pub(crate) statistic: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) slo: Vec<Spanned<String>>,
    pub(crate) client_cpus: Option<String>,
    pub(crate) threads: Option<u32>,
    pub(crate) sample_every: Option<Spanned<String>>,
    pub(crate) thread_states: Option<bool>,
    pub(crate) disturbed_again: Option<u32>,
    pub(crate) requests: Option<Spanned<u64>>,
    pub(crate) full: Option<FullDef>,
    pub(crate) search: Option<Spanned<SearchDef>>,
    pub(crate) profile: Option<Spanned<ProfileDef>>,
    #[serde(default)]
    pub(crate) requires: Requires,
    #[serde(default)]
    pub(crate) load: LoadDef,
    pub(crate) agents: Option<AgentsDef>,
    pub(crate) hosts: Option<HostsDef>,
    #[serde(default, rename = "server")]
    pub(crate) servers: Vec<ServerDef>,
    #[serde(default, rename = "service")]
    pub(crate) services: Vec<ServiceDef>,
}

/// The `[full]` table: the keys of the long sweep.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FullDef {
    pub(crate) repeats: Option<Spanned<u32>>,
    pub(crate) duration: Option<Spanned<String>>,
    pub(crate) warmup: Option<Spanned<String>>,
    pub(crate) connections: Option<Spanned<Vec<u32>>>,
    pub(crate) rates: Option<Spanned<Vec<f64>>>,
    pub(crate) requests: Option<Spanned<u64>>,
}

/// `search = { … }`: each server's capacity under the SLO, found by a search instead of a sweep of levels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchDef {
    pub(crate) model: Option<Spanned<String>>,
    pub(crate) precision: Option<Spanned<String>>,
    pub(crate) start: Option<Spanned<f64>>,
    pub(crate) ceiling: Option<Spanned<f64>>,
}

/// The `[profile]` table: each server profiled once more after its measured trials.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileDef {
    pub(crate) at: Option<Spanned<AtDef>>,
    pub(crate) duration: Option<Spanned<String>>,
    pub(crate) profiler: Option<Spanned<String>>,
}

/// `at = "capacity"`, `"knee"`, or a level.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum AtDef {
    Name(String),
    Level(f64),
}

/// The `[load]` table: what each request is.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadDef {
    pub(crate) path: Option<String>,
    pub(crate) method: Option<String>,
    pub(crate) headers: Option<Spanned<BTreeMap<String, String>>>,
    pub(crate) body: Option<String>,
    pub(crate) timeout: Option<Spanned<String>>,
    pub(crate) keepalive: Option<bool>,
    pub(crate) scenario: Option<Spanned<String>>,
    pub(crate) protocol: Option<Spanned<String>>,
    pub(crate) streams: Option<Spanned<u32>>,
    pub(crate) max_connections: Option<Spanned<u32>>,
    pub(crate) max_redirects: Option<u32>,
}

/// The `[agents]` table: the load sent from agents, as `shootout load --agents` does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentsDef {
    pub(crate) from: Spanned<String>,
    pub(crate) command: Option<String>,
    pub(crate) ssh_config: Option<String>,
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) address: Option<String>,
    pub(crate) image: Option<String>,
    pub(crate) timeout: Option<Spanned<String>>,
    pub(crate) max_skew: Option<Spanned<String>>,
}

/// The `[hosts]` table: how servers and services placed on other machines (`host = "ssh:HOST"`) are reached.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostsDef {
    pub(crate) ssh_config: Option<String>,
    pub(crate) command: Option<String>,
    pub(crate) link_timeout: Option<Spanned<String>>,
}

/// A command left out: empty, at no place of the file.
fn no_command() -> Spanned<String> {
    Spanned::new(0..0, String::new())
}

/// One `[[server]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerDef {
    pub(crate) name: Spanned<String>,
    /// Left out only in a container, which then runs its image's own command.
    #[serde(default = "no_command")]
    pub(crate) command: Spanned<String>,
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) url: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) port: Option<u16>,
    pub(crate) ready: Option<ReadyDef>,
    pub(crate) verify: Option<VerifyDef>,
    pub(crate) stop: Option<StopDef>,
    pub(crate) setup: Option<String>,
    pub(crate) teardown: Option<String>,
    pub(crate) hook_timeout: Option<Spanned<String>>,
    pub(crate) version_command: Option<String>,
    pub(crate) cpus: Option<String>,
    pub(crate) host: Option<Spanned<String>>,
    pub(crate) container: Option<Spanned<ContainerDef>>,
    pub(crate) protocol: Option<Spanned<String>>,
    pub(crate) streams: Option<Spanned<u32>>,
    pub(crate) start_warmup: Option<Spanned<String>>,
    /// The services it runs beside (every service when left out).
    pub(crate) needs: Option<Spanned<Vec<String>>>,
    /// A parameter sweep: one server per combination of these values ([`crate::matrix`]).
    pub(crate) matrix: Option<Spanned<crate::matrix::Matrix>>,
    /// The values this server was expanded with from its matrix, in the matrix's order.
    #[serde(skip)]
    pub(crate) params: Vec<(String, String)>,
    /// The name as written, placeholders and all, of the matrix this server was expanded from.
    #[serde(skip)]
    pub(crate) family: Option<String>,
}

/// One `[[service]]`: a process the servers depend on (a database), started, readied, reset and sampled by
/// shootout.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServiceDef {
    pub(crate) name: Spanned<String>,
    /// Left out only in a container, which then runs its image's own command.
    #[serde(default = "no_command")]
    pub(crate) command: Spanned<String>,
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) port: Option<u16>,
    pub(crate) ready: Option<ServiceReadyDef>,
    pub(crate) reset: Option<String>,
    pub(crate) reset_every: Option<Spanned<String>>,
    pub(crate) restart: Option<Spanned<String>>,
    pub(crate) stop: Option<StopDef>,
    pub(crate) setup: Option<String>,
    pub(crate) teardown: Option<String>,
    pub(crate) hook_timeout: Option<Spanned<String>>,
    pub(crate) version_command: Option<String>,
    pub(crate) cpus: Option<String>,
    pub(crate) host: Option<Spanned<String>>,
    pub(crate) container: Option<Spanned<ContainerDef>>,
}

/// A server's or service's `container`: it runs from an image, through Docker or Podman.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContainerDef {
    pub(crate) image: String,
    pub(crate) port: u16,
    pub(crate) engine: Option<String>,
    #[serde(default)]
    pub(crate) options: Vec<String>,
}

/// A service's `ready`: a command that succeeds once it is ready (else: its port accepts a connection).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServiceReadyDef {
    pub(crate) command: Option<String>,
    pub(crate) timeout: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadyDef {
    pub(crate) path: Option<String>,
    pub(crate) status: Option<u16>,
    pub(crate) timeout: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerifyDef {
    pub(crate) status: Option<u16>,
    pub(crate) body: Option<String>,
    pub(crate) command: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StopDef {
    pub(crate) signal: Option<Spanned<String>>,
    pub(crate) grace: Option<Spanned<String>>,
    pub(crate) pidfile: Option<String>,
}

/// What a report needs of a suite: read from the file alone, checked like the whole suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    /// The suite's name (the file's stem when it has none).
    pub name: String,
    /// The servers' names, in the suite's order.
    pub servers: Vec<String>,
    /// The service-level objectives.
    pub slo: Vec<Slo>,
    /// The repeat figure the verdicts use.
    pub statistic: Statistic,
    /// The servers that matrices expanded to, in the suite's order (none without a matrix).
    pub matrix: Vec<MatrixServer>,
    /// The levels of the sweep it was read for, as written (none when the file gives no valid levels, or when it
    /// searches): a report tells the levels a run never reached from those it measured.
    pub levels: Vec<f64>,
    /// True when the run searched for each server's capacity (`search`) instead of sweeping levels.
    pub search: bool,
    /// What its levels count ("users", "users/s" or "req/s"), for a report whose run measured nothing.
    pub unit: &'static str,
}

/// One server of a `matrix`: which matrix it came from and with what values, for the charts that put a
/// parameter on their x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixServer {
    /// Its name, values filled in.
    pub name: String,
    /// The matrix's name as written, placeholders and all (`puma -w {workers} -t {threads}`).
    pub family: String,
    /// Its values, in the matrix's order.
    pub params: Vec<(String, String)>,
}

impl SuiteFile {
    /// Reads a suite file's syntax, and expands servers' matrices; a syntax error or an unknown key points at its
    /// place.
    pub fn read(at: &Locator<'_>) -> Result<SuiteFile, FileError> {
        let mut file: SuiteFile = at.toml(at.text, "docs/reference/suite.md")?;
        file.servers = crate::matrix::expand(std::mem::take(&mut file.servers), at)?;
        Ok(file)
    }

    /// The name, objectives and statistic, each checked, and the servers' names.
    pub fn outline(&self, at: &Locator<'_>) -> Result<Outline, FileError> {
        let statistic = match &self.statistic {
            None => Statistic::default(),
            Some(s) => Statistic::parse(s.get_ref()).ok_or_else(|| {
                at.span(s.span(), format!("statistic '{}': write \"median\" or \"best\"", s.get_ref()))
            })?,
        };
        let slo = self
            .slo
            .iter()
            .map(|s| parse_condition(s.get_ref()).map_err(|m| at.span(s.span(), m)))
            .collect::<Result<_, _>>()?;
        let stem = std::path::Path::new(at.file).file_stem().map_or("suite".into(), |s| s.to_string_lossy().into());
        Ok(Outline {
            name: self.name.clone().unwrap_or(stem),
            servers: self.servers.iter().map(|s| s.name.get_ref().clone()).collect(),
            slo,
            statistic,
            matrix: self
                .servers
                .iter()
                .filter_map(|s| {
                    Some(MatrixServer {
                        name: s.name.get_ref().clone(),
                        family: s.family.clone()?,
                        params: s.params.clone(),
                    })
                })
                .collect(),
            levels: match (&self.connections, &self.rates) {
                (Some(c), None) => c.get_ref().iter().map(|&c| f64::from(c)).collect(),
                (None, Some(r)) => r.get_ref().clone(),
                _ => Vec::new(),
            },
            search: self.search.is_some(),
            unit: shootout_model::units::level_unit(self.rates.is_some(), self.load.scenario.is_some()),
        })
    }
}

/// Reads what a report needs from a suite's text (`file` names it in errors), for the levels of `sweep`.
pub fn outline(text: &str, file: &str, sweep: Sweep) -> Result<Outline, FileError> {
    let at = Locator { text, file };
    let mut raw = SuiteFile::read(&at)?;
    sweep.lay_over(&mut raw, &at)?;
    let mut outline = raw.outline(&at)?;
    let search = crate::validate::search(&raw, &at)?;
    match sweep {
        Sweep::Short if outline.search => outline.levels.clear(),
        Sweep::Smoke if outline.search => {
            outline.search = false;
            if let (true, Some(search)) = (outline.levels.is_empty(), search) {
                outline.levels = search.levels().values();
            }
        }
        _ => {}
    }
    if sweep == Sweep::Smoke && !outline.levels.is_empty() {
        outline.levels = crate::sweep::ends(&outline.levels);
    }
    Ok(outline)
}
