//! [`Decoder`]: HPACK (RFC 7541) for response header blocks, without allocating per field.
//!
//! Every block is decoded, whatever the client keeps of it, so that the dynamic table stays in step with the
//! server's encoder. Names and values are handed to a callback as slices of the block, the static table, the
//! dynamic table or a scratch buffer (Huffman-coded strings, see [`fields`](crate::http::fields)). Only entries
//! added to the dynamic table are copied, into the buffers of entries it evicted when there are some.

use std::collections::VecDeque;

use super::request::STATIC;
pub use crate::http::fields::Invalid;
use crate::http::fields::{read_integer as integer, read_string, Recent, Text};

/// What HPACK charges for a table entry besides its name and value.
const ENTRY_OVERHEAD: usize = 32;
/// The dynamic table size the client allows (SETTINGS_HEADER_TABLE_SIZE, left at its default).
pub const TABLE_SIZE: usize = 4096;

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
            match read_string(block, at, 7, &mut name, &mut self.recent)? {
                Text::Block(start, end) => name.extend_from_slice(&block[start..end]),
                Text::Scratch => {}
            }
        } else {
            name.extend_from_slice(self.entry(name_index)?.0);
        }
        let mut value = std::mem::take(&mut self.value);
        value.clear();
        let value_text = read_string(block, at, 7, &mut value, &mut self.recent)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(decoder: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        decoder.decode(block, |n, v| out.push((n.to_vec(), v.to_vec()))).unwrap();
        out
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
