//! What HTTP/2 and HTTP/3 share in their header compression (HPACK, RFC 7541; QPACK, RFC 9204): a request's
//! fields made from the HTTP/1.1 bytes every other part of shootout renders ([`translate`]), and the coding of
//! prefix integers and string literals, both ways.
//!
//! The request line becomes the pseudo-header fields, Host becomes `:authority`, names are lower-cased, and the
//! fields that only mean something to HTTP/1.1 (Connection, Keep-Alive, Transfer-Encoding, Upgrade…) are dropped
//! (RFC 9113 §8.2.2, RFC 9114 §4.2). Strings are sent without Huffman coding: cheaper to make, and the server
//! decodes them either way. Received Huffman strings are decoded by the `httlib-huffman` crate's table-driven
//! decoder; a server under load sends the same coded strings again and again (its name, a content type, the date
//! of this second), so the last few are remembered with their decoding ([`Recent`]): a string seen before costs
//! a comparison instead of a walk through the Huffman tables (measured: the Huffman decoder was 7% of the
//! client's CPU against nginx at 10 HTTP/2 streams per connection).

use std::ops::Range;

use httlib_huffman::{decode as huffman, DecoderSpeed};

/// Header fields that belong to HTTP/1.1 connections and must not be sent over HTTP/2 or HTTP/3.
const CONNECTION_SPECIFIC: [&str; 6] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"];

/// Why HTTP/1.1 request bytes could not be turned into an HTTP/2 or HTTP/3 request (they are shootout's own, so
/// this is a bug or a header those protocols cannot carry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untranslatable(pub String);

/// A header block or field section that does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub &'static str);

