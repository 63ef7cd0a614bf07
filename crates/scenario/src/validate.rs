//! From the file as written to a [`Scenario`]: every name, reference, pattern and duration is checked before
//! anything runs, and the first problem is reported as `file:line:column: what is wrong (hint)`.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use shootout_model::Stage;
use toml::Spanned;

use crate::raw::{self, StatusDef};
use crate::template::Template;
use crate::think::Think;
use crate::{Expect, Extract, Request, Scenario, Session, Source, Step};

/// A problem in an input file (a scenario, a urls file, a suite), with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The file, as named on the command line.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong, and what to do about it.
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

impl std::error::Error for FileError {}

/// Where errors point in an input file (a scenario, a suite): its text and its name.
#[derive(Debug, Clone, Copy)]
pub struct Locator<'a> {
    /// The whole text.
    pub text: &'a str,
    /// The file's name, as the user gave it.
    pub file: &'a str,
}

impl Locator<'_> {
    /// An error at byte `offset` of the text.
    pub fn at(&self, offset: usize, message: impl Into<String>) -> FileError {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        FileError { file: self.file.to_string(), line, column, message: message.into() }
    }

    /// Reads TOML into `T`; a syntax error or an unknown key points at its place, with the page of the docs that
    /// lists every key (`reference`, a path from the repository's root).
    pub fn toml<T: serde::de::DeserializeOwned>(&self, text: &str, reference: &str) -> Result<T, FileError> {
        toml::from_str(text).map_err(|e| {
            let message = e.message().trim();
            let message = nearest_key(message).unwrap_or_else(|| message.to_string());
            self.at(e.span().map_or(0, |s| s.start), format!("{message} (every key: {reference})"))
        })
    }

    /// An error at the start of `span`.
    pub fn span(&self, span: Range<usize>, message: impl Into<String>) -> FileError {
        self.at(span.start, message)
    }
}

/// An unknown key's message (serde's "unknown field `rate`, expected one of `name`, `rates`, …") in words with
/// the fix, when one of the keys it may be is near it: "unknown key `rate`: did you mean `rates`?". Near is two
/// edits at most (a letter missing, added, changed, or two swapped), and fewer than half its letters.
fn nearest_key(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (typed, expected) = rest.split_once('`')?;
    let keys = expected.split('`').skip(1).step_by(2);
    let (distance, key) = keys.map(|key| (edits(typed, key), key)).min()?;
    (distance <= 2 && 2 * distance < typed.chars().count())
        .then(|| format!("unknown key `{typed}`: did you mean `{key}`?"))
}

