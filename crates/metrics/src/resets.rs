//! [`StreamResets`]: the HTTP/2 requests a server ended with RST_STREAM, counted per error code.
//!
//! The codes RFC 9113 §7 defines (0 to 13) are counted in a fixed array, so a reset costs no allocation; any
//! other code goes into a small map, which allocates only the first time that code is met. Counts add exactly.
//! Codes are numbers here; the engine names them (`INTERNAL_ERROR`, or `0x…` for a code without a name) when it
//! writes a result.

use std::collections::BTreeMap;
use std::ops::AddAssign;

/// How many error codes RFC 9113 defines: `0..DEFINED_CODES` are counted without allocating.
const DEFINED_CODES: usize = 14;

/// Requests ended by the server's RST_STREAM, per error code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamResets {
    defined: [u64; DEFINED_CODES],
    other: BTreeMap<u32, u64>,
}

impl StreamResets {
    /// Counts `n` more resets with `code`.
    #[inline]
    pub fn add(&mut self, code: u32, n: u64) {
        match self.defined.get_mut(code as usize) {
            Some(count) => *count += n,
            None => *self.other.entry(code).or_insert(0) += n,
        }
    }

    /// All resets, whatever their code.
    pub fn total(&self) -> u64 {
        self.defined.iter().sum::<u64>() + self.other.values().sum::<u64>()
    }

    /// True when nothing was reset.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The codes that occurred, with their counts, by code.
    pub fn by_code(&self) -> BTreeMap<u32, u64> {
        let defined = (0..DEFINED_CODES as u32).map(|code| (code, self.defined[code as usize]));
        defined.chain(self.other.iter().map(|(&code, &n)| (code, n))).filter(|&(_, n)| n > 0).collect()
    }
}

impl AddAssign<&StreamResets> for StreamResets {
    fn add_assign(&mut self, other: &StreamResets) {
        for (mine, theirs) in self.defined.iter_mut().zip(&other.defined) {
            *mine += theirs;
        }
        for (&code, &n) in &other.other {
            *self.other.entry(code).or_insert(0) += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defined_and_unknown_codes_are_counted_apart_and_listed_by_code() {
        let mut resets = StreamResets::default();
        assert!(resets.is_empty());
        resets.add(2, 1);
        resets.add(7, 3);
        resets.add(13, 1);
        resets.add(14, 2);
        resets.add(0xdead, 1);
        assert_eq!(resets.by_code().into_iter().collect::<Vec<_>>(), [(2, 1), (7, 3), (13, 1), (14, 2), (0xdead, 1)]);
        assert_eq!(resets.total(), 8);
        assert_eq!(resets.other.len(), 2, "only the codes past 13 take the map");
    }

    #[test]
    fn counts_add_exactly() {
        let (mut a, mut b) = (StreamResets::default(), StreamResets::default());
        a.add(2, 5);
        a.add(99, 1);
        b.add(2, 1);
        b.add(8, 4);
        b.add(99, 2);
        b.add(100, 1);
        a += &b;
        assert_eq!(a.by_code().into_iter().collect::<Vec<_>>(), [(2, 6), (8, 4), (99, 3), (100, 1)]);
        assert_eq!(a.total(), 14);
    }
}
