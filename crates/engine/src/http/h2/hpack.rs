//! [`Decoder`]: HPACK (RFC 7541) for response header blocks, without allocating per field.
//!
//! Every block is decoded, whatever the client keeps of it, so that the dynamic table stays in step with the
//! server's encoder. Names and values are handed to a callback as slices of the block, the static table, the
//! dynamic table or a scratch buffer (Huffman-coded strings, decoded by the `httlib-huffman` crate's table-driven
//! decoder). Only entries added to the dynamic table are copied, into the buffers of entries it evicted when
//! there are some.
//!
//! A server under load sends the same coded strings again and again (its name, a content type, the date of this
//! second), so the last few Huffman strings are remembered with their decoding: a string seen before costs a
//! comparison instead of a walk through the Huffman tables (measured: the Huffman decoder was 7% of the client's
//! CPU against nginx at 10 streams per connection).

use std::collections::VecDeque;

use httlib_huffman::{decode as huffman, DecoderSpeed};

use super::request::STATIC;

/// What HPACK charges for a table entry besides its name and value.
const ENTRY_OVERHEAD: usize = 32;
/// The dynamic table size the client allows (SETTINGS_HEADER_TABLE_SIZE, left at its default).
pub const TABLE_SIZE: usize = 4096;

/// A header block that does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub &'static str);

/// The decoding state of one connection.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Newest first.
    table: VecDeque<(Vec<u8>, Vec<u8>)>,
    size: usize,
    max: Option<usize>,
    /// Evicted entries' buffers, for the next insertions.
    spare: Vec<(Vec<u8>, Vec<u8>)>,
    name: Vec<u8>,
    value: Vec<u8>,
    recent: Recent,
}

/// How many Huffman strings [`Recent`] remembers.
const RECENT: usize = 8;
/// The longest Huffman string [`Recent`] remembers (longer ones are rarely repeated and costly to compare).
const RECENT_LEN: usize = 128;

/// The last Huffman-coded strings decoded, each with its decoding, replaced oldest first.
#[derive(Debug, Default)]
struct Recent {
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

/// Where a string was found.
#[derive(Clone, Copy)]
enum Text {
    /// `block[start..end]`.
    Block(usize, usize),
    /// The scratch buffer it was decoded into.
    Scratch,
}

impl Decoder {
    /// Decodes `block`, calling `field` with each name and value in order.
    pub fn decode(&mut self, block: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), Invalid> {
        let mut at = 0;
        while at < block.len() {
            let first = block[at];
            if first & 0x80 != 0 {
                let index = integer(block, &mut at, 7)?;
                let (name, value) = self.entry(index)?;
                field(name, value);
            } else if first & 0xc0 == 0x40 {
                self.literal(block, &mut at, 6, true, &mut field)?;
            } else if first & 0xe0 == 0x20 {
                let size = integer(block, &mut at, 5)?;
                if size > TABLE_SIZE {
                    return Err(Invalid("a table size update above the size the client allows"));
                }
                self.max = Some(size);
                self.evict(0);
            } else {
                self.literal(block, &mut at, 4, false, &mut field)?;
            }
        }
        Ok(())
    }

    /// A literal field: its name by index (or a string), its value a string; added to the table if `index`.
    fn literal(
        &mut self,
        block: &[u8],
        at: &mut usize,
        prefix: u32,
        index: bool,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), Invalid> {
        let name_index = integer(block, at, prefix)?;
        let mut name = std::mem::take(&mut self.name);
        name.clear();
        if name_index == 0 {
            match string(block, at, &mut name, &mut self.recent)? {
                Text::Block(start, end) => name.extend_from_slice(&block[start..end]),
                Text::Scratch => {}
            }
        } else {
            name.extend_from_slice(self.entry(name_index)?.0);
        }
        let mut value = std::mem::take(&mut self.value);
        value.clear();
        let value_text = string(block, at, &mut value, &mut self.recent)?;
        let value_bytes = match value_text {
            Text::Block(start, end) => &block[start..end],
            Text::Scratch => &value[..],
        };
        field(&name, value_bytes);
        if index {
            let size = ENTRY_OVERHEAD + name.len() + value_bytes.len();
            self.evict(size);
            if size <= self.max_size() {
                let (mut new_name, mut new_value) = self.spare.pop().unwrap_or_default();
                new_name.clear();
                new_name.extend_from_slice(&name);
                new_value.clear();
                new_value.extend_from_slice(value_bytes);
                self.table.push_front((new_name, new_value));
                self.size += size;
            }
        }
        self.name = name;
        self.value = value;
        Ok(())
    }

