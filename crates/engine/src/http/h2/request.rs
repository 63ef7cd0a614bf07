//! A request in HTTP/2 form: its HPACK header blocks, made from the HTTP/1.1 bytes that every other part of
//! shootout renders (one place decides a request's headers and framing for both protocols).
//!
//! The request line becomes the pseudo-header fields, Host becomes `:authority`, names are lower-cased, and the
//! fields that only mean something to HTTP/1.1 (Connection, Keep-Alive, Transfer-Encoding, Upgrade…) are dropped.
//! A request that never varies gets three blocks, encoded once: `first` adds its fields to the server's HPACK
//! dynamic table, `again` refers to them by index (as browsers and h2load do after their first request, so the
//! server decodes what it would decode in real use), and `plain` sends every field as a literal that is not
//! indexed, valid on any connection. Strings are sent without Huffman coding: cheaper to make, and the server
//! decodes them either way.

use std::ops::Range;

/// The fields of the HPACK static table (RFC 7541, Appendix A), by index from 1.
pub(super) const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];
/// The first index of the dynamic table.
const DYNAMIC_START: usize = STATIC.len() + 1;
/// What HPACK charges for a table entry besides its name and value.
const ENTRY_OVERHEAD: usize = 32;

/// Header fields that belong to HTTP/1.1 connections and must not be sent over HTTP/2 (RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC: [&str; 6] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"];

/// Why HTTP/1.1 request bytes could not be turned into an HTTP/2 request (they are shootout's own, so this is a
/// bug or a header HTTP/2 cannot carry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untranslatable(pub String);

/// A request that never varies, in HTTP/2 form, encoded once.
#[derive(Debug, Clone)]
pub struct Request2 {
    /// Every field a literal, not indexed: valid on any connection.
    pub plain: Vec<u8>,
    /// Adds the fields to the server's dynamic table: the first request on a connection.
    pub first: Vec<u8>,
    /// Refers to the fields `first` added: every later request on that connection.
    pub again: Vec<u8>,
    /// The room `first` takes in the server's dynamic table, in HPACK's octets.
    pub table_size: usize,
    /// Where the body lies in the HTTP/1.1 bytes.
    pub body: Range<usize>,
}

impl Request2 {
    /// The HTTP/2 form of `http1`, a complete HTTP/1.1 request, over `scheme` (`http` or `https`).
    pub fn new(http1: &[u8], scheme: &str) -> Result<Request2, Untranslatable> {
        let mut plain = Vec::new();
        let mut first = Vec::new();
        let mut inserted = Vec::new();
        let body = translate(http1, scheme, &mut |name, value| {
            plain_field(&mut plain, name, value);
            if let Some(index) = full_match(name, value) {
                integer(&mut first, 0x80, 7, index);
                return;
            }
            match name_index(name) {
                Some(index) => integer(&mut first, 0x40, 6, index),
                None => {
                    first.push(0x40);
                    string(&mut first, name.as_bytes());
                }
            }
            string(&mut first, value);
            inserted.push(Some(ENTRY_OVERHEAD + name.len() + value.len()));
        })?;
        // `again` mirrors `first`: where `first` inserted an entry, `again` names it by its index now. Entries are
        // inserted newest first, so the k-th of n inserted sits at DYNAMIC_START + n - 1 - k.
        let count = inserted.iter().flatten().count();
        let mut again = Vec::new();
        let mut k = 0;
        translate(http1, scheme, &mut |name, value| match full_match(name, value) {
            Some(index) => integer(&mut again, 0x80, 7, index),
            None => {
                integer(&mut again, 0x80, 7, DYNAMIC_START + count - 1 - k);
                k += 1;
            }
        })?;
        let table_size = inserted.iter().flatten().sum();
        Ok(Request2 { plain, first, again, table_size, body })
    }
}

/// Writes the `plain` header block of `http1` over `scheme` into `out` (cleared first), and returns where the
/// body lies in `http1`. For requests rendered anew each time (scenarios), into a buffer that is reused.
pub fn encode_plain(http1: &[u8], scheme: &str, out: &mut Vec<u8>) -> Result<Range<usize>, Untranslatable> {
    out.clear();
    translate(http1, scheme, &mut |name, value| plain_field(out, name, value))
}