/// Hands each field of the HTTP/2 or HTTP/3 form of `http1` to `field`, pseudo-header fields first; returns the
/// body's place in `http1`.
pub fn translate(
    http1: &[u8],
    scheme: &str,
    field: &mut dyn FnMut(&str, &[u8]),
) -> Result<Range<usize>, Untranslatable> {
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

/// A prefix integer (RFC 7541 §5.1) with a `bits`-bit prefix, its first byte or-ed with `pattern`.
pub fn integer(out: &mut Vec<u8>, pattern: u8, bits: u32, value: usize) {
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

/// A string literal without Huffman coding, its length in a `bits`-bit prefix after `pattern` (7 bits for every
/// HPACK string and QPACK value; QPACK's literal names take 3).
pub fn string(out: &mut Vec<u8>, pattern: u8, bits: u32, bytes: &[u8]) {
    integer(out, pattern, bits, bytes.len());
    out.extend_from_slice(bytes);
}

/// The prefix integer with a `prefix`-bit prefix at `*at`.
pub fn read_integer(block: &[u8], at: &mut usize, prefix: u32) -> Result<usize, Invalid> {
    let max = (1usize << prefix) - 1;
    let first = *block.get(*at).ok_or(Invalid("a block cut short"))? as usize & max;
    *at += 1;
    if first < max {
        return Ok(first);
    }
    let mut value = max;
    let mut shift = 0;
    loop {
        let byte = *block.get(*at).ok_or(Invalid("a block cut short"))?;
        *at += 1;
        if shift > 28 {
            return Err(Invalid("an integer too large"));
        }
        value += usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
}

/// Where a string was found.
#[derive(Debug, Clone, Copy)]
pub enum Text {
    /// `block[start..end]`.
    Block(usize, usize),
    /// The scratch buffer it was decoded into.
    Scratch,
}

/// The string literal at `*at` whose length has a `prefix`-bit prefix, the bit just above it saying Huffman: where
/// it lies in the block, or, Huffman-coded, decoded into `scratch` (appended).
pub fn read_string(
    block: &[u8],
    at: &mut usize,
    prefix: u32,
    scratch: &mut Vec<u8>,
    recent: &mut Recent,
) -> Result<Text, Invalid> {
    let coded = block.get(*at).ok_or(Invalid("a block cut short"))? & (1 << prefix) != 0;
    let len = read_integer(block, at, prefix)?;
    let start = *at;
    let end = start.checked_add(len).filter(|&end| end <= block.len()).ok_or(Invalid("a string past the block"))?;
    *at = end;
    if !coded {
        return Ok(Text::Block(start, end));
    }
    recent.decode(&block[start..end], scratch)?;
    Ok(Text::Scratch)
}

/// How many Huffman strings [`Recent`] remembers.
const RECENT: usize = 8;
/// The longest Huffman string [`Recent`] remembers (longer ones are rarely repeated and costly to compare).
const RECENT_LEN: usize = 128;

/// The last Huffman-coded strings decoded, each with its decoding, replaced oldest first.
#[derive(Debug, Default)]
pub struct Recent {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    next: usize,
}

impl Recent {
    /// Decodes `coded` into `out` (appended), from memory when it was seen lately.
    fn decode(&mut self, coded: &[u8], out: &mut Vec<u8>) -> Result<(), Invalid> {
        if let Some((_, decoded)) = self.entries.iter().find(|(c, _)| c[..] == *coded) {
            out.extend_from_slice(decoded);
            return Ok(());
        }
        let from = out.len();
        huffman(coded, out, DecoderSpeed::FourBits).map_err(|_| Invalid("a bad Huffman string"))?;
        if coded.len() <= RECENT_LEN {
            if self.entries.len() < RECENT {
                self.entries.push(Default::default());
            }
            let (c, d) = &mut self.entries[self.next];
            c.clear();
            c.extend_from_slice(coded);
            d.clear();
            d.extend_from_slice(&out[from..]);
            self.next = (self.next + 1) % RECENT;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_past_the_prefix_both_ways() {
        let mut out = Vec::new();
        integer(&mut out, 0x00, 5, 1337);
        assert_eq!(out, [31, 154, 10], "RFC 7541 C.1.2");
        let mut at = 0;
        assert_eq!(read_integer(&out, &mut at, 5), Ok(1337));
        assert_eq!(at, 3);
        assert!(read_integer(&out[..2], &mut 0, 5).is_err());
    }

    #[test]
    fn a_three_bit_prefixed_string_reads_its_huffman_bit_above_the_prefix() {
        let mut out = Vec::new();
        string(&mut out, 0x20, 3, b"x-name");
        assert_eq!(out[0], 0x20 | 6);
        let (mut at, mut scratch) = (0, Vec::new());
        let text = read_string(&out, &mut at, 3, &mut scratch, &mut Recent::default()).unwrap();
        assert!(matches!(text, Text::Block(1, 7)));
        // "www.example.com" Huffman-coded (RFC 7541 C.4.1), with the H bit of a 3-bit prefix.
        let coded = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let mut block = vec![0x08 | 7, 12 - 7];
        block.extend_from_slice(&coded);
        let text = read_string(&block, &mut 0, 3, &mut scratch, &mut Recent::default()).unwrap();
        assert!(matches!(text, Text::Scratch));
        assert_eq!(scratch, b"www.example.com");
    }

    #[test]
    fn remembered_huffman_strings_decode_as_the_first_time() {
        // More distinct strings than are remembered, each coming back: hits, misses and replacements alike.
        let texts: Vec<String> = (0..RECENT * 3).map(|i| format!("value number {i} of many")).collect();
        let coded: Vec<Vec<u8>> = texts
            .iter()
            .map(|t| {
                let mut c = Vec::new();
                httlib_huffman::encode(t.as_bytes(), &mut c).unwrap();
                c
            })
            .collect();
        let mut recent = Recent::default();
        for round in 0..5 {
            for i in 0..texts.len() {
                let k = (i * 7 + round) % (RECENT + 3 + round);
                let mut out = b"kept ".to_vec();
                recent.decode(&coded[k], &mut out).unwrap();
                assert_eq!(out, format!("kept {}", texts[k]).into_bytes(), "round {round}, string {k}");
            }
        }
        assert_eq!(recent.entries.len(), RECENT);
        assert!(recent.decode(&[0xff; 8], &mut Vec::new()).is_err(), "a bad string is still refused");
    }
}
