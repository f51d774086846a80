//! The keys of one permutation block as the reader keeps them: the block's
//! decompressed columns (FORMAT.md §6), with every 16th row's key and column
//! positions remembered so that a seek decodes at most 15 rows. Expanded to
//! `[u64; 4]` a 65,536-quad block takes 2 MiB; its columns and restarts take
//! about 40% of that, and a query's blocks stay pinned in memory until it
//! completes. (Every 64th row, as before issue 14, made a selective lookup
//! walk 32 rows on average: a third of a small query's instructions.)

use crate::format::permutation::{BlockLayout, Coding, Key};
use crate::{FormatError, TermId};

/// Every this many rows a restart point is kept.
const RESTART_ROWS: usize = 16;

/// One permutation block's keys, in order.
#[derive(Debug, Clone)]
pub struct PermutationKeys {
    raw: Vec<u8>,
    len: usize,
    /// How restarting b and c values are stored (FORMAT.md §6.1).
    coding: Coding,
    /// Where the four columns start: a cursor at row 0.
    start: [u32; 4],
    restarts: Vec<Restart>,
}

/// Row `r × 16`: its key, and where the next row's column values start.
#[derive(Debug, Clone, Copy)]
struct Restart {
    key: Key,
    next: [u32; 4],
}

impl Restart {
    /// A cursor just after this restart's row.
    fn cursor_after(&self, row: usize) -> RowCursor {
        RowCursor { row: row + 1, offsets: self.next, previous: self.key }
    }
}

/// Where a seek landed: at the first row ≥ its prefix, and the row before
/// that when the walk passed it (else where the walk started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landing {
    /// The answer.
    pub at: RowCursor,
    before: RowCursor,
}

/// A position in a block: the next row to decode, where its four column
/// values start, and the row before it (columns are delta-coded against it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowCursor {
    row: usize,
    offsets: [u32; 4],
    previous: Key,
}

impl PermutationKeys {
    /// Checks and indexes a decompressed permutation block of a file whose
    /// blocks are laid out as `layout`; `what`/`offset` name it in errors.
    /// Rejects what `format::permutation::decode_block` rejects: truncated
    /// columns, a coding byte with unknown bits, ids overflowing 64 bits,
    /// trailing bytes, quads out of order or repeated.
    pub fn decode(raw: &[u8], layout: BlockLayout, what: &str, offset: u64) -> Result<Self, FormatError> {
        let corrupt = |reason: &str| FormatError::corrupt(what, offset, reason.to_owned());
        if u32::try_from(raw.len()).is_err() {
            return Err(corrupt("block larger than 4 GiB"));
        }
        let mut position = 0;
        let count = varint_at(raw, &mut position).ok_or_else(|| corrupt("truncated quad count"))?;
        let coding = match layout {
            BlockLayout::Raw => Coding::RAW,
            BlockLayout::Coded => {
                let byte = *raw.get(position).ok_or_else(|| corrupt("no coding byte"))?;
                position += 1;
                Coding::from_byte(byte).ok_or_else(|| corrupt("coding byte sets unknown bits"))?
            }
        };
        // Each quad takes at least one byte in each of the four columns.
        let len = usize::try_from(count).ok().filter(|&n| n.saturating_mul(4) <= raw.len() - position).ok_or_else(|| corrupt("count larger than the bytes that follow"))?;
        let mut offsets = [0u32; 4];
        for column in offsets.iter_mut() {
            *column = position as u32;
            for _ in 0..len {
                varint_at(raw, &mut position).ok_or_else(|| corrupt("truncated or overlong varint in a column"))?;
            }
        }
        if position != raw.len() {
            return Err(corrupt("trailing bytes after the last quad"));
        }
        let mut keys = Self { raw: raw.to_vec(), len, coding, start: offsets, restarts: Vec::with_capacity(len.div_ceil(RESTART_ROWS)) };
        let mut cursor = RowCursor { row: 0, offsets, previous: [0; 4] };
        for row in 0..len {
            let before = cursor.previous;
            let key = cursor.next(&keys).ok_or_else(|| corrupt("id overflows 64 bits"))?;
            if row > 0 && key <= before {
                return Err(corrupt("quads out of order"));
            }
            if row % RESTART_ROWS == 0 {
                keys.restarts.push(Restart { key, next: cursor.offsets });
            }
        }
        Ok(keys)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block holds no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The key at a row.
    pub fn get(&self, row: usize) -> Option<Key> {
        let restart = self.restarts.get(row / RESTART_ROWS)?;
        let steps = row % RESTART_ROWS;
        if steps == 0 {
            return (row < self.len).then_some(restart.key);
        }
        let mut cursor = restart.cursor_after(row - steps);
        for _ in 1..steps {
            cursor.next(self)?;
        }
        cursor.next(self)
    }

    /// A cursor at row 0.
    fn first(&self) -> RowCursor {
        RowCursor { row: 0, offsets: self.start, previous: [0; 4] }
    }

    /// All keys in order.
    pub fn iter(&self) -> impl Iterator<Item = Key> + '_ {
        let mut cursor = self.first();
        std::iter::from_fn(move || cursor.next(self))
    }