/// The edits (insertions, deletions, substitutions, adjacent swaps) from `a` to `b`.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![(0..=b.len()).collect::<Vec<usize>>(); a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let change = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + change);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// Parses and validates a scenario. `base` (a URL given on the command line) overrides the file's `base`.
pub fn parse(text: &str, file: &str, base: Option<&str>) -> Result<Scenario, FileError> {
    let at = Locator { text, file };
    let raw: raw::File = at.toml(text, "docs/reference/scenario.md")?;
    let base = match (base, &raw.base) {
        (Some(url), _) => origin(url).map_err(|m| at.at(0, format!("the URL '{url}' {m}")))?,
        (None, Some(url)) => {
            origin(url.get_ref()).map_err(|m| at.span(url.span(), format!("base '{}' {m}", url.get_ref())))?
        }
        (None, None) => {
            return Err(at.at(0, "no server to load: add base = \"http://host:port\" to the file, or give a URL"));
        }
    };
    if raw.requests.is_empty() {
        return Err(at.at(text.len(), "a scenario needs at least one [[request]] with a name and a url"));
    }

    let mut variables: Vec<String> = raw.vars.keys().cloned().collect();
    let mut initial: Vec<String> = raw.vars.values().cloned().collect();
    for request in &raw.requests {
        for extract in &request.extract {
            if !variables.contains(&extract.get_ref().var) {
                variables.push(extract.get_ref().var.clone());
                initial.push(String::new());
            }
        }
    }
    let id_of = |name: &str| variables.iter().position(|v| v == name);
    let template = |value: &Spanned<String>| {
        Template::parse(value.get_ref(), id_of).map_err(|unknown| {
            let known = if variables.is_empty() { "none are defined".to_string() } else { variables.join(", ") };
            at.at(
                value.span().start + 1 + unknown.offset,
                format!("unknown variable '${{{}}}': define it in [vars] or extract it (known: {known})", unknown.name),
            )
        })
    };

    let mut requests = Vec::with_capacity(raw.requests.len());
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for def in &raw.requests {
        let name = def.name.get_ref();
        if by_name.insert(name, requests.len()).is_some() {
            return Err(at.span(def.name.span(), format!("request '{name}' is defined twice: give each a unique name")));
        }
        requests.push(request(def, &raw.headers, &base, &at, &template, &id_of)?);
    }

    let mut sessions = Vec::with_capacity(raw.sessions.len());
    for def in &raw.sessions {
        if def.steps.get_ref().is_empty() {
            return Err(at.span(def.steps.span(), format!("session '{}' has no steps", def.name)));
        }
        let mut steps = Vec::new();
        for step in def.steps.get_ref() {
            let request = *by_name.get(step.request.get_ref().as_str()).ok_or_else(|| {
                let names: Vec<&str> = raw.requests.iter().map(|r| r.name.get_ref().as_str()).collect();
                at.span(
                    step.request.span(),
                    format!("no request named '{}' (the requests are: {})", step.request.get_ref(), names.join(", ")),
                )
            })?;
            let think = match &step.think {
                Some(text) => Think::parse(text.get_ref()).map_err(|m| {
                    at.span(text.span(), format!("bad think time: {m}; write 2s, uniform(1s, 3s) or exponential(2s)"))
                })?,
                None => Think::None,
            };
            steps.push(Step { request, think });
        }
        sessions.push(Session { name: def.name.clone(), weight: weight(&def.weight, &at)?, steps });
    }

    let mut phases = Vec::with_capacity(raw.phases.len());
    for phase in &raw.phases {
        let duration = shootout_model::units::parse_duration(phase.duration.get_ref())
            .map_err(|e| at.span(phase.duration.span(), e.to_string()))?;
        let target = *phase.users_per_second.get_ref();
        if !target.is_finite() || target < 0.0 {
            return Err(at.span(phase.users_per_second.span(), "users_per_second must be 0 or more"));
        }
        // A phase holds its rate for its whole duration (Tsung's arrival phases): a jump, then a level stretch.
        phases.push(Stage { duration: std::time::Duration::ZERO, target });
        phases.push(Stage { duration, target });
    }
    if !phases.is_empty() && sessions.is_empty() {
        return Err(at.at(0, "phases bring in new users, who run sessions: add a [[session]]"));
    }

    Ok(Scenario { requests, sessions, phases, variables, initial, base })
}

