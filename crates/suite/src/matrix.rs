//! Parameter sweeps of one server: `matrix = { workers = [1, 2, 4], threads = [1, 5] }` on a `[[server]]` stands
//! for one server per combination (six here), each with `{workers}` and `{threads}` filled into its name, command,
//! env, setup, teardown, path, ready path and version command, as hyperfine's `--parameter-list` does for
//! commands. A name without a placeholder gets the values appended, so every server keeps a name of its own.
//!
//! The expansion happens as soon as the file is read ([`expand`]), so the checks, the harness and a report's
//! outline all see the servers one by one; each keeps its values ([`ServerDef::params`]) for the charts that put
//! a parameter on the x axis.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use shootout_scenario::{FileError, Locator};
use toml::Spanned;

use crate::raw::ServerDef;
use crate::refusals::MOST_SERVERS;

/// A `matrix` table as written: each parameter with its values, in the file's order.
#[derive(Debug, Clone, Default)]
pub struct Matrix(Vec<(String, Vec<toml::Value>)>);

impl<'de> Deserialize<'de> for Matrix {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Matrix, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Matrix;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of parameters, each with a list of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Matrix, A::Error> {
                let mut parameters = Vec::new();
                while let Some(entry) = map.next_entry::<String, Vec<toml::Value>>()? {
                    parameters.push(entry);
                }
                Ok(Matrix(parameters))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// Placeholders that shootout fills itself, so a parameter may not take their names.
pub const RESERVED: [&str; 2] = ["port", "shootout"];

/// Every server of `servers` with a `matrix`, replaced by one server per combination of its values (the first
/// parameter written varying slowest).
pub(crate) fn expand(servers: Vec<ServerDef>, at: &Locator<'_>) -> Result<Vec<ServerDef>, FileError> {
    let mut out = Vec::with_capacity(servers.len());
    for mut def in servers {
        let Some(matrix) = def.matrix.take() else {
            out.push(def);
            continue;
        };
        let parameters = parameters(&matrix, &def, at)?;
        let count = parameters.iter().fold(1u64, |n, (_, values)| n.saturating_mul(values.len() as u64));
        if out.len() as u64 + count > MOST_SERVERS {
            return Err(at.span(
                matrix.span(),
                format!(
                    "server '{}': matrix: {count} combinations, and a suite runs at most {MOST_SERVERS} servers: give fewer values",
                    def.name.get_ref()
                ),
            ));
        }
        for combination in combinations(&parameters) {
            out.push(filled(&def, &combination));
        }
    }
    Ok(out)
}

/// The parameters of `matrix`, each with its values as text, checked: at least one value each, scalars only, no
/// reserved name, and each used somewhere that starts or prepares the server.
fn parameters(
    matrix: &Spanned<Matrix>,
    def: &ServerDef,
    at: &Locator<'_>,
) -> Result<Vec<(String, Vec<String>)>, FileError> {
    let name = def.name.get_ref();
    let here = |message: String| at.span(matrix.span(), format!("server '{name}': matrix: {message}"));
    if matrix.get_ref().0.is_empty() {
        return Err(here("no parameters: write matrix = { workers = [1, 2, 4] }".into()));
    }
    let mut parameters = Vec::new();
    for (key, values) in &matrix.get_ref().0 {
        if RESERVED.contains(&key.as_str()) {
            return Err(here(format!("'{key}' is filled by shootout itself: give the parameter another name")));
        }
        if values.is_empty() {
            return Err(here(format!("'{key}' has no values: give it at least one, like {key} = [1, 2]")));
        }
        let placeholder = format!("{{{key}}}");
        let used = def.command.get_ref().contains(&placeholder)
            || def.env.values().any(|v| v.contains(&placeholder))
            || def.setup.as_deref().is_some_and(|s| s.contains(&placeholder));
        if !used {
            return Err(here(format!(
                "'{key}' is not used: write {placeholder} in the command, env or setup where its value goes"
            )));
        }
        let texts = values
            .iter()
            .map(|value| match value {
                toml::Value::Integer(n) => Ok(n.to_string()),
                toml::Value::Float(x) => Ok(x.to_string()),
                toml::Value::String(s) => Ok(s.clone()),
                toml::Value::Boolean(b) => Ok(b.to_string()),
                other => Err(here(format!("'{key}' has the value {other}: use numbers or strings"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        parameters.push((key.clone(), texts));
    }
    Ok(parameters)
}

/// Every combination of one value per parameter, the first parameter varying slowest.
fn combinations(parameters: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut all: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (key, values) in parameters {
        all = all
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |value| {
                    let mut next = prefix.clone();
                    next.push((key.clone(), value.clone()));
                    next
                })
            })
            .collect();
    }
    all
}

/// `def` with the values of `combination` filled in.
fn filled(def: &ServerDef, combination: &[(String, String)]) -> ServerDef {
    let fill = |text: &str| {
        combination.iter().fold(text.to_string(), |text, (key, value)| text.replace(&format!("{{{key}}}"), value))
    };
    let fill_spanned = |s: &Spanned<String>| Spanned::new(s.span(), fill(s.get_ref()));
    let fill_option = |s: &Option<String>| s.as_deref().map(fill);
    let mut name = fill(def.name.get_ref());
    if name == *def.name.get_ref() {
        let values: Vec<String> = combination.iter().map(|(k, v)| format!("{k}={v}")).collect();
        name = format!("{name} ({})", values.join(", "));
    }
    let mut server = def.clone();
    server.name = Spanned::new(def.name.span(), name);
    server.command = fill_spanned(&def.command);
    server.env = def.env.iter().map(|(k, v)| (k.clone(), fill(v))).collect();
    server.setup = fill_option(&def.setup);
    server.teardown = fill_option(&def.teardown);
    server.path = fill_option(&def.path);
    server.version_command = fill_option(&def.version_command);
    if let Some(ready) = &mut server.ready {
        ready.path = fill_option(&ready.path);
    }
    server.params = combination.to_vec();
    server.family = Some(def.name.get_ref().clone());
    server
}