    /// A cursor at the first key whose leading components are ≥ `prefix`.
    pub fn seek(&self, prefix: &[TermId]) -> RowCursor {
        self.landing(prefix).at
    }

    /// Where [`Self::seek`] lands, for later seeks to go on from
    /// ([`Self::seek_on`]).
    pub fn landing(&self, prefix: &[TermId]) -> Landing {
        let first = self.first();
        let mut landing = Landing { at: first, before: first };
        self.seek_on(&mut landing, prefix);
        landing
    }

    /// [`Self::seek`], starting from where an earlier seek in this block
    /// landed (`landing`) when every row before that is below `prefix`,
    /// the new landing written over it: lookups of one block walk on from
    /// the last instead of from a restart when ahead of it, or at most one
    /// row behind it, as for a for-loop join that looks up (s, p1) then
    /// (s, p2), p2 < p1 (issue 14: a for-loop join looks a pattern up per
    /// outer row, and a seek was a sixth of such a query). Written in
    /// place: a returned `Landing` stored over the old one was a 112-byte
    /// `memory.copy` per placed lookup in the Worker's wasm, a call out of
    /// V8's code.
    pub fn seek_on(&self, landing: &mut Landing, prefix: &[TermId]) {
        let bound = prefix.len().min(4);
        let below = |key: &Key| key[..bound] < prefix[..bound];
        let usable = |cursor: &&RowCursor| cursor.row > 0 && cursor.row <= self.len && below(&cursor.previous);
        let from = [&landing.at, &landing.before].into_iter().find(usable).copied().unwrap_or_else(|| self.first());
        // The restarts after `from`: the last of them below the prefix, when
        // there is one, is where the answer's walk starts. The first of them
        // is probed alone first: a lookup just past the last one in the block
        // (a for-loop join's next outer row) lands before it about half the
        // time (LUBM q09), and then that probe stands for a binary search
        // over the rest of the block.
        let after = from.row.div_ceil(RESTART_ROWS).min(self.restarts.len());
        let rest = &self.restarts[after..];
        let below_first = rest.first().is_some_and(|r| below(&r.key));
        let mut cursor = match if below_first { 1 + rest[1..].partition_point(|r| below(&r.key)) } else { 0 } {
            0 => from,
            n => self.restarts[after + n - 1].cursor_after((after + n - 1) * RESTART_ROWS),
        };
        let mut before = cursor;
        loop {
            let at = cursor;
            match cursor.next(self) {
                Some(key) if below(&key) => before = at,
                _ => {
                    *landing = Landing { at, before };
                    return;
                }
            }
        }
    }

    /// The row [`Self::seek`] stops at: the first whose leading components
    /// are ≥ `prefix`, the block's length when there is none.
    pub fn lower_bound(&self, prefix: &[TermId]) -> usize {
        self.seek(prefix).row
    }

    /// Approximate heap bytes, for the cache budget.
    pub fn heap_bytes(&self) -> usize {
        self.raw.capacity() + self.restarts.capacity() * std::mem::size_of::<Restart>()
    }
}

impl RowCursor {
    /// The key at the cursor, moving past it; `None` at the end of the block.
    /// Inlined into its callers' loops (a scan's, a seek's walk): out of line
    /// the key went back through memory on every row, and V8 runs that call
    /// slower than native code does (issue 14, docs/BENCHMARK.md "Session 18").
    #[inline(always)]
    pub fn next(&mut self, keys: &PermutationKeys) -> Option<Key> {
        if self.row >= keys.len {
            return None;
        }
        let mut values = [0u64; 4];
        for (value, offset) in values.iter_mut().zip(self.offsets.iter_mut()) {
            let mut position = *offset as usize;
            *value = varint_at(&keys.raw, &mut position)?;
            // `decode` refused blocks of 4 GiB or more: positions fit.
            *offset = position as u32;
        }
        let previous = self.previous;
        let first = self.row == 0;
        let a = previous[0].checked_add(values[0])?;
        let b = keys.coding.value(1, values[1], previous[1], !first && a == previous[0], first)?;
        let c = keys.coding.value(2, values[2], previous[2], !first && a == previous[0] && b == previous[1], first)?;
        let key = [a, b, c, values[3]];
        self.previous = key;
        self.row += 1;
        Some(key)
    }
}

/// Reads one varint (FORMAT.md §1) at `position`, moving past it.
#[inline]
fn varint_at(bytes: &[u8], position: &mut usize) -> Option<u64> {
    // One byte, the usual column value (a delta or a small id), without the
    // loop: a selective lookup's seek decodes up to 15 rows (issue 14).
    let byte = *bytes.get(*position)?;
    if byte < 0x80 {
        *position += 1;
        return Some(u64::from(byte));
    }
    varint_long(bytes, position)
}

