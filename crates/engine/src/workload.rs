//! [`Workload`]: what is sent. Either one request encoded once (the load path: every connection writes the same
//! shared bytes), or a scenario: named requests picked by weight or strung into sessions, rendered per request
//! for a virtual [`User`] (its variables and cookie jar) into a buffer the connection reuses.

use std::sync::Arc;
use std::time::Duration;

use shootout_metrics::Check;
use shootout_scenario::{Request, Scenario, Session, Source};

use crate::http::fields::Untranslatable;
use crate::http::h2::request::Request2;
use crate::http::h3::qpack::Request3;
use crate::http::request::{self, Head};
use crate::http::response::{Capture, MAX_CAPTURE};
use crate::redirect::{self, Hop, Next, Redirects};

/// What the run sends.
#[derive(Debug)]
pub struct Workload {
    /// The requests, by index.
    pub requests: Vec<Planned>,
    /// Sessions (empty: requests are picked from the mix).
    pub sessions: Vec<Session>,
    mix: Weights,
    session_mix: Weights,
    /// Starting variable values of every user.
    pub initial: Vec<String>,
    host: String,
    close: bool,
    redirects: Redirects,
}

/// One request, ready to send.
#[derive(Debug)]
pub struct Planned {
    /// Its name.
    pub name: String,
    /// HEAD responses have no body.
    pub head_request: bool,
    /// The bytes, when the request never varies and no user state is kept (the load path).
    pub encoded: Option<Arc<[u8]>>,
    /// The same request in HTTP/2 form, when the run speaks HTTP/2.
    pub encoded2: Option<Request2>,
    /// The same request in HTTP/3 form, when the run speaks HTTP/3.
    pub encoded3: Option<Request3>,
    /// The scenario request it renders from.
    scenario: Option<Request>,
}

/// A virtual user of a scenario: its variables, cookies, and where it is in its session.
#[derive(Debug, Clone, Default)]
pub struct User {
    /// Variable values, by id.
    pub values: Vec<String>,
    /// Cookies the server set, as (name, value).
    pub cookies: Vec<(String, String)>,
    /// The session it runs.
    pub session: usize,
    /// The next step of that session.
    pub step: usize,
    /// Requests sent so far, for walking a urls file in order.
    pub cursor: usize,
    /// A redirect it follows: its current request goes again, there.
    pub hop: Option<Hop>,
}

/// Cumulative weights, to pick an index with probability proportional to its weight.
#[derive(Debug, Clone, Default)]
struct Weights(Vec<f64>);

impl Weights {
    fn new(weights: impl Iterator<Item = f64>) -> Weights {
        let mut total = 0.0;
        Weights(
            weights
                .map(|w| {
                    total += w;
                    total
                })
                .collect(),
        )
    }

    /// The index for a uniform random `unit` in [0, 1).
    fn pick(&self, unit: f64) -> usize {
        let total = self.0.last().copied().unwrap_or(0.0);
        let point = unit * total;
        self.0.iter().position(|&c| point < c).unwrap_or(self.0.len().saturating_sub(1))
    }
}

impl Workload {
    /// One request, encoded once.
    pub fn single(name: String, bytes: Vec<u8>, head_request: bool) -> Workload {
        Workload {
            requests: vec![Planned {
                name,
                head_request,
                encoded: Some(bytes.into()),
                encoded2: None,
                encoded3: None,
                scenario: None,
            }],
            sessions: Vec::new(),
            mix: Weights::new([1.0].into_iter()),
            session_mix: Weights::default(),
            initial: Vec::new(),
            host: String::new(),
            close: false,
            redirects: Redirects::default(),
        }
    }

