//! The six quad orders and their blocks (FORMAT.md §6): column-wise,
//! delta-encoded ids, so zstd sees long runs of small numbers.

use super::varint::{self, Cursor};
use crate::{FormatError, TermId};

/// A quad key in some permutation's order: `[a, b, c, g]`.
pub type Key = [TermId; 4];

/// The six orders of (s, p, o); the graph is always the fourth component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Permutation {
    Spo,
    Sop,
    Pso,
    Pos,
    Osp,
    Ops,
}

impl Permutation {
    /// All six, in on-disk order.
    pub const ALL: [Self; 6] = [Self::Spo, Self::Sop, Self::Pso, Self::Pos, Self::Osp, Self::Ops];

    /// The on-disk id (FORMAT.md §6).
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The permutation of an on-disk id.
    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.get(usize::from(id)).copied()
    }

    /// "SPO", "SOP", …
    pub fn name(self) -> &'static str {
        ["SPO", "SOP", "PSO", "POS", "OSP", "OPS"][self as usize]
    }

    /// Positions of (a, b, c) in an (s, p, o) triple.
    fn order(self) -> [usize; 3] {
        match self {
            Self::Spo => [0, 1, 2],
            Self::Sop => [0, 2, 1],
            Self::Pso => [1, 0, 2],
            Self::Pos => [1, 2, 0],
            Self::Osp => [2, 0, 1],
            Self::Ops => [2, 1, 0],
        }
    }

    /// Reorders an `[s, p, o, g]` quad into this permutation's key.
    pub fn key(self, quad: [TermId; 4]) -> Key {
        let [a, b, c] = self.order();
        [quad[a], quad[b], quad[c], quad[3]]
    }

    /// Turns a key back into `[s, p, o, g]`.
    pub fn quad(self, key: Key) -> [TermId; 4] {
        let mut quad = [0, 0, 0, key[3]];
        for (i, position) in self.order().into_iter().enumerate() {
            quad[position] = key[i];
        }
        quad
    }

    /// The permutation serving a pattern with these (s, p, o) positions bound,
    /// and how many leading key components are bound (FORMAT.md §6). A scan
    /// with nothing or only p bound reads OSP or POS: its objects come in id
    /// order, so filters on them decode dictionary blocks in order
    /// (`Store::term_in`), 2–3× faster than PSO's or SPO's scattered objects.
    pub fn for_bound(s: bool, p: bool, o: bool) -> (Self, usize) {
        match (s, p, o) {
            (false, false, false) => (Self::Osp, 0),
            (true, false, false) => (Self::Spo, 1),
            (true, true, false) => (Self::Spo, 2),
            (true, true, true) => (Self::Spo, 3),
            (true, false, true) => (Self::Sop, 2),
            (false, true, false) => (Self::Pos, 1),
            (false, true, true) => (Self::Pos, 2),
            (false, false, true) => (Self::Osp, 1),
        }
    }
}

impl Permutation {
    /// The permutation serving a pattern whose bound (s, p, o) positions are
    /// single ids or, where `ranged`, id ranges (the triple terms with a given
    /// prefix, FORMAT.md §5.1), and how many leading key components are
    /// bound. Single ids lead and ranges follow, so that a range after them
    /// is one contiguous run of keys; without ranges it is [`Self::for_bound`].
    pub fn for_ranges(bound: [bool; 3], ranged: [bool; 3]) -> (Self, usize) {
        let exact = |position: usize| bound[position] && !ranged[position];
        let range = |position: usize| bound[position] && ranged[position];
        if !(0..3).any(range) {
            return Self::for_bound(bound[0], bound[1], bound[2]);
        }
        let exact_count = (0..3).filter(|&p| exact(p)).count();
        let bound_count = (0..3).filter(|&p| bound[p]).count();
        let fits = |permutation: &Self| {
            let order = permutation.order();
            order[..exact_count].iter().all(|&p| exact(p)) && order[exact_count..bound_count].iter().all(|&p| range(p))
        };
        // Some order lists any split of the three positions in this way.
        (Self::ALL.into_iter().find(fits).unwrap_or(Self::Spo), bound_count)
    }
}

/// Decodes a decompressed permutation block into its keys.
pub fn decode_block(raw: &[u8], what: &str, offset: u64) -> Result<Vec<Key>, FormatError> {
    let corrupt = |e: varint::CursorError| FormatError::corrupt(what, offset, format!("{} at byte {} of the decompressed block", e.reason, e.position));
    let mut cursor = Cursor::new(raw);
    let count = cursor.count(4).map_err(corrupt)?;
    let mut keys = vec![[0u64; 4]; count];
    let overflow = || FormatError::corrupt(what, offset, "id overflows 64 bits");
    let mut previous = 0u64;
    for key in keys.iter_mut() {
        previous = previous.checked_add(cursor.varint().map_err(corrupt)?).ok_or_else(overflow)?;
        key[0] = previous;
    }
    for column in 1..3 {
        for i in 0..count {
            let value = cursor.varint().map_err(corrupt)?;
            let continues = i > 0 && keys[i][..column] == keys[i - 1][..column];
            keys[i][column] = if continues { keys[i - 1][column].checked_add(value).ok_or_else(overflow)? } else { value };
        }
    }
    for key in keys.iter_mut() {
        key[3] = cursor.varint().map_err(corrupt)?;
    }
    if !cursor.is_empty() {
        return Err(FormatError::corrupt(what, offset, "trailing bytes after the last quad"));
    }
    if keys.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(FormatError::corrupt(what, offset, "quads out of order"));
    }
    Ok(keys)
}

/// Encodes sorted, distinct keys as one decompressed block.
#[cfg(feature = "write")]
pub fn encode_block(keys: &[Key]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * 6 + 10);
    varint::put(&mut out, keys.len() as u64);
    let mut previous = 0;
    for key in keys {
        varint::put(&mut out, key[0] - previous);
        previous = key[0];
    }
    for column in 1..3 {
        for (i, key) in keys.iter().enumerate() {
            let continues = i > 0 && keys[i - 1][..column] == key[..column];
            varint::put(&mut out, if continues { key[column] - keys[i - 1][column] } else { key[column] });
        }
    }
    for key in keys {
        varint::put(&mut out, key[3]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        let keys = [[1, 2, 3, 0], [1, 2, 5, 0], [4, 2, 3, 0]];
        let raw = encode_block(&keys);
        assert_eq!(raw, [3, 1, 0, 3, 2, 0, 2, 3, 2, 3, 0, 0, 0]);
        assert_eq!(decode_block(&raw, "t", 0).unwrap(), keys);
    }

    #[test]
    fn permutes_both_ways() {
        for permutation in Permutation::ALL {
            let quad = [10, 20, 30, 40];
            assert_eq!(permutation.quad(permutation.key(quad)), quad);
        }
        assert_eq!(Permutation::Pos.key([1, 2, 3, 4]), [2, 3, 1, 4]);
    }

    #[test]
    fn rejects_corrupt_blocks() {
        assert!(decode_block(&[2, 1, 0, 1, 0, 1, 0, 0, 0], "t", 0).is_err(), "duplicate quads");
        assert!(decode_block(&[1, 1, 1], "t", 0).is_err(), "truncated");
        assert!(decode_block(&[1, 1, 1, 1, 0, 9], "t", 0).is_err(), "trailing");
        assert!(decode_block(&[0xff, 0xff, 0x03], "t", 0).is_err(), "count too large");
    }
}
