//! The HPACK decoder of response header blocks, against `loona-hpack`'s decoder on the same blocks.
//!
//! Input: header blocks, each preceded by its length in one byte, decoded in order by one decoder of each (so
//! that the dynamic table, and shootout's memory of recent Huffman strings, carry over from block to block).
//! While both take a block, both must give the same fields in the same order; once either refuses one, the
//! connection would be closed, and the comparison ends there.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout_engine::http::h2::hpack::{Decoder, TABLE_SIZE};

fuzz_target!(|data: &[u8]| {
    let mut ours = Decoder::default();
    let mut reference = loona_hpack::Decoder::new();
    reference.set_max_allowed_table_size(TABLE_SIZE);
    let mut rest = data;
    while let [len, tail @ ..] = rest {
        let (block, next) = tail.split_at(usize::from(*len).min(tail.len()));
        rest = next;
        let mut fields = Vec::new();
        let decoded = ours.decode(block, |name, value| fields.push((name.to_vec(), value.to_vec())));
        let Ok(expected) = reference.decode(block) else { return };
        if decoded.is_err() {
            return;
        }
        assert_eq!(fields, expected, "the fields of block {block:02x?}");
    }
});
