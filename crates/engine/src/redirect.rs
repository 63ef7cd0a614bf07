//! Redirects and URLs taken from responses, kept on the run's server. A response of 301, 302, 303, 307 or 308
//! with a `Location` is followed ([`Redirects::answer`]) as a hop: the same request again, to that place (with GET
//! and no body after 301, 302 and 303; as it was after 307 and 308), its cookies those the user holds by then
//! ([`rewrite`]). A place off the run's server, or one hop more than `--max-redirects` allows, is refused: nothing
//! is sent there. A scenario URL that begins with a variable is placed the same way when it is rendered
//! ([`Redirects::place`]).

use shootout_model::ErrorKind;
use url::Url;

use crate::http::request;

/// A redirect being followed by a user: where to, with which method, and how many hops so far in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// The path and query on the run's server.
    pub target: String,
    /// 307 and 308: the method and body go again; otherwise GET (HEAD stays HEAD), without the body.
    pub same_method: bool,
    /// Hops followed in a row, this one included.
    pub hops: u32,
}

/// What the answer to a request asks of its user next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Nothing: it is the request's last response.
    Done,
    /// A hop to follow (see [`Hop`]).
    Follow(Hop),
    /// A place it may not go: off the run's server (named), or past the most hops in a row.
    Refused(ErrorKind, Option<String>),
}

/// The redirect policy of a run: its server and the most hops it follows in a row.
#[derive(Debug, Clone, Default)]
pub struct Redirects {
    server: Option<Url>,
    most: u32,
}

impl Redirects {
    /// Hops to `server` only (`scheme://host:port`, a path ignored), `most` in a row (0: none).
    pub fn new(server: &Url, most: u32) -> Redirects {
        let mut server = server.clone();
        server.set_path("/");
        server.set_query(None);
        Redirects { server: Some(server), most }
    }

    /// What a response with `status` and the head `head` means for a request sent as `sent` (an HTTP/1.1
    /// request, its target read from its first line) that follows redirects, after `hops` so far.
    pub fn answer(&self, status: u16, head: &[u8], sent: &[u8], hops: u32) -> Next {
        if self.most == 0 || !matches!(status, 301 | 302 | 303 | 307 | 308) {
            return Next::Done;
        }
        let Some(location) = header(head, "location") else { return Next::Done };
        if hops >= self.most {
            return Next::Refused(ErrorKind::TooManyRedirects, None);
        }
        let from = request_target(sent).unwrap_or("/");
        match self.resolve(from, &location) {
            Ok(target) => Next::Follow(Hop { target, same_method: matches!(status, 307 | 308), hops: hops + 1 }),
            Err(host) => Next::Refused(ErrorKind::OffOrigin, Some(host)),
        }
    }

    /// A rendered target that may be a whole URL (a variable's value) as the path and query to send, or the
    /// host it names when that is off the run's server.
    pub fn place(&self, target: &str) -> Result<String, String> {
        self.resolve("/", target)
    }

    /// `place` (absolute, or relative to the target `from`) as a path and query on the run's server, or the
    /// `host:port` it names instead.
    fn resolve(&self, from: &str, place: &str) -> Result<String, String> {
        let Some(server) = &self.server else { return Ok(place.to_string()) };
        let here = server.join(from).unwrap_or_else(|_| server.clone());
        let there = here.join(place.trim()).map_err(|_| format!("'{place}' (not a URL)"))?;
        let same = there.scheme() == server.scheme()
            && there.host_str() == server.host_str()
            && there.port_or_known_default() == server.port_or_known_default();
        if !same {
            let host = there.host_str().unwrap_or("");
            return Err(match there.port_or_known_default() {
                Some(port) => format!("{}://{host}:{port}", there.scheme()),
                None => format!("{}://{host}", there.scheme()),
            });
        }
        Ok(match there.query() {
            Some(query) => format!("{}?{query}", there.path()),
            None => there.path().to_string(),
        })
    }
}

/// The target of an HTTP/1.1 request's first line.
fn request_target(request: &[u8]) -> Option<&str> {
    let line = request.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    line.split(' ').nth(1)
}

/// The value of the first header `name` in a response head.
fn header(head: &[u8], name: &str) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let _ = response.parse(head);
    let found = response.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name))?;
    Some(String::from_utf8_lossy(found.value).into_owned())
}

