//! QPACK (RFC 9204) with its static table only: the client advertises a dynamic table of capacity 0, so the
//! server's field sections may refer to nothing but the static table, and no encoder or decoder stream is needed
//! either way.
//!
//! Requests: [`Request3`] holds the HEADERS frame of a request that never varies, encoded once (a field that is
//! in the static table with its value is one byte, a name that is in it a byte and the value); [`encode_plain`]
//! makes one for a request rendered anew (scenarios). Responses: [`Decoder`] reads a field section and hands each
//! field to a callback, without allocating per field.

use std::ops::Range;

use super::frame::{kind, put_header};
pub use crate::http::fields::Untranslatable;
use crate::http::fields::{integer, read_integer, read_string, string, translate, Invalid, Recent, Text};

/// The QPACK static table (RFC 9204 Appendix A), by index from 0.
const STATIC: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    ("strict-transport-security", "max-age=31536000; includesubdomains"),
    ("strict-transport-security", "max-age=31536000; includesubdomains; preload"),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    ("content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

/// A request that never varies, in HTTP/3 form, encoded once.
#[derive(Debug, Clone)]
pub struct Request3 {
    /// Its HEADERS frame, whole.
    pub headers: Vec<u8>,
    /// Where the body lies in the HTTP/1.1 bytes.
    pub body: Range<usize>,
}

impl Request3 {
    /// The HTTP/3 form of `http1`, a complete HTTP/1.1 request (always over `https`).
    pub fn new(http1: &[u8]) -> Result<Request3, Untranslatable> {
        let mut headers = Vec::new();
        let mut section = Vec::new();
        let body = encode_plain(http1, &mut section, &mut headers)?;
        Ok(Request3 { headers, body })
    }
}

/// Writes the HEADERS frame of `http1` into `out` (cleared first; `section` is scratch), and returns where the
/// body lies in `http1`. For requests rendered anew each time (scenarios), into buffers that are reused.
pub fn encode_plain(http1: &[u8], section: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<Range<usize>, Untranslatable> {
    section.clear();
    // The field section prefix: Required Insert Count 0, Delta Base 0 (nothing of a dynamic table is used).
    section.extend_from_slice(&[0, 0]);
    let body = translate(http1, "https", &mut |name, value| field(section, name, value))?;
    out.clear();
    put_header(out, kind::HEADERS, section.len());
    out.extend_from_slice(section);
    Ok(body)
}

/// One field line: indexed when the static table has the field, else a literal whose name is indexed when the
/// table has the name.
fn field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    if let Some(index) = STATIC.iter().position(|(n, v)| *n == name && v.as_bytes() == value && !v.is_empty()) {
        // Indexed field line, static (`1T` with T = 1).
        return integer(out, 0xc0, 6, index);
    }
    match STATIC.iter().position(|(n, _)| *n == name) {
        // Literal with a static name reference (`01NT`, N = 0, T = 1).
        Some(index) => integer(out, 0x50, 4, index),
        // Literal with a literal name (`001NH`, N = 0, H = 0).
        None => string(out, 0x20, 3, name.as_bytes()),
    }
    string(out, 0x00, 7, value);
}

/// Decodes response field sections (static table only).
#[derive(Debug, Default)]
pub struct Decoder {
    name: Vec<u8>,
    value: Vec<u8>,
    recent: Recent,
}

impl Decoder {
    /// Decodes `section`, calling `field` with each name and value in order.
    pub fn decode(&mut self, section: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), Invalid> {
        let mut at = 0;
        if read_integer(section, &mut at, 8)? != 0 {
            return Err(Invalid("a field section that needs a dynamic table the client never allowed"));
        }
        read_integer(section, &mut at, 7)?; // the base: meaningless without a dynamic table
        while at < section.len() {
            let first = section[at];
            if first & 0x80 != 0 {
                if first & 0x40 == 0 {
                    return Err(Invalid("a reference to a dynamic table the client never allowed"));
                }
                let (name, value) = entry(read_integer(section, &mut at, 6)?)?;
                field(name.as_bytes(), value.as_bytes());
            } else if first & 0xc0 == 0x40 {
                if first & 0x10 == 0 {
                    return Err(Invalid("a reference to a dynamic table the client never allowed"));
                }
                let name = entry(read_integer(section, &mut at, 4)?)?.0;
                self.value(section, &mut at, name.as_bytes(), &mut field)?;
            } else if first & 0xe0 == 0x20 {
                let mut name = std::mem::take(&mut self.name);
                name.clear();
                if let Text::Block(start, end) = read_string(section, &mut at, 3, &mut name, &mut self.recent)? {
                    name.extend_from_slice(&section[start..end]);
                }
                let result = self.value(section, &mut at, &name, &mut field);
                self.name = name;
                result?;
            } else {
                return Err(Invalid("a post-base reference to a dynamic table the client never allowed"));
            }
        }
        Ok(())
    }

    /// Reads the value string at `*at` and hands it with `name` to `field`.
    fn value(
        &mut self,
        section: &[u8],
        at: &mut usize,
        name: &[u8],
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), Invalid> {
        self.value.clear();
        match read_string(section, at, 7, &mut self.value, &mut self.recent)? {
            Text::Block(start, end) => field(name, &section[start..end]),
            Text::Scratch => field(name, &self.value),
        }
        Ok(())
    }
}

/// The static table's entry `index`.
fn entry(index: usize) -> Result<(&'static str, &'static str), Invalid> {
    STATIC.get(index).copied().ok_or(Invalid("an index past the static table"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::h3::frame::varint;

    fn fields(section: &[u8]) -> Result<Vec<(String, String)>, Invalid> {
        let mut out = Vec::new();
        Decoder::default().decode(section, |n, v| {
            out.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()))
        })?;
        Ok(out)
    }

    #[test]
    fn the_static_table_has_its_known_places() {
        assert_eq!(STATIC[1], (":path", "/"));
        assert_eq!(STATIC[17], (":method", "GET"));
        assert_eq!(STATIC[23], (":scheme", "https"));
        assert_eq!(STATIC[25], (":status", "200"));
        assert_eq!(STATIC[63], (":status", "100"));
        assert_eq!(STATIC[71], (":status", "500"));
        assert_eq!(STATIC[95], ("user-agent", ""));
        assert_eq!(STATIC[98], ("x-frame-options", "sameorigin"));
    }

    #[test]
    fn a_request_decodes_to_its_fields_and_its_body_is_found() {
        let post = b"POST /a?b=1 HTTP/1.1\r\nHost: localhost:9443\r\nUser-Agent: shootout/0\r\nAccept: */*\r\n\
                     X-Trace: abc\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello";
        let request = Request3::new(post).unwrap();
        assert_eq!(&post[request.body.clone()], b"hello");
        let (kind, a) = varint(&request.headers).unwrap();
        let (len, b) = varint(&request.headers[a..]).unwrap();
        assert_eq!((kind, len as usize), (kind::HEADERS, request.headers.len() - a - b));
        let decoded = fields(&request.headers[a + b..]).unwrap();
        let expected = [
            (":method", "POST"),
            (":scheme", "https"),
            (":path", "/a?b=1"),
            (":authority", "localhost:9443"),
            ("user-agent", "shootout/0"),
            ("accept", "*/*"),
            ("x-trace", "abc"),
            ("content-length", "5"),
        ];
        let expected: Vec<(String, String)> = expected.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        assert_eq!(decoded, expected);
        // :method POST, :scheme https and accept */* are one byte each.
        assert_eq!(&request.headers[a + b..a + b + 4], &[0, 0, 0xc0 | 20, 0xc0 | 23]);
    }

    #[test]
    fn huffman_values_decode_and_dynamic_references_are_refused() {
        // :status 200 indexed, then content-type (static name 44) with "text/plain" Huffman-coded.
        let mut coded = Vec::new();
        httlib_huffman::encode(b"text/plain", &mut coded).unwrap();
        let mut section = vec![0, 0, 0xc0 | 25, 0x50 | 0x0f, 44 - 15, 0x80 | coded.len() as u8];
        section.extend_from_slice(&coded);
        assert_eq!(
            fields(&section).unwrap(),
            [(":status".to_string(), "200".to_string()), ("content-type".into(), "text/plain".into())]
        );
        assert!(fields(&[1, 0, 0xc0 | 25]).is_err(), "a Required Insert Count above 0");
        assert!(fields(&[0, 0, 0x80 | 3]).is_err(), "an indexed field of the dynamic table");
        assert!(fields(&[0, 0, 0x10]).is_err(), "a post-base index");
        assert!(fields(&[0, 0, 0xc0 | 63, 99 - 63]).is_err(), "past the static table");
        assert!(fields(&[0, 0, 0x50 | 4, 0x05, b'a']).is_err(), "a value cut short");
    }
}