/// One `[[request]]`.
fn request(
    def: &raw::RequestDef,
    defaults: &std::collections::BTreeMap<String, Spanned<String>>,
    base: &str,
    at: &Locator<'_>,
    template: &impl Fn(&Spanned<String>) -> Result<Template, FileError>,
    id_of: &impl Fn(&str) -> Option<usize>,
) -> Result<Request, FileError> {
    let name = def.name.get_ref().clone();
    let url = def.url.get_ref();
    // A URL that begins with a variable is whole only once the run gives it a value (a path, or a URL on the
    // server): it is checked then, each time it is used.
    let target_text = if url.starts_with('/') || url.starts_with("${") {
        url.clone()
    } else if let Some(rest) = url.strip_prefix(base) {
        if rest.is_empty() {
            "/".to_string()
        } else {
            rest.to_string()
        }
    } else {
        return Err(at.span(
            def.url.span(),
            format!(
                "'{url}' is not on {base}: every request of a scenario goes to one server; write a path like /items"
            ),
        ));
    };
    if !target_text.starts_with('/') && !target_text.starts_with("${") {
        return Err(at.span(def.url.span(), format!("'{url}': the path must start with /")));
    }
    if let Some((offset, message)) = bad_in_target(&target_text) {
        // Past the opening quote, and the origin the path was written after.
        let column = def.url.span().start + 1 + url.len() - target_text.len() + offset;
        return Err(at.at(column, format!("'{url}': {message}")));
    }
    let target =
        template(&Spanned::new(def.url.span(), target_text)).map_err(|e| FileError { column: e.column, ..e })?;
    let method = match &def.method {
        Some(m) if !m.get_ref().is_empty() && m.get_ref().bytes().all(|b| b.is_ascii_alphabetic()) => {
            m.get_ref().to_ascii_uppercase()
        }
        Some(m) => return Err(at.span(m.span(), format!("'{}' is not a method: write GET, POST…", m.get_ref()))),
        None if def.body.is_some() => "POST".to_string(),
        None => "GET".to_string(),
    };
    let mut headers = Vec::new();
    for (header, value) in defaults.iter().filter(|(n, _)| !def.headers.keys().any(|m| m.eq_ignore_ascii_case(n))) {
        headers.push((header.clone(), template(value)?));
    }
    for (header, value) in &def.headers {
        headers.push((header.clone(), template(value)?));
    }
    // The headers as written (a variable's value comes later) must make valid HTTP, as -H's must.
    for (header, value) in defaults.iter().chain(&def.headers) {
        let written = [(header.clone(), value.get_ref().clone())];
        shootout_model::settings::check_headers(&written, shootout_model::Protocol::Http1)
            .map_err(|e| at.span(value.span(), format!("header {header}: {e}")))?;
    }
    let body = match &def.body {
        Some(body) => template(body)?,
        None => Template::default(),
    };
    let mut expect = Expect::default();
    if let Some(e) = &def.expect {
        if let Some(status) = &e.status {
            let codes = match status.get_ref() {
                StatusDef::One(code) => vec![*code],
                StatusDef::Many(codes) => codes.clone(),
            };
            if codes.is_empty() || codes.iter().any(|c| !(100..=999).contains(c)) {
                return Err(at.span(status.span(), "expect.status takes a status code (100-999) or a list of them"));
            }
            expect.status = codes.into_iter().map(|c| c as u16).collect();
        }
        expect.body = e.body.clone();
    }
    let mut extract = Vec::new();
    for item in &def.extract {
        let e = item.get_ref();
        let from = match (&e.regex, &e.json, &e.header) {
            (Some(pattern), None, None) => Source::Regex(
                regex::bytes::Regex::new(pattern)
                    .map_err(|err| at.span(item.span(), format!("bad regex for '{}': {err}", e.var)))?,
            ),
            (None, Some(pointer), None) if pointer.is_empty() || pointer.starts_with('/') => {
                Source::Json(pointer.clone())
            }
            (None, Some(pointer), None) => {
                return Err(at.span(
                    item.span(),
                    format!("'{pointer}' is not a JSON pointer: write it like /token or /items/0/id"),
                ));
            }
            (None, None, Some(header)) => Source::Header(header.clone()),
            _ => {
                return Err(
                    at.span(item.span(), format!("extract '{}' needs exactly one of regex, json or header", e.var))
                );
            }
        };
        let url_encoded = match &e.encode {
            None => false,
            Some(encode) if encode.get_ref() == "url" => true,
            Some(encode) => {
                return Err(
                    at.span(encode.span(), format!("encode '{}': write \"url\" (percent-encoding)", encode.get_ref()))
                )
            }
        };
        extract.push(Extract {
            variable: id_of(&e.var).expect("extracted variables are registered"),
            from,
            url_encoded,
        });
    }
    let follow_redirects = def.follow_redirects.unwrap_or(true);
    let weight = weight(&def.weight, at)?;
    Ok(Request { name, method, target, headers, body, weight, expect, extract, follow_redirects })
}