/// Writes into `out` the request `sent` (HTTP/1.1, as shootout encodes it) sent again as `hop` says, with the
/// cookies `cookies` in place of any it had.
pub fn rewrite(sent: &[u8], hop: &Hop, cookies: &[(String, String)], out: &mut Vec<u8>) {
    out.clear();
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut parsed = httparse::Request::new(&mut headers);
    let body_at = match parsed.parse(sent) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => sent.len(),
    };
    let method = match parsed.method.unwrap_or("GET") {
        method if hop.same_method => method,
        "HEAD" => "HEAD",
        _ => "GET",
    };
    out.extend_from_slice(format!("{method} {} HTTP/1.1\r\n", hop.target).as_bytes());
    for header in parsed.headers.iter() {
        let dropped = header.name.eq_ignore_ascii_case("cookie")
            || (!hop.same_method
                && ["content-length", "content-type", "transfer-encoding"]
                    .iter()
                    .any(|n| header.name.eq_ignore_ascii_case(n)));
        if !dropped {
            request::header(out, header.name, header.value);
        }
    }
    request::cookies(out, cookies);
    out.extend_from_slice(b"\r\n");
    if hop.same_method {
        out.extend_from_slice(&sent[body_at..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirects(most: u32) -> Redirects {
        Redirects::new(&Url::parse("https://127.0.0.1:8443/app").unwrap(), most)
    }

    fn moved(status: u16, location: &str) -> Vec<u8> {
        format!("HTTP/1.1 {status} X\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n").into_bytes()
    }

    #[test]
    fn a_redirect_on_the_server_is_a_hop_and_elsewhere_is_refused_by_name() {
        let r = redirects(2);
        let sent = b"POST /login HTTP/1.1\r\nHost: x\r\n\r\n";
        let hop = |target: &str, same_method, hops| Next::Follow(Hop { target: target.into(), same_method, hops });
        assert_eq!(r.answer(303, &moved(303, "/account"), sent, 0), hop("/account", false, 1));
        assert_eq!(r.answer(302, &moved(302, "account?x=1"), sent, 0), hop("/account?x=1", false, 1), "relative");
        assert_eq!(r.answer(307, &moved(307, "https://127.0.0.1:8443/b"), sent, 1), hop("/b", true, 2));
        assert_eq!(
            r.answer(302, &moved(302, "https://127.0.0.1:8443/b"), sent, 2),
            Next::Refused(ErrorKind::TooManyRedirects, None)
        );
        let elsewhere = r.answer(302, &moved(302, "http://other.test/x"), sent, 0);
        assert_eq!(elsewhere, Next::Refused(ErrorKind::OffOrigin, Some("http://other.test:80".into())));
        assert_eq!(r.answer(200, &moved(200, "/a"), sent, 0), Next::Done);
        assert_eq!(r.answer(302, b"HTTP/1.1 302 X\r\n\r\n", sent, 0), Next::Done, "no Location: nothing to follow");
        assert_eq!(redirects(0).answer(302, &moved(302, "/a"), sent, 0), Next::Done, "--max-redirects 0");
        assert_eq!(r.place("https://127.0.0.1:8443/next?p=2"), Ok("/next?p=2".into()));
        assert_eq!(r.place("/x"), Ok("/x".into()));
        assert_eq!(r.place("https://evil.test/x"), Err("https://evil.test:443".into()));
    }

    #[test]
    fn a_hop_goes_as_get_without_the_body_unless_it_is_a_307_or_308() {
        let sent = b"POST /login HTTP/1.1\r\nHost: h:1\r\nContent-Type: text/plain\r\nCookie: a=1\r\nContent-Length: 3\r\n\r\nabc";
        let cookies = [("a".to_string(), "1".to_string()), ("sid".to_string(), "2".to_string())];
        let mut out = Vec::new();
        rewrite(sent, &Hop { target: "/account".into(), same_method: false, hops: 1 }, &cookies, &mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "GET /account HTTP/1.1\r\nHost: h:1\r\nCookie: a=1; sid=2\r\n\r\n"
        );
        rewrite(sent, &Hop { target: "/again".into(), same_method: true, hops: 1 }, &cookies[..1], &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("POST /again HTTP/1.1\r\nHost: h:1\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"),
            "{text}"
        );
        assert!(text.ends_with("Cookie: a=1\r\n\r\nabc"), "{text}");
    }
}
