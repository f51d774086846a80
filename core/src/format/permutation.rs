//! The six quad orders and their blocks (FORMAT.md §6): column-wise,
//! delta-encoded ids, so zstd sees long runs of small numbers; with §6.1's
//! coding byte a restarting id may be a delta from the row before too.

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
    #[inline]
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

/// How a file lays out its permutation blocks (FORMAT.md §6, §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockLayout {
    /// No coding byte: restarting b and c values are raw ids (every file
    /// without required feature bit 3).
    Raw,
    /// A coding byte after the count says which restart columns hold
    /// deltas (required feature bit 3 `restart-codings`).
    Coded,
}

/// A block's coding byte (FORMAT.md §6.1): bit 0, column b's restarts are
/// deltas from the row before; bit 1, column c's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coding(u8);

impl Coding {
    /// Every restart raw: FORMAT.md §6 without §6.1.
    pub const RAW: Self = Self(0);
    /// Both restart columns as deltas.
    #[cfg(feature = "write")]
    const DELTAS: Self = Self(3);

    /// Whether column `column`'s (1 = b, 2 = c) restarts are deltas.
    #[inline]
    fn deltas(self, column: usize) -> bool {
        self.0 & (1 << (column - 1)) != 0
    }

    /// The coding of a byte read from a block, `None` when bits 2–7 are set.
    pub fn from_byte(byte: u8) -> Option<Self> {
        (byte & !3 == 0).then_some(Self(byte))
    }

    /// With column b's (`column` 1) or c's (2) restarts coded as deltas.
    pub fn with_deltas(self, column: usize, deltas: bool) -> Self {
        let bit = 1u8 << (column - 1);
        Self(if deltas { self.0 | bit } else { self.0 & !bit })
    }

    /// The byte written after the count.
    pub fn byte(self) -> u8 {
        self.0
    }

    /// The value of column `column` (1 = b, 2 = c) on a row from the value
    /// stored for it: `continues` when the row before has the same leading
    /// components, `first` on a block's first row; `None` when the id
    /// overflows.
    #[inline]
    pub fn value(self, column: usize, stored: u64, previous: u64, continues: bool, first: bool) -> Option<u64> {
        if continues {
            previous.checked_add(stored)
        } else if !first && self.deltas(column) {
            Some(previous.wrapping_add(unzigzag(stored)))
        } else {
            Some(stored)
        }
    }
}

/// FORMAT.md §6.1: 0, 1, 2, 3 → 0, −1, 1, −2, as a wrapping u64 difference.
fn unzigzag(stored: u64) -> u64 {
    (stored >> 1) ^ (stored & 1).wrapping_neg()
}

/// FORMAT.md §6.1: the zigzag code of `value − previous` (wrapping).
#[cfg(feature = "write")]
fn zigzag(value: u64, previous: u64) -> u64 {
    let delta = value.wrapping_sub(previous) as i64;
    ((delta << 1) ^ (delta >> 63)) as u64
}

