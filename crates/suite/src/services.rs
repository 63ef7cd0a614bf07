//! The `[[service]]` tables (what the servers depend on: a database, a cache), checked as the file is read: their
//! keys, their fixed ports against each other's and the servers', a server's `needs`, and every
//! `{service.NAME.port}` a server or a service writes, which must name a service it runs beside (a server measured
//! without its database would be a lie, so a wrong name stops the suite before anything starts).

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;
use shootout_scenario::{FileError, Locator};

use crate::raw::{ServerDef, ServiceDef};
use crate::refusals::{self, Launched};
use crate::{signal_by_name, ResetEvery, Restart, ServiceSpec};

/// The placeholder that stands for service `name`'s port in a server's command, env, setup, teardown or url.
pub fn service_port(name: &str) -> String {
    format!("{{service.{name}.port}}")
}

/// The services' names that `text` writes `{service.NAME.port}` for, in order, or the first placeholder that
/// starts like one and is not (`{service.db}`).
pub fn referenced(text: &str) -> Result<Vec<&str>, String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{service.") {
        let after = &rest[start + "{service.".len()..];
        let end = after.find('}').unwrap_or(after.len());
        let inside = &after[..end];
        match inside.strip_suffix(".port") {
            Some(name) if end < after.len() && !name.is_empty() && name.chars().all(name_char) => names.push(name),
            _ => {
                return Err(format!(
                    "'{{service.{inside}{}' is not a service's placeholder: write {{service.NAME.port}}",
                    if end < after.len() { "}" } else { "" }
                ))
            }
        }
        rest = &after[end..];
    }
    Ok(names)
}

/// The characters of a service's name: it is written inside `{service.NAME.port}`.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Every `[[service]]`, checked, with the suite's defaults filled in: `server_cpus` is where servers run unless
/// they say otherwise, and services too.
pub(crate) fn services(
    defs: &[ServiceDef],
    at: &Locator<'_>,
    dir: &Path,
    server_cpus: Option<&String>,
    duration: impl Fn(&Option<toml::Spanned<String>>, Duration) -> Result<Duration, FileError>,
) -> Result<Vec<ServiceSpec>, FileError> {
    let mut specs: Vec<ServiceSpec> = Vec::new();
    for (i, def) in defs.iter().enumerate() {
        let name = def.name.get_ref();
        let here = |why: String| at.span(def.name.span(), format!("service '{name}': {why}"));
        if specs.iter().any(|s| &s.name == name) {
            return Err(at.span(def.name.span(), format!("service '{name}' is listed twice: give each a unique name")));
        }
        let launched = Launched::from(def);
        let earlier: Vec<&String> = defs[..i].iter().map(|d| d.name.get_ref()).collect();
        refusals::check_name(&launched, &earlier, at)?;
        if !name.chars().all(name_char) {
            return Err(here(format!(
                "a service's name is written in {}: use letters, digits, '-' and '_' only",
                service_port("NAME")
            )));
        }
        refusals::check_launched(&launched, at, dir)?;
        let whose = format!("service '{name}'");
        let place = crate::validate::place(&def.host, &def.container, &def.command, &def.name, &whose, at)?;
        let texts = [Some(def.command.get_ref()), def.setup.as_ref(), def.teardown.as_ref(), def.reset.as_ref()];
        let ready = def.ready.as_ref();
        let ready_command = ready.and_then(|r| r.command.as_ref());
        for text in texts.into_iter().chain([ready_command]).flatten().chain(def.env.values()) {
            for used in referenced(text).map_err(&here)? {
                if !specs.iter().any(|s| s.name == used) {
                    return Err(here(format!(
                        "{} names no service started before it: list that service above this one",
                        service_port(used)
                    )));
                }
            }
        }
        if let Some(port) = def.port.filter(|&p| p != 0) {
            if let Some(other) = specs.iter().find(|s| s.port == port) {
                return Err(here(format!(
                    "port {port} is service '{}''s too: give one another port, or leave port out to let shootout pick one",
                    other.name
                )));
            }
        }
        let choice = |value: &Option<toml::Spanned<String>>, key: &str, first: &str, second: &str| match value
            .as_ref()
            .map(|v| (v.get_ref().as_str(), v.span()))
        {
            None => Ok(true),
            Some((v, _)) if v == first => Ok(true),
            Some((v, _)) if v == second => Ok(false),
            Some((v, span)) => {
                Err(at.span(span, format!("{key} '{v}': write \"{first}\" (the default) or \"{second}\"")))
            }
        };
        let stop = def.stop.as_ref();
        let stop_signal = match stop.and_then(|s| s.signal.as_ref()) {
            None => Signal::SIGTERM,
            Some(s) => signal_by_name(s.get_ref()).ok_or_else(|| {
                at.span(s.span(), format!("'{}' is not a signal: write TERM, INT, QUIT or KILL", s.get_ref()))
            })?,
        };
        if stop.is_some_and(|s| s.pidfile.is_some()) {
            return Err(here("stop.pidfile is for servers that daemonize: run the service in the foreground".into()));
        }
        specs.push(ServiceSpec {
            name: name.clone(),
            command: def.command.get_ref().clone(),
            cwd: crate::validate::cwd(&def.cwd, &place, dir),
            env: def.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            port: def.port.unwrap_or(0),
            ready_command: ready_command.cloned(),
            ready_timeout: duration(&ready.and_then(|r| r.timeout.clone()), Duration::from_secs(30))?,
            reset: def.reset.clone(),
            reset_every: if choice(&def.reset_every, "reset_every", "start", "trial")? {
                ResetEvery::Start
            } else {
                ResetEvery::Trial
            },
            restart: if choice(&def.restart, "restart", "suite", "server")? { Restart::Suite } else { Restart::Server },
            stop_signal,
            stop_grace: duration(&stop.and_then(|s| s.grace.clone()), Duration::from_secs(10))?,
            setup: def.setup.clone(),
            teardown: def.teardown.clone(),
            hook_timeout: duration(&def.hook_timeout, crate::HOOK_TIMEOUT)?,
            version_command: def.version_command.clone(),
            cpus: def
                .cpus
                .clone()
                .or_else(|| server_cpus.filter(|_| !matches!(place, crate::Place::Ssh { .. })).cloned()),
            place,
        });
    }
    Ok(specs)
}