    /// A scenario, sent to `host` (the Host header value); `close` asks for a new connection per request.
    pub fn scenario(scenario: Scenario, host: String, close: bool) -> Workload {
        let mix = Weights::new(scenario.requests.iter().map(|r| r.weight));
        let session_mix = Weights::new(scenario.sessions.iter().map(|s| s.weight));
        let requests = scenario
            .requests
            .into_iter()
            .map(|r| Planned {
                name: r.name.clone(),
                head_request: r.method == "HEAD",
                encoded: None,
                encoded2: None,
                encoded3: None,
                scenario: Some(r),
            })
            .collect();
        let (sessions, initial) = (scenario.sessions, scenario.initial);
        Workload { requests, sessions, mix, session_mix, initial, host, close, redirects: Redirects::default() }
    }

    /// Follows redirects to `server` only, up to `most` hops in a row.
    pub fn follow_redirects(&mut self, server: &url::Url, most: u32) {
        self.redirects = Redirects::new(server, most);
    }

    /// The bytes of `request` as a user sends them: encoded once, or rendered into `out` (a scenario's, or a
    /// redirect's hop: `hop`).
    pub fn bytes<'a>(&'a self, request: usize, hop: bool, out: &'a [u8]) -> &'a [u8] {
        match &self.requests[request].encoded {
            Some(bytes) if !hop => bytes,
            _ => out,
        }
    }

    /// What the response to `request` (sent as `sent`, by `user`) with `status` and `head` asks next: nothing, a
    /// redirect's hop, or a place refused.
    pub fn next_after(&self, request: usize, user: &User, status: u16, head: &[u8], sent: &[u8]) -> Next {
        if self.requests[request].scenario.as_ref().is_some_and(|r| !r.follow_redirects) {
            return Next::Done;
        }
        self.redirects.answer(status, head, sent, user.hop.as_ref().map_or(0, |h| h.hops))
    }

    /// Renders `hop`, which `user` follows for `request`, into `out`: the request as it would go now (its cookies
    /// included), sent again where the redirect said.
    pub fn render_hop(&self, request: usize, user: &User, hop: &Hop, out: &mut Vec<u8>) {
        let mut first = Vec::new();
        if self.requests[request].scenario.is_some() {
            let _ = self.render(request, &User { hop: None, ..user.clone() }, &mut first);
        }
        let sent = self.bytes(request, false, &first);
        redirect::rewrite(sent, hop, &user.cookies, out);
    }

    /// Readies the requests that never vary for HTTP/2 over `scheme`: their header blocks, encoded once.
    pub fn speak_http2(&mut self, scheme: &str) -> Result<(), Untranslatable> {
        for planned in &mut self.requests {
            if let Some(bytes) = &planned.encoded {
                planned.encoded2 = Some(Request2::new(bytes, scheme)?);
            }
        }
        Ok(())
    }

    /// Readies the requests that never vary for HTTP/3: their HEADERS frames, encoded once.
    pub fn speak_http3(&mut self) -> Result<(), Untranslatable> {
        for planned in &mut self.requests {
            if let Some(bytes) = &planned.encoded {
                planned.encoded3 = Some(Request3::new(bytes)?);
            }
        }
        Ok(())
    }

    /// True for a scenario (users keep state; requests are rendered).
    pub fn has_users(&self) -> bool {
        self.requests.iter().any(|r| r.scenario.is_some())
    }

    /// A request of the mix, for a uniform random `unit`.
    pub fn pick_request(&self, unit: f64) -> usize {
        self.mix.pick(unit)
    }

    /// A session, for a uniform random `unit`.
    pub fn pick_session(&self, unit: f64) -> usize {
        self.session_mix.pick(unit)
    }

    /// A fresh user.
    pub fn new_user(&self) -> User {
        User { values: self.initial.clone(), ..User::default() }
    }

    /// What of the response to `request` must be kept.
    pub fn capture(&self, request: usize) -> Capture {
        match &self.requests[request].scenario {
            None => Capture::Nothing,
            Some(r) if r.inspects_response() => Capture::HeadAndBody,
            Some(_) => Capture::Head,
        }
    }