    /// The field at `index`: the static table from 1, then the dynamic table, newest first.
    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), Invalid> {
        if index == 0 {
            return Err(Invalid("index 0"));
        }
        if let Some((name, value)) = STATIC.get(index - 1) {
            return Ok((name.as_bytes(), value.as_bytes()));
        }
        self.table
            .get(index - 1 - STATIC.len())
            .map(|(name, value)| (&name[..], &value[..]))
            .ok_or(Invalid("an index past the dynamic table"))
    }

    fn max_size(&self) -> usize {
        self.max.unwrap_or(TABLE_SIZE)
    }

    /// Evicts the oldest entries until `room` more fits.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size() {
            let Some(entry) = self.table.pop_back() else { break };
            self.size -= ENTRY_OVERHEAD + entry.0.len() + entry.1.len();
            self.spare.push(entry);
        }
    }
}

/// An HPACK integer with a `prefix`-bit prefix at `*at`.
fn integer(block: &[u8], at: &mut usize, prefix: u32) -> Result<usize, Invalid> {
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

/// A string at `*at`: where it lies in the block, or, Huffman-coded, decoded into `scratch`.
fn string(block: &[u8], at: &mut usize, scratch: &mut Vec<u8>, recent: &mut Recent) -> Result<Text, Invalid> {
    let coded = block.get(*at).ok_or(Invalid("a block cut short"))? & 0x80 != 0;
    let len = integer(block, at, 7)?;
    let start = *at;
    let end = start.checked_add(len).filter(|&end| end <= block.len()).ok_or(Invalid("a string past the block"))?;
    *at = end;
    if !coded {
        return Ok(Text::Block(start, end));
    }
    recent.decode(&block[start..end], scratch)?;
    Ok(Text::Scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(decoder: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        decoder.decode(block, |n, v| out.push((n.to_vec(), v.to_vec()))).unwrap();
        out
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

    #[test]
    fn decodes_what_another_encoder_wrote_block_after_block() {
        // loona-hpack's encoder indexes fields and Huffman-codes strings: over many blocks the dynamic table
        // fills, evicts and is referred to.
        let mut encoder = loona_hpack::Encoder::new();
        let mut decoder = Decoder::default();
        for round in 0..300 {
            let date = format!("Sun, 22 Nov 2026 11:{:02}:{:02} GMT", round / 60, round % 60);
            let long = "x".repeat(round * 7 % 900);
            let sent: Vec<(&[u8], &[u8])> = vec![
                (b":status", if round % 3 == 0 { b"200" } else { b"503" }),
                (b"date", date.as_bytes()),
                (b"server", b"nginx"),
                (b"x-round", long.as_bytes()),
                (b"set-cookie", b"a=1; Path=/"),
            ];
            let block = encoder.encode(sent.clone());
            let got = fields(&mut decoder, &block);
            let want: Vec<(Vec<u8>, Vec<u8>)> = sent.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
            assert_eq!(got, want, "round {round}");
            assert!(decoder.size <= TABLE_SIZE);
        }
    }

    #[test]
    fn the_rfc_examples_with_huffman() {
        // RFC 7541 C.4.1, C.4.2: requests with Huffman-coded strings and the dynamic table.
        let mut decoder = Decoder::default();
        let first =
            [0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let got = fields(&mut decoder, &first);
        assert_eq!(got[3], (b":authority".to_vec(), b"www.example.com".to_vec()));
        assert_eq!(decoder.size, 57);
        let second = [0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf];
        let got = fields(&mut decoder, &second);
        assert_eq!(got[3], (b":authority".to_vec(), b"www.example.com".to_vec()));
        assert_eq!(got[4], (b"cache-control".to_vec(), b"no-cache".to_vec()));
        assert_eq!(decoder.size, 110);
    }

    #[test]
    fn broken_blocks_are_refused() {
        let mut decoder = Decoder::default();
        assert!(decoder.decode(&[0x80], |_, _| {}).is_err(), "index 0");
        assert!(decoder.decode(&[0xbe], |_, _| {}).is_err(), "an empty dynamic table");
        assert!(decoder.decode(&[0x04, 0x85, b'a'], |_, _| {}).is_err(), "a string past the block");
        assert!(decoder.decode(&[0x3f, 0xe1, 0xff, 0xff, 0xff, 0xff, 0x0f], |_, _| {}).is_err(), "too large");
    }
}
