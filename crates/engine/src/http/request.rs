//! Encodes the request a run sends, once, before the run starts: the hot path only copies these bytes out.

/// What a request is made of, before encoding.
#[derive(Debug, Clone)]
pub struct RequestSpec<'a> {
    /// Upper-case method.
    pub method: &'a str,
    /// Path and query, starting with `/`.
    pub target: &'a str,
    /// Value of the Host header (host, and port when not the scheme's default).
    pub host: &'a str,
    /// User headers, in order; they replace the defaults of the same name.
    pub headers: &'a [(String, String)],
    /// Request body (may be empty).
    pub body: &'a [u8],
    /// Ask the server to close the connection after the response.
    pub close: bool,
}

/// The complete request bytes: request line, headers, blank line, body.
pub fn encode(spec: &RequestSpec<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + spec.body.len());
    let user_has = |name: &str| spec.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let head = Head { method: spec.method, host: spec.host, body_len: spec.body.len(), close: spec.close };
    head.start(&mut out, |out| out.extend_from_slice(spec.target.as_bytes()), user_has);
    for (name, value) in spec.headers {
        header(&mut out, name, value.as_bytes());
    }
    head.finish(&mut out, user_has);
    out.extend_from_slice(spec.body);
    out
}

/// What every request head carries besides its own headers. The one place that decides the default headers
/// and the framing, for plain requests and scenario requests alike.
#[derive(Debug, Clone, Copy)]
pub struct Head<'a> {
    /// Upper-case method.
    pub method: &'a str,
    /// Value of the Host header, unless the request sets its own.
    pub host: &'a str,
    /// Body length.
    pub body_len: usize,
    /// Ask the server to close the connection after the response.
    pub close: bool,
}

impl Head<'_> {
    /// Writes the request line (`target` writes the path and query), then Host, User-Agent and Accept, each
    /// unless `has` says the request sets it.
    pub fn start(&self, out: &mut Vec<u8>, target: impl FnOnce(&mut Vec<u8>), has: impl Fn(&str) -> bool) {
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        target(out);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let defaults: [(&str, &[u8]); 3] = [
            ("Host", self.host.as_bytes()),
            ("User-Agent", concat!("shootout/", env!("CARGO_PKG_VERSION")).as_bytes()),
            ("Accept", b"*/*"),
        ];
        for (name, value) in defaults {
            if !has(name) {
                header(out, name, value);
            }
        }
    }

    /// Writes Content-Length and Connection (unless set by the request) and the blank line; the body follows.
    pub fn finish(&self, out: &mut Vec<u8>, has: impl Fn(&str) -> bool) {
        let sends_length = self.body_len > 0 || matches!(self.method, "POST" | "PUT" | "PATCH");
        if sends_length && !has("Content-Length") {
            header(out, "Content-Length", self.body_len.to_string().as_bytes());
        }
        if self.close && !has("Connection") {
            header(out, "Connection", b"close");
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// Writes the `Cookie` line of a user's jar (`a=1; b=2`), or nothing for an empty one.
pub fn cookies(out: &mut Vec<u8>, jar: &[(String, String)]) {
    if jar.is_empty() {
        return;
    }
    out.extend_from_slice(b"Cookie: ");
    for (i, (name, value)) in jar.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"; ");
        }
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// Writes one `Name: value` line.
pub fn header(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(method: &'a str, headers: &'a [(String, String)], body: &'a [u8], close: bool) -> RequestSpec<'a> {
        RequestSpec { method, target: "/a?b=1", host: "127.0.0.1:8080", headers, body, close }
    }

    #[test]
    fn a_plain_get() {
        let text = String::from_utf8(encode(&spec("GET", &[], b"", false))).unwrap();
        assert!(text.starts_with("GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), "{text}");
        assert!(text.ends_with("Accept: */*\r\n\r\n"), "{text}");
        assert!(!text.contains("Content-Length") && !text.contains("Connection"));
    }

    #[test]
    fn body_close_and_user_headers() {
        let headers = vec![("host".to_string(), "example.test".to_string()), ("X-A".to_string(), "1".to_string())];
        let text = String::from_utf8(encode(&spec("POST", &headers, b"hello", true))).unwrap();
        assert!(text.contains("Content-Length: 5\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.contains("host: example.test\r\n") && !text.contains("Host: 127"), "user Host replaces ours");
        assert!(text.contains("X-A: 1\r\n") && text.ends_with("\r\n\r\nhello"), "{text}");
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        assert!(req.parse(text.as_bytes()).unwrap().is_complete());
    }
}