fn varint_long(bytes: &[u8], position: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = *bytes.get(*position)?;
        *position += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

#[cfg(all(test, feature = "write"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::format::permutation::{decode_block, encode_block, encode_coded_block};

    fn keys(n: u64) -> Vec<Key> {
        (0..n).map(|i| [1 + i / 300, 7 + (i / 20) % 15, 100 + i % 20 * 3, i % 2]).collect()
    }

    #[test]
    fn agrees_with_the_expanded_block() {
        let keys = keys(1000);
        let raw = encode_block(&keys);
        let compact = PermutationKeys::decode(&raw, BlockLayout::Raw, "t", 0).unwrap();
        assert_eq!(decode_block(&raw, BlockLayout::Raw, "t", 0).unwrap(), keys);
        check_against(&compact, &keys);
        // FORMAT.md §6.1: the same keys with a coding byte, whichever coding the writer picks.
        let coded = encode_coded_block(&keys).unwrap();
        check_against(&PermutationKeys::decode(&coded, BlockLayout::Coded, "t", 0).unwrap(), &keys);
    }

    #[test]
    fn coded_blocks_seek_across_restarts() {
        // Restarting columns that move both ways, across 2^32 (deltas picked
        // for c: its objects rise slowly while b jumps).
        let keys: Vec<Key> = (0..3000u64).map(|i| [5 + i / 40, (i % 40) * 1_000_000_007, (1 << 33) + i * 5 + (i % 40) % 3, 0]).collect();
        let coded = encode_coded_block(&keys).unwrap();
        assert_ne!(coded[2], 0, "some column coded as deltas");
        check_against(&PermutationKeys::decode(&coded, BlockLayout::Coded, "t", 0).unwrap(), &keys);
    }

    fn check_against(compact: &PermutationKeys, keys: &[Key]) {
        assert_eq!(compact.len(), keys.len());
        assert_eq!(compact.iter().collect::<Vec<_>>(), keys);
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(compact.get(i), Some(*key));
        }
        assert_eq!(compact.get(keys.len()), None);
        for prefix in [&[][..], &[1], &[2, 9], &[2, 9, 103], &[4, 21, 157], &[9], &[0, 5]] {
            let expected = keys.partition_point(|k| k[..prefix.len()] < *prefix);
            let mut cursor = compact.seek(prefix);
            assert_eq!(cursor.next(&compact), keys.get(expected).copied(), "{prefix:?}");
        }
        // Every key and each of its prefixes, across restart boundaries.
        for key in keys {
            for bound in 1..=4 {
                let expected = keys.partition_point(|k| k[..bound] < key[..bound]);
                let mut cursor = compact.seek(&key[..bound]);
                assert_eq!(cursor.next(&compact), keys.get(expected).copied(), "{key:?} / {bound}");
            }
        }
        // A seek from where another landed finds what a seek from the start
        // finds, whichever way the second prefix lies from the first.
        let prefixes: Vec<&[TermId]> = keys.iter().step_by(7).flat_map(|key| [&key[..1], &key[..2], &key[..3], &key[..]]).collect();
        for (i, first) in prefixes.iter().enumerate() {
            let landing = compact.landing(first);
            assert_eq!(landing.at, compact.seek(first));
            for second in prefixes.iter().skip(i.saturating_sub(3)).take(7).chain([&&[][..], &&[0, 0][..], &&[u64::MAX][..]]) {
                let mut on = landing;
                compact.seek_on(&mut on, second);
                assert_eq!(on.at, compact.seek(second), "{first:?} then {second:?}: as from the block's start");
                let expected = keys.partition_point(|k| k[..second.len()] < **second);
                assert_eq!(on.at.next(compact), keys.get(expected).copied(), "{first:?} then {second:?}");
            }
        }
        assert!(compact.heap_bytes() * 2 < keys.len() * std::mem::size_of::<Key>(), "{}", compact.heap_bytes());
    }

    #[test]
    fn rejects_what_the_expanded_block_rejects() {
        for raw in [&[2, 1, 0, 1, 0, 1, 0, 0, 0][..], &[1, 1, 1], &[1, 1, 1, 1, 0, 9], &[0xff, 0xff, 0x03], &[2, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0]] {
            assert!(PermutationKeys::decode(raw, BlockLayout::Raw, "t", 0).is_err(), "{raw:?}");
            assert!(decode_block(raw, BlockLayout::Raw, "t", 0).is_err(), "{raw:?}");
        }
        for raw in [&[1, 4, 1, 1, 1, 0][..], &[1], &[1, 0, 1, 1, 1], &[2, 3, 1, 0, 1, 0, 1, 0, 0, 0]] {
            assert!(PermutationKeys::decode(raw, BlockLayout::Coded, "t", 0).is_err(), "{raw:?}");
            assert!(decode_block(raw, BlockLayout::Coded, "t", 0).is_err(), "{raw:?}");
        }
        let empty = PermutationKeys::decode(&[0], BlockLayout::Raw, "t", 0).unwrap();
        assert!(empty.is_empty() && empty.get(0).is_none() && empty.seek(&[1]).next(&empty).is_none());
    }
}
