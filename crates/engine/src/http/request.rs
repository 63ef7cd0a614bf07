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
    let user_has = |name: &str| spec.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut out = Vec::with_capacity(128 + spec.body.len());
    out.extend_from_slice(format!("{} {} HTTP/1.1\r\n", spec.method, spec.target).as_bytes());
    let mut header = |name: &str, value: &str| {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    };
    if !user_has("host") {
        header("Host", spec.host);
    }
    if !user_has("user-agent") {
        header("User-Agent", concat!("shootout/", env!("CARGO_PKG_VERSION")));
    }
    if !user_has("accept") {
        header("Accept", "*/*");
    }
    let sends_length = !spec.body.is_empty() || matches!(spec.method, "POST" | "PUT" | "PATCH");
    if sends_length && !user_has("content-length") {
        header("Content-Length", &spec.body.len().to_string());
    }
    if spec.close && !user_has("connection") {
        header("Connection", "close");
    }
    for (name, value) in spec.headers {
        header(name, value);
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(spec.body);
    out
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
        assert!(text.ends_with("X-A: 1\r\n\r\nhello"));
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        assert!(req.parse(text.as_bytes()).unwrap().is_complete());
    }
}
