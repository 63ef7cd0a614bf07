//! Scenario files: what `shootout load --scenario FILE` sends, beyond one URL.
//!
//! A scenario names requests (method, URL, headers, body, an expected status or body text, values to extract from
//! the response), mixes them by weight, and strings them into user sessions: ordered steps with think time, each
//! user with its own cookie jar and variables. Phases give Tsung-like arrivals of new users per second.
//!
//! Layout:
//! - [`raw`]: the file as written (serde types; unknown keys are rejected).
//! - [`validate`]: raw → [`Scenario`], checking every reference, pattern and duration, and reporting the first
//!   problem as `file:line:column: what is wrong (hint)` ([`FileError`]).
//! - [`template`]: [`Template`], text with `${variable}` references.
//! - [`think`]: [`Think`], the pause between steps.
//! - [`urls`]: siege's urls file (`-f urls.txt`), read into the same [`Scenario`].
//! - this file: the validated [`Scenario`] and its parts, which the engine runs; they serialize, so a coordinator
//!   hands its agents exactly the scenario it checked.

pub mod raw;
pub mod template;
pub mod think;
pub mod urls;
pub mod validate;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use template::{Piece, Template};
pub use think::Think;
pub use urls::parse_urls;
pub use validate::{parse, FileError, Locator};

/// A validated scenario, ready to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    /// The named requests, in file order.
    pub requests: Vec<Request>,
    /// User sessions; when empty, each request is picked from the mix by weight.
    pub sessions: Vec<Session>,
    /// Arrival phases: new users per second, ramped like stages (open model of sessions).
    pub phases: Vec<shootout_model::Stage>,
    /// Every variable name (those given in `[vars]` and those extracted); a variable's index is its id.
    pub variables: Vec<String>,
    /// Starting values, by variable id (empty for extracted ones until a response sets them).
    pub initial: Vec<String>,
    /// The server every request goes to (`scheme://host:port`), and the origin of relative URLs.
    pub base: String,
}

/// One named request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// Its name, for per-request results.
    pub name: String,
    /// HTTP method, upper case.
    pub method: String,
    /// Path and query (may use variables).
    pub target: Template,
    /// Headers, in order (values may use variables).
    pub headers: Vec<(String, Template)>,
    /// Body (may use variables; empty for none).
    pub body: Template,
    /// Share of the mix, relative to the other requests' weights.
    pub weight: f64,
    /// What a good response looks like.
    pub expect: Expect,
    /// Values taken from the response into variables.
    pub extract: Vec<Extract>,
    /// Redirects it is answered with are followed (up to the run's `max_redirects`), each hop a response under
    /// its name; its checks and extractions apply to the last.
    #[serde(default = "follows")]
    pub follow_redirects: bool,
}

fn follows() -> bool {
    true
}

impl Request {
    /// True when the response must be kept (head and body) to check or extract from it.
    pub fn inspects_response(&self) -> bool {
        self.expect.body.is_some() || !self.extract.is_empty()
    }
}

/// What a good response looks like. A response that is not counts as a failed check.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Expect {
    /// Acceptable statuses; empty means any status below 400.
    pub status: Vec<u16>,
    /// Text the body must contain.
    pub body: Option<String>,
}

/// A value taken from a response into a variable.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Extract {
    /// The variable's id.
    pub variable: usize,
    /// Where the value comes from.
    pub from: Source,
    /// Kept percent-encoded (`encode = "url"`): every byte but letters, digits and `-._~` as `%XX`.
    #[serde(default)]
    pub url_encoded: bool,
}

/// `value` percent-encoded, as a query's or a form body's value: every byte but ASCII letters, digits and `-._~`
/// becomes `%XX`.
pub fn url_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Where an extracted value comes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Source {
    /// The first capture group (or the whole match) of a regular expression over the body.
    Regex(#[serde(with = "pattern")] regex::bytes::Regex),
    /// A JSON pointer (RFC 6901) into the body parsed as JSON; strings are taken without quotes.
    Json(String),
    /// A response header, by name.
    Header(String),
}

/// A user session: steps run in order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    /// Its name.
    pub name: String,
    /// Share of the users that run it, relative to the other sessions' weights.
    pub weight: f64,
    /// The steps.
    pub steps: Vec<Step>,
}

/// One step of a session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// Index of the request in [`Scenario::requests`].
    pub request: usize,
    /// Pause after the step, before the next one.
    pub think: Think,
}

impl Scenario {
    /// The longest think time of any step, for planning.
    pub fn longest_think(&self) -> Duration {
        self.sessions.iter().flat_map(|s| &s.steps).map(|step| step.think.longest()).max().unwrap_or_default()
    }
}

/// A regular expression travels as its pattern and is compiled again on arrival.
mod pattern {
    use regex::bytes::Regex;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(regex: &Regex, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(regex.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Regex, D::Error> {
        let pattern = String::deserialize(deserializer)?;
        Regex::new(&pattern).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_token_is_encoded_for_a_form_body() {
        assert_eq!(super::url_encode("j6+k/Hz4=="), "j6%2Bk%2FHz4%3D%3D");
        assert_eq!(super::url_encode("a-b_c.d~e f"), "a-b_c.d~e%20f");
        assert_eq!(super::url_encode("é"), "%C3%A9");
    }
}