/// Decodes a decompressed permutation block into its keys.
pub fn decode_block(raw: &[u8], layout: BlockLayout, what: &str, offset: u64) -> Result<Vec<Key>, FormatError> {
    let corrupt = |e: varint::CursorError| FormatError::corrupt(what, offset, format!("{} at byte {} of the decompressed block", e.reason, e.position));
    let mut cursor = Cursor::new(raw);
    let count = cursor.varint().map_err(corrupt)?;
    let coding = match layout {
        BlockLayout::Raw => Coding::RAW,
        BlockLayout::Coded => {
            let byte = cursor.bytes(1).map_err(corrupt)?[0];
            Coding::from_byte(byte).ok_or_else(|| FormatError::corrupt(what, offset, format!("coding byte {byte:#04x} sets unknown bits")))?
        }
    };
    // Each quad takes at least one byte in each of the four columns.
    let count = usize::try_from(count).ok().filter(|&n| n.saturating_mul(4) <= raw.len() - cursor.position());
    let count = count.ok_or_else(|| FormatError::corrupt(what, offset, "count larger than the bytes that follow"))?;
    let mut keys = vec![[0u64; 4]; count];
    let overflow = || FormatError::corrupt(what, offset, "id overflows 64 bits");
    let mut previous = 0u64;
    for key in keys.iter_mut() {
        previous = previous.checked_add(cursor.varint().map_err(corrupt)?).ok_or_else(overflow)?;
        key[0] = previous;
    }
    for column in 1..3 {
        for i in 0..count {
            let stored = cursor.varint().map_err(corrupt)?;
            let continues = i > 0 && keys[i][..column] == keys[i - 1][..column];
            let previous = if i > 0 { keys[i - 1][column] } else { 0 };
            keys[i][column] = coding.value(column, stored, previous, continues, i == 0).ok_or_else(overflow)?;
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

/// Encodes sorted, distinct keys as one decompressed block of FORMAT.md §6
/// (layout [`BlockLayout::Raw`]).
#[cfg(feature = "write")]
pub fn encode_block(keys: &[Key]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * 6 + 10);
    varint::put(&mut out, keys.len() as u64);
    for column in columns(keys, Coding::RAW) {
        out.extend_from_slice(&column);
    }
    out
}

/// Encodes sorted, distinct keys as one decompressed block of FORMAT.md §6.1
/// (layout [`BlockLayout::Coded`]) in the coding that [`choose_coding`] picks.
#[cfg(feature = "write")]
pub fn encode_coded_block(keys: &[Key]) -> std::io::Result<Vec<u8>> {
    let raw = columns(keys, Coding::RAW);
    let deltas = columns(keys, Coding::DELTAS);
    let coding = choose_coding(&raw, &deltas)?;
    Ok(assemble(keys.len(), coding, &raw, &deltas))
}

/// A coded block from its count, coding and both codings' columns.
#[cfg(feature = "write")]
fn assemble(count: usize, coding: Coding, raw: &[Vec<u8>; 4], deltas: &[Vec<u8>; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.iter().map(Vec::len).sum::<usize>() + 11);
    varint::put(&mut out, count as u64);
    out.push(coding.byte());
    out.extend_from_slice(&raw[0]);
    for column in 1..3 {
        out.extend_from_slice(if coding.deltas(column) { &deltas[column] } else { &raw[column] });
    }
    out.extend_from_slice(&raw[3]);
    out
}

/// The reference writer's choice (FORMAT.md §6.1): for b and for c, the
/// coding whose column compresses smaller alone at zstd level 1, a cheap
/// stand-in for compressing the whole block each way (on LUBM it finds the
/// best of the four codings for 99.9 % of the bytes).
#[cfg(feature = "write")]
fn choose_coding(raw: &[Vec<u8>; 4], deltas: &[Vec<u8>; 4]) -> std::io::Result<Coding> {
    thread_local! {
        static TRIAL: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    TRIAL.with_borrow_mut(|trial| {
        let trial = match trial {
            Some(trial) => trial,
            None => trial.insert(zstd::bulk::Compressor::new(1)?),
        };
        let mut coding = Coding::RAW;
        for column in 1..3 {
            if raw[column] != deltas[column] {
                let smaller = trial.compress(&deltas[column])?.len() < trial.compress(&raw[column])?.len();
                coding = coding.with_deltas(column, smaller);
            }
        }
        Ok(coding)
    })
}

/// The four columns of a block in `coding`, each a run of varints.
#[cfg(feature = "write")]
fn columns(keys: &[Key], coding: Coding) -> [Vec<u8>; 4] {
    let mut out: [Vec<u8>; 4] = std::array::from_fn(|column| Vec::with_capacity(keys.len() * if column == 0 || column == 3 { 1 } else { 3 }));
    let mut previous = [0u64; 4];
    for (i, key) in keys.iter().enumerate() {
        varint::put(&mut out[0], key[0] - previous[0]);
        for column in 1..3 {
            let continues = i > 0 && previous[..column] == key[..column];
            let value = if continues {
                key[column] - previous[column]
            } else if i > 0 && coding.deltas(column) {
                zigzag(key[column], previous[column])
            } else {
                key[column]
            };
            varint::put(&mut out[column], value);
        }
        varint::put(&mut out[3], key[3]);
        previous = *key;
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
        assert_eq!(decode_block(&raw, BlockLayout::Raw, "t", 0).unwrap(), keys);
    }

    /// A block in a given coding (the writer picks its own).
    fn encode_in(keys: &[Key], coding: Coding) -> Vec<u8> {
        assemble(keys.len(), coding, &columns(keys, Coding::RAW), &columns(keys, Coding::DELTAS))
    }

    #[test]
    fn coded_spec_example() {
        // FORMAT.md §6.1.
        let keys = [[1, 2, 3, 0], [1, 2, 5, 0], [4, 2, 6, 0]];
        assert_eq!(encode_in(&keys, Coding(3)), [3, 3, 1, 0, 3, 2, 0, 0, 3, 2, 2, 0, 0, 0]);
        assert_eq!(encode_in(&keys, Coding::RAW), [3, 0, 1, 0, 3, 2, 0, 2, 3, 2, 6, 0, 0, 0]);
        for coding in 0..4 {
            assert_eq!(decode_block(&encode_in(&keys, Coding(coding)), BlockLayout::Coded, "t", 0).unwrap(), keys);
        }
    }

    /// Sorted distinct keys of `n` rows with ids up and down across 2^32 and
    /// near 2^64, restarts in both columns, and named graphs.
    fn awkward_keys(n: u64) -> Vec<Key> {
        let big = 1u64 << 40;
        let mut keys: Vec<Key> = (0..n)
            .map(|i| {
                let a = 1 + i / 7 + if i % 3 == 0 { big } else { 0 };
                let b = if i % 2 == 0 { 5 + i % 5 } else { big + i * 977 % 13 };
                let c = match i % 4 {
                    0 => 1,
                    1 => u64::MAX - i,
                    2 => (1 << 32) + i * 31 % 101,
                    _ => 7 + i % 3,
                };
                [a, b, c, i % 3]
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    #[test]
    fn round_trips_every_coding() {
        for n in [0, 1, 2, 3, 15, 16, 17, 1000, 4097] {
            let keys = awkward_keys(n);
            for coding in 0..4 {
                let raw = encode_in(&keys, Coding(coding));
                assert_eq!(decode_block(&raw, BlockLayout::Coded, "t", 0).unwrap(), keys, "{n} keys, coding {coding}");
            }
            let chosen = encode_coded_block(&keys).unwrap();
            assert_eq!(decode_block(&chosen, BlockLayout::Coded, "t", 0).unwrap(), keys, "{n} keys, chosen");
            assert_eq!(decode_block(&encode_block(&keys), BlockLayout::Raw, "t", 0).unwrap(), keys, "{n} keys, raw layout");
        }
    }

    #[test]
    fn chooses_deltas_where_they_are_smaller() {
        // PSO-like: one predicate, subjects in order, each with an object
        // close to the one before (deltas small, raw ids large).
        let keys: Vec<Key> = (0..5000u64).map(|i| [9, 1000 + i, 3_000_000 + i * 3 + i % 2, 0]).collect();
        assert_eq!(encode_coded_block(&keys).unwrap()[2], 2, "c restarts as deltas");
        // SPO-like: per subject three predicates, each object one of a few
        // classes picked at random (raw ids repeat; the differences between
        // two random picks have more values than the picks).
        let classes: Vec<u64> = (0..8u64).map(|k| 2_000_003 + k * 377_771).collect();
        let mut state = 7u64;
        let mut pick = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            classes[(state >> 61) as usize]
        };
        let keys: Vec<Key> = (0..6000u64).map(|i| [10 + i / 3, 50 + i % 3, pick(), 0]).collect();
        assert_eq!(encode_coded_block(&keys).unwrap()[2] & 2, 0, "c restarts raw");
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
        let raw = BlockLayout::Raw;
        assert!(decode_block(&[2, 1, 0, 1, 0, 1, 0, 0, 0], raw, "t", 0).is_err(), "duplicate quads");
        assert!(decode_block(&[1, 1, 1], raw, "t", 0).is_err(), "truncated");
        assert!(decode_block(&[1, 1, 1, 1, 0, 9], raw, "t", 0).is_err(), "trailing");
        assert!(decode_block(&[0xff, 0xff, 0x03], raw, "t", 0).is_err(), "count too large");
        let coded = BlockLayout::Coded;
        assert_eq!(decode_block(&[1, 4, 1, 1, 1, 0], coded, "t", 0).unwrap_err().to_string(), "corrupt t at byte 0: coding byte 0x04 sets unknown bits");
        assert!(decode_block(&[1], coded, "t", 0).is_err(), "no coding byte");
        assert!(decode_block(&[1, 0, 1, 1, 1], coded, "t", 0).is_err(), "truncated");
        assert!(decode_block(&[1, 1, 1, 1, 1, 0], coded, "t", 0).is_ok(), "a first row is raw");
        // A delta below 0 wraps (FORMAT.md §6.1), as a raw id may be any u64.
        assert_eq!(decode_block(&[2, 2, 1, 1, 1, 0, 1, 3, 0, 0], coded, "t", 0).unwrap(), [[1, 1, 1, 0], [2, 0, u64::MAX, 0]]);
        assert!(decode_block(&[2, 3, 1, 0, 1, 0, 1, 0, 0, 0], coded, "t", 0).is_err(), "duplicate quads");
    }
}