    /// Renders `request` for `user` into `out` (cleared first). A URL that begins with a variable is placed on
    /// the run's server when its value is a whole URL; one off the server is not rendered: the `Err` names its
    /// host.
    pub fn render(&self, request: usize, user: &User, out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        let Some(r) = &self.requests[request].scenario else {
            out.extend_from_slice(self.requests[request].encoded.as_deref().unwrap_or_default());
            return Ok(());
        };
        let has = |name: &str| r.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        let body_len = r.body.rendered_len(&user.values);
        let head = Head { method: &r.method, host: &self.host, body_len, close: self.close };
        head.start(out, |out| r.target.render_line_into(&user.values, out), has);
        for (name, value) in &r.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            value.render_line_into(&user.values, out);
            out.extend_from_slice(b"\r\n");
        }
        request::cookies(out, &user.cookies);
        head.finish(out, has);
        r.body.render_into(&user.values, out);
        if r.target.starts_with_variable() {
            self.place_target(out)?;
        }
        Ok(())
    }

    /// The target of the request rendered in `out` made a path on the run's server (a whole URL on it loses its
    /// origin); `Err` names the host of one off it.
    fn place_target(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let start = out.iter().position(|&b| b == b' ').map_or(0, |p| p + 1);
        let end = start + out[start..].iter().position(|&b| b == b' ').unwrap_or(0);
        let target = String::from_utf8_lossy(&out[start..end]).into_owned();
        if target.starts_with('/') {
            return Ok(());
        }
        let placed = self.redirects.place(&target)?;
        out.splice(start..end, placed.into_bytes());
        Ok(())
    }

    /// Takes cookies and extracted values from a response into `user`, and checks it. Returns the first check it
    /// failed (its status, its body, then the values to extract in order), if any; of a body longer than the
    /// window checks read, the failure says so.
    pub fn inspect(&self, request: usize, user: &mut User, status: u16, head: &[u8], body: Body<'_>) -> Option<Check> {
        let Some(r) = &self.requests[request].scenario else { return None };
        let Body { bytes: body, cut } = body;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        let _ = response.parse(head);
        take_cookies(user, response.headers);
        let mut failed = None;
        if !(if r.expect.status.is_empty() { status < 400 } else { r.expect.status.contains(&status) }) {
            failed = Some(Check::Status);
        }
        if let Some(text) = r.expect.body.as_ref().filter(|_| failed.is_none()) {
            if !body.windows(text.len().max(1)).any(|w| w == text.as_bytes()) {
                failed = Some(if cut { Check::BodyPastWindow } else { Check::Body });
            }
        }
        for (n, extract) in r.extract.iter().enumerate() {
            let value = match &extract.from {
                Source::Header(name) => response
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned()),
                Source::Regex(pattern) => pattern
                    .captures(body)
                    .and_then(|c| c.get(1).or_else(|| c.get(0)))
                    .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned()),
                Source::Json(pointer) => serde_json::from_slice::<serde_json::Value>(body).ok().and_then(|json| {
                    json.pointer(pointer).map(|v| match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                }),
            };
            match value {
                Some(value) if extract.url_encoded => {
                    user.values[extract.variable] = shootout_scenario::url_encode(&value)
                }
                Some(value) => user.values[extract.variable] = value,
                None if cut && !matches!(extract.from, Source::Header(_)) => {
                    failed = failed.or(Some(Check::ExtractPastWindow(n as u32)))
                }
                None => failed = failed.or(Some(Check::Extract(n as u32))),
            }
        }
        failed
    }

    /// Takes the cookies a response's `head` sets into `user` (a redirect's hop, whose checks are the last
    /// response's).
    pub fn take_cookies(&self, user: &mut User, head: &[u8]) {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        let _ = response.parse(head);
        take_cookies(user, response.headers);
    }

    /// Scenarios: what request `request` expected of a response that failed `check` with `status`, and what it
    /// got, as the summary writes them (`status 200`, `302`).
    pub fn describe_check(&self, request: usize, check: Check, status: u16) -> (String, String) {
        let Some(r) = self.requests.get(request).and_then(|p| p.scenario.as_ref()) else {
            return ("a check".into(), format!("status {status}"));
        };
        match check {
            Check::Status => {
                let expected = match r.expect.status.as_slice() {
                    [] => "a status below 400".to_string(),
                    codes => {
                        let codes: Vec<String> = codes.iter().map(u16::to_string).collect();
                        format!("status {}", codes.join(" or "))
                    }
                };
                (expected, status.to_string())
            }
            Check::Body | Check::BodyPastWindow => {
                let text = r.expect.body.as_deref().unwrap_or_default();
                (format!("a body containing {text:?}"), without(status, check))
            }
            Check::Extract(n) | Check::ExtractPastWindow(n) => {
                let from = match r.extract.get(n as usize).map(|e| &e.from) {
                    Some(Source::Header(name)) => format!("header {name}"),
                    Some(Source::Regex(pattern)) => format!("regex {:?}", pattern.as_str()),
                    Some(Source::Json(pointer)) => format!("JSON {pointer}"),
                    None => "the response".into(),
                };
                (format!("a value from {from}"), without(status, check))
            }
        }
    }

    /// After `user` finished step `user.step` of its session: the pause the step asks for, and whether the
    /// session goes on (after the last step, a closed model's user pauses before its next session). `unit` is a
    /// uniform random number for the think time.
    pub fn after_step(&self, user: &mut User, unit: f64) -> (Duration, bool) {
        let Some(session) = self.sessions.get(user.session) else { return (Duration::ZERO, false) };
        let think = session.steps.get(user.step).map_or(Duration::ZERO, |step| step.think.draw(unit));
        user.step += 1;
        (think, user.step < session.steps.len())
    }

    /// The request of the user's current step.
    pub fn step_request(&self, user: &User) -> usize {
        self.sessions[user.session].steps[user.step].request
    }
}