/// Hands each field of the HTTP/2 form of `http1` to `field`, pseudo-header fields first; returns the body's
/// place in `http1`.
fn translate(http1: &[u8], scheme: &str, field: &mut dyn FnMut(&str, &[u8])) -> Result<Range<usize>, Untranslatable> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let end = match request.parse(http1) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) => return Err(Untranslatable("the request head is incomplete".into())),
        Err(e) => return Err(Untranslatable(format!("the request head does not parse ({e})"))),
    };
    let method = request.method.unwrap_or("GET");
    let path = request.path.unwrap_or("/");
    let authority = request.headers.iter().find(|h| h.name.eq_ignore_ascii_case("host")).map_or(&b""[..], |h| h.value);
    field(":method", method.as_bytes());
    field(":scheme", scheme.as_bytes());
    field(":path", path.as_bytes());
    field(":authority", authority);
    let mut lower = String::new();
    for header in request.headers.iter() {
        lower.clear();
        lower.extend(header.name.chars().map(|c| c.to_ascii_lowercase()));
        if CONNECTION_SPECIFIC.contains(&lower.as_str()) {
            continue;
        }
        if lower == "te" && !header.value.eq_ignore_ascii_case(b"trailers") {
            continue;
        }
        field(&lower, header.value);
    }
    Ok(end..http1.len())
}

/// A literal field that is not indexed, with its name indexed when the static table has it.
fn plain_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    if let Some(index) = full_match(name, value) {
        return integer(out, 0x80, 7, index);
    }
    match name_index(name) {
        Some(index) => integer(out, 0x00, 4, index),
        None => {
            out.push(0x00);
            string(out, name.as_bytes());
        }
    }
    string(out, value);
}

/// The static index of a field with exactly this name and a non-empty value.
fn full_match(name: &str, value: &[u8]) -> Option<usize> {
    STATIC.iter().position(|(n, v)| *n == name && !v.is_empty() && v.as_bytes() == value).map(|i| i + 1)
}

/// The static index of the first field with this name.
fn name_index(name: &str) -> Option<usize> {
    STATIC.iter().position(|(n, _)| *n == name).map(|i| i + 1)
}

/// An HPACK integer (RFC 7541 §5.1) with an `bits`-bit prefix, its first byte or-ed with `pattern`.
fn integer(out: &mut Vec<u8>, pattern: u8, bits: u32, value: usize) {
    let max = (1usize << bits) - 1;
    if value < max {
        out.push(pattern | value as u8);
        return;
    }
    out.push(pattern | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// An HPACK string literal without Huffman coding.
fn string(out: &mut Vec<u8>, bytes: &[u8]) {
    integer(out, 0x00, 7, bytes.len());
    out.extend_from_slice(bytes);
}

/// A dynamic table size update to `size` (RFC 7541 §6.3), which opens a header block.
pub fn table_size_update(out: &mut Vec<u8>, size: usize) {
    integer(out, 0x20, 5, size);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(blocks: &[&[u8]]) -> Vec<Vec<(String, String)>> {
        let mut decoder = loona_hpack::Decoder::new();
        blocks
            .iter()
            .map(|block| {
                let mut fields = Vec::new();
                decoder
                    .decode_with_cb(block, |n, v| {
                        fields
                            .push((String::from_utf8_lossy(&n).into_owned(), String::from_utf8_lossy(&v).into_owned()))
                    })
                    .expect("a valid block");
                fields
            })
            .collect()
    }

    const GET: &[u8] = b"GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: shootout/0\r\nAccept: */*\r\nConnection: keep-alive\r\nX-Long: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n\r\n";

    #[test]
    fn the_three_blocks_decode_to_the_same_fields() {
        let request = Request2::new(GET, "http").unwrap();
        let long = GET.iter().filter(|&&b| b == b'v').count() - 1; // one is keep-alive's
        let expected = vec![
            (":method".to_string(), "GET".to_string()),
            (":scheme".into(), "http".into()),
            (":path".into(), "/a?b=1".into()),
            (":authority".into(), "127.0.0.1:8080".into()),
            ("user-agent".into(), "shootout/0".into()),
            ("accept".into(), "*/*".into()),
            ("x-long".into(), "v".repeat(long)),
        ];
        let blocks = decoded(&[&request.first, &request.again, &request.again, &request.plain]);
        for fields in &blocks {
            assert_eq!(fields, &expected);
        }
        assert!(request.again.len() < 10, "indexed fields are one byte each: {:?}", request.again);
        assert_eq!(request.body, GET.len()..GET.len());
        assert_eq!(request.table_size, 5 * 32 + 5 + 6 + 10 + 14 + 10 + 10 + 6 + 3 + 6 + long);
    }

    #[test]
    fn bodies_and_plain_encoding() {
        let post = b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: x\r\nTE: gzip\r\n\r\nhello";
        let mut out = vec![1, 2, 3];
        let body = encode_plain(post, "https", &mut out).unwrap();
        assert_eq!(&post[body], b"hello");
        let fields = decoded(&[&out]).remove(0);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, [":method", ":scheme", ":path", ":authority", "content-length"]);
        assert_eq!(fields[1].1, "https");
        assert!(encode_plain(b"GET / HTTP/1.1\r\n", "http", &mut out).is_err());
    }

    #[test]
    fn integers_past_the_prefix() {
        let mut out = Vec::new();
        integer(&mut out, 0x00, 5, 1337);
        assert_eq!(out, [31, 154, 10], "RFC 7541 C.1.2");
    }
}