fn weight(value: &Option<Spanned<f64>>, at: &Locator<'_>) -> Result<f64, FileError> {
    match value {
        None => Ok(1.0),
        Some(w) if w.get_ref().is_finite() && *w.get_ref() > 0.0 => Ok(*w.get_ref()),
        Some(w) => Err(at.span(w.span(), "weight must be a number above 0")),
    }
}

/// `scheme://host[:port]` of an http:// or https:// URL.
pub fn origin(url: &str) -> Result<String, &'static str> {
    let parsed = url::Url::parse(url).map_err(|_| "is not a URL: write it like http://127.0.0.1:8080")?;
    let scheme = parsed.scheme();
    if !matches!(scheme, "http" | "https") {
        return Err("is not http:// or https://: write the server's URL like https://127.0.0.1:8443");
    }
    let host = parsed.host_str().ok_or("has no host")?;
    Ok(match parsed.port() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// The first thing in a request's path and query that would not make a valid request line, sent as written: a
/// space or control character, or a `%` not followed by two hex digits. Variables (`${name}`) are skipped: their
/// values are the run's. Returns its byte offset and what to write instead.
pub fn bad_in_target(target: &str) -> Option<(usize, String)> {
    let bytes = target.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                i += target[i..].find('}').map_or(bytes.len(), |end| end + 1);
                continue;
            }
            b' ' => return Some((i, "a space cannot be sent in a URL: write it as %20".into())),
            b'%' if !(bytes.len() > i + 2 && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit()) => {
                return Some((i, "'%' must begin an escape like %20: write a % itself as %25".into()));
            }
            byte if byte.is_ascii_control() => {
                return Some((i, format!("the control character {byte:#04x} cannot be sent in a URL: escape it")));
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
base = "http://127.0.0.1:8080"
[vars]
user = "alice"
[headers]
Accept = "text/html"

[[request]]
name = "login"
url = "/login"
body = "user=${user}"
expect = { status = [200, 302], body = "welcome" }
extract = [{ var = "token", json = "/token" }, { var = "csrf", regex = 'csrf=(\w+)' }]

[[request]]
name = "home"
url = "http://127.0.0.1:8080/home?t=${token}"
headers = { Accept = "application/json", X-Csrf = "${csrf}" }
weight = 3

[[session]]
name = "browse"
steps = [{ request = "login", think = "uniform(1s, 2s)" }, { request = "home" }]

[[phase]]
duration = "10s"
users_per_second = 5
"#;

    #[test]
    fn an_unknown_key_near_a_known_one_is_answered_with_it() {
        let said =
            |typed: &str| nearest_key(&format!("unknown field `{typed}`, expected one of `name`, `rates`, `repeats`"));
        assert_eq!(said("rate").as_deref(), Some("unknown key `rate`: did you mean `rates`?"));
        assert_eq!(said("repaets").as_deref(), Some("unknown key `repaets`: did you mean `repeats`?"), "two swapped");
        assert_eq!(said("colour"), None, "nothing near");
        assert_eq!(said("nm"), None, "too short to guess");
        assert_eq!(nearest_key("invalid type: string, expected u32"), None);
    }

    #[test]
    fn a_good_file() {
        let s = parse(GOOD, "good.toml", None).unwrap();
        assert_eq!(s.base, "http://127.0.0.1:8080");
        assert_eq!(s.variables, ["user", "token", "csrf"]);
        assert_eq!(s.requests[0].method, "POST");
        assert_eq!(s.requests[0].expect.status, [200, 302]);
        assert_eq!(s.requests[1].weight, 3.0);
        let accept: Vec<_> = s.requests[1].headers.iter().filter(|(n, _)| n == "Accept").collect();
        assert_eq!(accept.len(), 1, "the request's own header replaces the default");
        assert_eq!(s.sessions[0].steps[1].request, 1);
        assert_eq!(s.phases.len(), 2, "a jump to the phase's rate, then the phase");
        assert_eq!((s.phases[0].duration.as_secs(), s.phases[1].duration.as_secs()), (0, 10));
        assert_eq!(s.phases[1].target, 5.0);
    }

    #[test]
    fn a_scenario_on_https_keeps_its_scheme_and_port() {
        let s = parse(
            "base = \"https://[::1]:8443/app\"\n[[request]]\nname = \"a\"\nurl = \"https://[::1]:8443/x\"\n",
            "s.toml",
            None,
        )
        .unwrap();
        assert_eq!(s.base, "https://[::1]:8443");
        assert_eq!(s.requests[0].target, Template::literal("/x"));
        assert_eq!(origin("https://example.test").unwrap(), "https://example.test");
    }

    fn error(text: &str) -> String {
        parse(text, "s.toml", Some("http://127.0.0.1:1")).unwrap_err().to_string()
    }

    #[test]
    fn errors_point_at_the_problem() {
        let unknown_key = error("[[request]]\nname = \"a\"\nurl = \"/\"\ncolour = \"red\"\n");
        assert!(unknown_key.starts_with("s.toml:4:1: unknown field `colour`"), "{unknown_key}");

        let bad_ref = error("[[request]]\nname = \"a\"\nurl = \"/x/${nope}\"\n");
        assert!(bad_ref.starts_with("s.toml:3:11: unknown variable '${nope}'"), "{bad_ref}");

        let no_request =
            error("[[request]]\nname = \"a\"\nurl = \"/\"\n[[session]]\nname = \"s\"\nsteps = [{ request = \"b\" }]\n");
        assert!(no_request.starts_with("s.toml:6:22: no request named 'b' (the requests are: a)"), "{no_request}");

        let think = error(
            "[[request]]\nname = \"a\"\nurl = \"/\"\n[[session]]\nname = \"s\"\nsteps = [{ request = \"a\", think = \"later\" }]\n",
        );
        assert!(think.contains("s.toml:6:35: bad think time"), "{think}");

        let regex = error("[[request]]\nname = \"a\"\nurl = \"/\"\nextract = [{ var = \"v\", regex = \"(\" }]\n");
        assert!(regex.starts_with("s.toml:4:12: bad regex for 'v'"), "{regex}");

        let twice = error("[[request]]\nname = \"a\"\nurl = \"/\"\n[[request]]\nname = \"a\"\nurl = \"/\"\n");
        assert!(twice.starts_with("s.toml:5:8: request 'a' is defined twice"), "{twice}");

        let elsewhere = error("[[request]]\nname = \"a\"\nurl = \"http://other:9/\"\n");
        assert!(elsewhere.contains("is not on http://127.0.0.1:1"), "{elsewhere}");

        let space = error("[[request]]\nname = \"a\"\nurl = \"/log in\"\n");
        assert!(space.starts_with("s.toml:3:12: '/log in': a space cannot be sent"), "{space}");
        let escape = error("[[request]]\nname = \"a\"\nurl = \"http://127.0.0.1:1/a%zz?${x}\"\n[vars]\nx = \"%\"\n");
        assert!(escape.starts_with("s.toml:3:28: 'http://127.0.0.1:1/a%zz?${x}': '%' must begin"), "{escape}");
        let scheme = parse("[[request]]\nname = \"a\"\nurl = \"/\"\n", "s.toml", Some("ftp://h:1")).unwrap_err();
        assert!(scheme.to_string().contains("is not http:// or https://"), "{scheme}");

        assert!(error("").contains("at least one [[request]]"));
        assert!(error("[[request]]\nname = 3\n").starts_with("s.toml:2:8: invalid type"));
    }
}
