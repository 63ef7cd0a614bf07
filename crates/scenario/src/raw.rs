//! The scenario file as written: TOML, read with serde; any key not listed here is an error.
//!
//! ```toml
//! base = "http://127.0.0.1:8080"          # where relative URLs go (or give the URL on the command line)
//! [vars]                                  # starting values of variables
//! user = "alice"
//! [headers]                               # sent with every request
//! Accept = "text/html"
//!
//! [[request]]
//! name = "login"
//! method = "POST"
//! url = "/login"
//! body = "user=${user}&password=secret"
//! headers = { Content-Type = "application/x-www-form-urlencoded" }
//! expect = { status = 200, body = "welcome" }
//! extract = [{ var = "token", json = "/token" }, { var = "csrf", regex = 'name="csrf" value="([^"]+)"' }]
//! weight = 1                              # share of the mix, when there are no sessions
//!
//! [[session]]
//! name = "browse"
//! steps = [{ request = "login", think = "uniform(1s, 3s)" }, { request = "home" }]
//!
//! [[phase]]                               # new users per second, held for the phase (open model)
//! duration = "1m"
//! users_per_second = 5
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// Origin of relative URLs.
    pub base: Option<Spanned<String>>,
    /// Starting values of variables.
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Headers for every request.
    #[serde(default)]
    pub headers: BTreeMap<String, Spanned<String>>,
    /// The named requests.
    #[serde(default, rename = "request")]
    pub requests: Vec<RequestDef>,
    /// User sessions.
    #[serde(default, rename = "session")]
    pub sessions: Vec<SessionDef>,
    /// Arrival phases of new users.
    #[serde(default, rename = "phase")]
    pub phases: Vec<PhaseDef>,
}

/// `[[request]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestDef {
    /// Unique name.
    pub name: Spanned<String>,
    /// Method (default GET, or POST with a body).
    pub method: Option<Spanned<String>>,
    /// Path, or absolute URL on the same server, or a variable holding either (`${next}`).
    pub url: Spanned<String>,
    /// Follow the redirects it is answered with (default true, up to `--max-redirects`).
    pub follow_redirects: Option<bool>,
    /// Extra headers.
    #[serde(default)]
    pub headers: BTreeMap<String, Spanned<String>>,
    /// Body.
    pub body: Option<Spanned<String>>,
    /// Share of the mix.
    pub weight: Option<Spanned<f64>>,
    /// Checks on the response.
    pub expect: Option<ExpectDef>,
    /// Values to take from the response.
    #[serde(default)]
    pub extract: Vec<Spanned<ExtractDef>>,
}

/// `expect = { status = 200, body = "text" }`; `status` may also be a list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectDef {
    /// Acceptable status or statuses.
    pub status: Option<Spanned<StatusDef>>,
    /// Text the body must contain.
    pub body: Option<String>,
}

/// One status or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum StatusDef {
    /// One.
    One(i64),
    /// Several.
    Many(Vec<i64>),
}

/// `{ var = "name", regex = "…" | json = "/pointer" | header = "Name" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractDef {
    /// The variable that receives the value.
    pub var: String,
    /// A regular expression over the body.
    pub regex: Option<String>,
    /// A JSON pointer into the body.
    pub json: Option<String>,
    /// A response header.
    pub header: Option<String>,
    /// `"url"`: the value is kept percent-encoded, ready for a query or a form body (a CSRF token's `+`, `/`, `=`).
    pub encode: Option<Spanned<String>>,
}

/// `[[session]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionDef {
    /// Name.
    pub name: String,
    /// Share of the users.
    pub weight: Option<Spanned<f64>>,
    /// The steps.
    pub steps: Spanned<Vec<StepDef>>,
}

/// `{ request = "name", think = "2s" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepDef {
    /// Name of a `[[request]]`.
    pub request: Spanned<String>,
    /// Pause after the step.
    pub think: Option<Spanned<String>>,
}

/// `[[phase]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseDef {
    /// How long the phase lasts.
    pub duration: Spanned<String>,
    /// New users arriving per second (a Poisson process), held for the whole phase.
    pub users_per_second: Spanned<f64>,
}