/// The services server `def` runs beside: those its `needs` names, or every one; each `{service.NAME.port}` it
/// writes must be one of them, and its fixed port none of theirs.
pub(crate) fn needs(def: &ServerDef, services: &[ServiceSpec], at: &Locator<'_>) -> Result<Vec<String>, FileError> {
    let name = def.name.get_ref();
    let here = |why: String| at.span(def.name.span(), format!("server '{name}': {why}"));
    let needs: Vec<String> = match &def.needs {
        None => services.iter().map(|s| s.name.clone()).collect(),
        Some(listed) => {
            for wanted in listed.get_ref() {
                if !services.iter().any(|s| &s.name == wanted) {
                    let known: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
                    let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                    return Err(at.span(
                        listed.span(),
                        format!("server '{name}' needs service '{wanted}', which the suite does not have (it has: {known}): add a [[service]] named so, or fix the name"),
                    ));
                }
            }
            services.iter().filter(|s| listed.get_ref().contains(&s.name)).map(|s| s.name.clone()).collect()
        }
    };
    let texts = [Some(def.command.get_ref()), def.setup.as_ref(), def.teardown.as_ref(), def.url.as_ref()];
    for text in texts.into_iter().flatten().chain(def.env.values()) {
        for used in referenced(text).map_err(&here)? {
            if !needs.iter().any(|n| n == used) {
                let why = if services.iter().any(|s| s.name == used) {
                    "is not among the services it needs: add it to needs"
                } else {
                    "names no service of the suite: add a [[service]] named so, or fix the name"
                };
                return Err(here(format!("{} {why}", service_port(used))));
            }
        }
    }
    if let Some(port) = def.port.filter(|&p| p != 0) {
        if let Some(service) = services.iter().find(|s| s.port == port) {
            return Err(here(format!(
                "port {port} is service '{}''s too: give one another port, or leave port out to let shootout pick one",
                service.name
            )));
        }
    }
    Ok(needs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_name_their_services() {
        assert_eq!(referenced("psql -p {service.db.port} -h x {service.cache-1.port}"), Ok(vec!["db", "cache-1"]));
        assert_eq!(referenced("no placeholder {port}"), Ok(vec![]));
        assert!(referenced("{service.db}").unwrap_err().contains("'{service.db}' is not a service's placeholder"));
        assert!(referenced("{service.db.port").is_err(), "unclosed");
        assert!(referenced("{service..port}").is_err(), "no name");
    }
}