/// Takes the cookies of `headers` (`Set-Cookie`) into `user`'s jar: a name set again takes its new value.
fn take_cookies(user: &mut User, headers: &[httparse::Header<'_>]) {
    for header in headers.iter().filter(|h| h.name.eq_ignore_ascii_case("set-cookie")) {
        let pair = header.value.split(|&b| b == b';').next().unwrap_or_default();
        if let Some(eq) = pair.iter().position(|&b| b == b'=') {
            let name = String::from_utf8_lossy(pair[..eq].trim_ascii()).into_owned();
            let value = String::from_utf8_lossy(pair[eq + 1..].trim_ascii()).into_owned();
            match user.cookies.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => user.cookies.push((name, value)),
            }
        }
    }
}

/// A response's body as checks and extractions read it: its first [`MAX_CAPTURE`] bytes, and whether it went on.
#[derive(Debug, Clone, Copy)]
pub struct Body<'a> {
    /// The bytes kept.
    pub bytes: &'a [u8],
    /// The body was longer than [`MAX_CAPTURE`]: what is after is not read.
    pub cut: bool,
}

/// What a response that failed a body check or an extraction got: `status 200 without it`, and, of a body longer
/// than the part read, where the reading stopped.
fn without(status: u16, check: Check) -> String {
    match check {
        Check::BodyPastWindow | Check::ExtractPastWindow(_) => format!(
            "status {status} without it in the first {} MiB of its body, which is as far as checks read",
            MAX_CAPTURE >> 20
        ),
        _ => format!("status {status} without it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Workload {
        Workload::scenario(shootout_scenario::parse(text, "t.toml", Some("http://h:1")).unwrap(), "h:1".into(), false)
    }

    #[test]
    fn picks_by_weight() {
        let w = Weights::new([1.0, 3.0].into_iter());
        assert_eq!(w.pick(0.0), 0);
        assert_eq!(w.pick(0.24), 0);
        assert_eq!(w.pick(0.26), 1);
        assert_eq!(w.pick(0.999), 1);
    }

    #[test]
    fn renders_variables_and_cookies() {
        let w = scenario(
            "[vars]\nid = \"7\"\n[[request]]\nname = \"a\"\nurl = \"/items/${id}\"\nbody = \"x=${id}\"\nheaders = { X-Id = \"${id}\" }\n",
        );
        let mut user = w.new_user();
        user.cookies.push(("s".into(), "abc".into()));
        let mut out = Vec::new();
        w.render(0, &user, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /items/7 HTTP/1.1\r\nHost: h:1\r\n"), "{text}");
        assert!(text.contains("X-Id: 7\r\n") && text.contains("Cookie: s=abc\r\n"), "{text}");
        assert!(text.ends_with("Content-Length: 3\r\n\r\nx=7"), "{text}");
        // A value taken from a response with a line break in it stays on its line; the body keeps it.
        user.values[0] = "7\r\nX-Injected: 1".into();
        let mut out = Vec::new();
        w.render(0, &user, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /items/7X-Injected: 1 HTTP/1.1\r\n"), "{text}");
        let head = &text[..text.find("\r\n\r\n").unwrap()];
        assert!(head.contains("X-Id: 7X-Injected: 1\r\n") && !head.contains("\nX-Injected"), "{text}");
        assert!(text.ends_with("x=7\r\nX-Injected: 1"), "{text}");
    }

    #[test]
    fn inspects_cookies_checks_and_extracts() {
        let w = scenario(concat!(
            "[[request]]\nname = \"login\"\nurl = \"/login\"\nexpect = { status = 200, body = \"ok\" }\n",
            "extract = [{ var = \"token\", json = \"/token\" }, { var = \"n\", regex = 'n=(\\d+)' }, ",
            "{ var = \"loc\", header = \"X-Next\" }]\n"
        ));
        let mut user = w.new_user();
        let head = b"HTTP/1.1 200 OK\r\nSet-Cookie: sid=42; Path=/\r\nX-Next: /home\r\n\r\n";
        let whole = |bytes: &'static [u8]| Body { bytes, cut: false };
        assert_eq!(w.inspect(0, &mut user, 200, head, whole(br#"{"token":"t1","ok":"n=5"}"#)), None);
        assert_eq!(user.cookies, [("sid".to_string(), "42".to_string())]);
        assert_eq!(user.values, ["t1", "5", "/home"]);
        let wrong_status = w.inspect(0, &mut user, 302, head, whole(br#"{"token":"t1","ok":"n=5"}"#));
        assert_eq!(wrong_status, Some(Check::Status));
        assert_eq!(w.describe_check(0, Check::Status, 302), ("status 200".to_string(), "302".to_string()));
        assert_eq!(w.inspect(0, &mut user, 200, head, whole(br#"{"id":"t1"}"#)), Some(Check::Body), "no text expected");
        let missing = w.inspect(0, &mut user, 200, head, whole(br#"{"ok":"n=5"}"#));
        assert_eq!(missing, Some(Check::Extract(0)), "missing token");
        // A body longer than the window: the failure says where the reading stopped.
        let cut = w.inspect(0, &mut user, 200, head, Body { bytes: br#"{"id":"t1"}"#, cut: true });
        assert_eq!(cut, Some(Check::BodyPastWindow));
        let (_, got) = w.describe_check(0, Check::BodyPastWindow, 200);
        assert_eq!(got, "status 200 without it in the first 1 MiB of its body, which is as far as checks read");
        let cut = w.inspect(0, &mut user, 200, head, Body { bytes: br#"{"ok":"n=5"}"#, cut: true });
        assert_eq!(cut, Some(Check::ExtractPastWindow(0)));
        let (expected, got) = w.describe_check(0, Check::Extract(0), 200);
        assert_eq!((expected.as_str(), got.as_str()), ("a value from JSON /token", "status 200 without it"));
    }
}
