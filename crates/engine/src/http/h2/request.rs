//! A request in HTTP/2 form: its HPACK header blocks, made from the HTTP/1.1 bytes that every other part of
//! shootout renders (one place decides a request's headers and framing for both protocols).
//!
//! The fields are those [`translate`] makes. A request that never varies gets three blocks, encoded once: `first` adds its fields to the server's HPACK
//! dynamic table, `again` refers to them by index (as browsers and h2load do after their first request, so the
//! server decodes what it would decode in real use), and `plain` sends every field as a literal that is not
//! indexed, valid on any connection.

use std::ops::Range;

pub use crate::http::fields::Untranslatable;
use crate::http::fields::{integer, string, translate};

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
                    string(&mut first, 0x00, 7, name.as_bytes());
                }
            }
            string(&mut first, 0x00, 7, value);
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

/// A literal field that is not indexed, with its name indexed when the static table has it.
fn plain_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    if let Some(index) = full_match(name, value) {
        return integer(out, 0x80, 7, index);
    }
    match name_index(name) {
        Some(index) => integer(out, 0x00, 4, index),
        None => {
            out.push(0x00);
            string(out, 0x00, 7, name.as_bytes());
        }
    }
    string(out, 0x00, 7, value);
}

/// The static index of a field with exactly this name and a non-empty value.
fn full_match(name: &str, value: &[u8]) -> Option<usize> {
    STATIC.iter().position(|(n, v)| *n == name && !v.is_empty() && v.as_bytes() == value).map(|i| i + 1)
}

/// The static index of the first field with this name.
fn name_index(name: &str) -> Option<usize> {
    STATIC.iter().position(|(n, _)| *n == name).map(|i| i + 1)
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
}
