//! The terms of one dictionary block as the reader keeps them: still
//! front-coded (FORMAT.md §5.2), with every 16th term in full so that a
//! lookup decodes at most 15 entries. Expanding a block instead costs 10–20×
//! its front-coded size (a 1 MiB block of LUBM IRIs is 29 MB of terms and
//! offsets), which a cache under a budget, or an isolate of 128 MB, cannot
//! afford for a block read to decode a handful of terms. The full terms kept
//! are bounded like a decompressed block (`MAX_BLOCK_RAW_BYTES`).

use crate::FormatError;
use crate::format::MAX_BLOCK_RAW_BYTES;
use crate::format::varint::{self, Cursor};

/// Every this many terms one is kept in full.
const RESTART: usize = 16;

/// One dictionary block's terms in id order, front-coded.
#[derive(Debug, Clone)]
pub struct DictionaryTerms {
    /// The block's entries (`shared`, `suffix_length`, suffix), without the count.
    coded: Vec<u8>,
    /// Terms 0, 16, 32, … in full, concatenated.
    restarts: Vec<u8>,
    /// End of each full term in `restarts`.
    restart_ends: Vec<u32>,
    /// Offset in `coded` of the entry after each full term.
    restart_next: Vec<u32>,
    len: usize,
}

/// The most bytes [`extend_short`] appends as one copy of fixed length.
pub(crate) const SHORT: usize = 16;

/// Appends `bytes` to `out`; `window` is the [`SHORT`] bytes starting with
/// `bytes` when the slice they lie in holds that many. A short `bytes` is
/// appended as the whole window, then cut back: in the Worker's wasm a copy
/// whose length is known only at run time is a `memory.copy`, a call out of
/// the wasm into V8 (~7 ns in Node 20's V8, ~3.5 ns for the window's vector
/// load and store, 1M copies of 1–15 bytes), and a dictionary step or a JSON
/// key appends a few bytes per answer row (issue 14, docs/BENCHMARK.md
/// "Session 25: a large answer's copies in wasm").
pub(crate) fn extend_short(out: &mut Vec<u8>, bytes: &[u8], window: Option<&[u8; SHORT]>) {
    match window {
        Some(window) if bytes.len() <= SHORT => {
            debug_assert!(window.starts_with(bytes));
            let end = out.len() + bytes.len();
            out.extend_from_slice(window);
            out.truncate(end);
        }
        _ => out.extend_from_slice(bytes),
    }
}

/// Where the last [`DictionaryTerms::get_at`] in a block ended.
#[derive(Debug, Default)]
pub struct TermCursor {
    valid: bool,
    position: usize,
    /// Offset in `coded` of the entry after `position`.
    next: usize,
    term: Vec<u8>,
}

impl TermCursor {
    /// A cursor for another block, keeping this one's buffer.
    pub(crate) fn reused(self) -> Self {
        let mut term = self.term;
        term.clear();
        Self { term, ..Self::default() }
    }
}

impl DictionaryTerms {
    /// Checks and indexes a decompressed dictionary block; `what`/`offset`
    /// name it in errors. Rejects what `format::dictionary` rejects: a first
    /// term sharing bytes, a share longer than the previous term, an empty
    /// term, terms out of order, trailing bytes.
    pub fn decode(raw: &[u8], what: &str, offset: u64) -> Result<Self, FormatError> {
        let corrupt = |e: varint::CursorError| FormatError::corrupt(what, offset, format!("{} at byte {} of the decompressed block", e.reason, e.position));
        let too_large = || FormatError::corrupt(what, offset, "block larger than 4 GiB");
        let mut cursor = Cursor::new(raw);
        let count = cursor.count(2).map_err(corrupt)?;
        let start = cursor.position();
        let coded = raw.get(start..).unwrap_or_default().to_vec();
        let mut cursor = Cursor::new(&coded);
        let mut terms = Self { coded: Vec::new(), restarts: Vec::new(), restart_ends: Vec::with_capacity(count.div_ceil(RESTART)), restart_next: Vec::with_capacity(count.div_ceil(RESTART)), len: count };
        let mut current: Vec<u8> = Vec::new();
        for i in 0..count {
            let shared = cursor.varint().map_err(corrupt)?;
            if (i == 0 && shared != 0) || shared > current.len() as u64 {
                return Err(FormatError::corrupt(what, offset, format!("term {i} shares {shared} bytes with a {}-byte term", current.len())));
            }
            let suffix_length = cursor.varint().map_err(corrupt)?;
            let suffix = cursor.bytes(suffix_length).map_err(corrupt)?;
            if shared == 0 && suffix.is_empty() {
                return Err(FormatError::corrupt(what, offset, format!("term {i} is empty")));
            }
            // Both share `shared` bytes, so the order is that of the tails.
            if i > 0 && suffix <= &current[shared as usize..] {
                return Err(FormatError::corrupt(what, offset, format!("term {i} is out of order")));
            }
            current.truncate(shared as usize);
            current.extend_from_slice(suffix);
            if i % RESTART == 0 {
                // Full terms can outgrow the block quadratically (each term
                // sharing all of the last one): bounded like a decompressed block.
                if (terms.restarts.len() + current.len()) as u64 > MAX_BLOCK_RAW_BYTES {
                    return Err(FormatError::corrupt(what, offset, format!("its terms take more than {MAX_BLOCK_RAW_BYTES} bytes in full")));
                }
                terms.restarts.extend_from_slice(&current);
                terms.restart_ends.push(u32::try_from(terms.restarts.len()).map_err(|_| too_large())?);
                terms.restart_next.push(u32::try_from(cursor.position()).map_err(|_| too_large())?);
            }
        }
        if !cursor.is_empty() {
            return Err(FormatError::corrupt(what, offset, "trailing bytes after the last term"));
        }
        terms.coded = coded;
        terms.restarts.shrink_to_fit();
        Ok(terms)
    }

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block holds no term.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded term at a position.
    pub fn get(&self, position: usize) -> Option<Vec<u8>> {
        let mut cursor = TermCursor::default();
        self.get_at(position, &mut cursor)?;
        Some(cursor.term)
    }

    /// The encoded term at a position, decoded in `cursor`, which goes on
    /// from its last term when that is earlier in the same restart run:
    /// ids read in order (the objects of a predicate scan come sorted) cost
    /// one front-coded step each, and the same id twice costs nothing. A
    /// cursor serves one block.
    pub fn get_at<'c>(&self, position: usize, cursor: &'c mut TermCursor) -> Option<&'c [u8]> {
        if position >= self.len {
            return None;
        }
        let from_cursor = cursor.valid && position >= cursor.position && position - cursor.position <= position % RESTART;
        if !from_cursor {
            return match self.from_restart(position, cursor) {
                Some(()) => Some(&cursor.term),
                None => {
                    cursor.valid = false;
                    None
                }
            };
        }
        let coded = self.coded.get(cursor.next..)?;
        let mut entries = Cursor::new(coded);
        for _ in cursor.position..position {
            if Self::step(&mut entries, coded, &mut cursor.term).is_none() {
                cursor.valid = false;
                return None;
            }
        }
        cursor.next += entries.position();
        cursor.position = position;
        Some(&cursor.term)
    }

    /// Decodes the term at `position` into `cursor` from the full term kept
    /// before it: reads the entries' shares and suffixes first, then fills
    /// the term from its end, so that each of its bytes is copied once.
    /// Stepping forward copied every entry's suffix in turn, a tenth of a
    /// DESCRIBE whose terms each lie in another block (issue 14).
    fn from_restart(&self, position: usize, cursor: &mut TermCursor) -> Option<()> {
        let restart = position / RESTART;
        let full = self.restart(restart)?;
        let start = *self.restart_next.get(restart)? as usize;
        let mut entries = Cursor::new(self.coded.get(start..)?);
        // Each entry's share and where its suffix starts in `coded`.
        let mut steps = [(0usize, 0usize); RESTART];
        let count = position % RESTART;
        let mut length = full.len();
        for step in steps.iter_mut().take(count) {
            let shared = usize::try_from(entries.varint().ok()?).ok()?;
            let suffix_length = entries.varint().ok()?;
            let offset = start + entries.position();
            let suffix = entries.bytes(suffix_length).ok()?;
            if shared > length {
                return None;
            }
            length = shared + suffix.len();
            *step = (shared, offset);
        }
        let term = &mut cursor.term;
        term.clear();
        // Room for the steps' longer suffixes: growing an exact-size copy
        // was a reallocation per decoded term in a scan (issue 14).
        term.reserve(length + 64);
        term.resize(length, 0);
        // Bytes [0, unknown) are not filled yet; an entry sets those from its
        // share on, the full term what no entry after it sets.
        let mut unknown = length;
        for &(shared, offset) in steps[..count].iter().rev() {
            if unknown == 0 {
                break;
            }
            if shared < unknown {
                term.get_mut(shared..unknown)?.copy_from_slice(self.coded.get(offset..offset + (unknown - shared))?);
                unknown = shared;
            }
        }
        term.get_mut(..unknown)?.copy_from_slice(full.get(..unknown)?);
        (cursor.position, cursor.next, cursor.valid) = (position, start + entries.position(), true);
        Some(())
    }

    /// The position of an encoded term, if the block holds it.
    pub fn find(&self, term: &[u8]) -> Option<usize> {
        let position = self.lower_bound(term);
        (self.get(position)?.as_slice() == term).then_some(position)
    }

    /// The position of the first term ≥ `term` (`len()` when there is none):
    /// where a prefix's terms start.
    pub fn lower_bound(&self, term: &[u8]) -> usize {
        // The last full term < `term`, then at most 15 steps forward.
        let (mut low, mut high) = (0, self.restart_ends.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if self.restart(middle).is_some_and(|t| t < term) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        let Some(restart) = low.checked_sub(1) else { return 0 };
        let first = restart * RESTART;
        let (Some(full), Some(&next)) = (self.restart(restart), self.restart_next.get(restart)) else { return self.len };
        let mut current = full.to_vec();
        let coded = self.coded.get(next as usize..).unwrap_or_default();
        let mut cursor = Cursor::new(coded);
        for position in first + 1..(first + RESTART).min(self.len) {
            if Self::step(&mut cursor, coded, &mut current).is_none() {
                return self.len;
            }
            if current.as_slice() >= term {
                return position;
            }
        }
        (first + RESTART).min(self.len)
    }

    /// Approximate heap bytes, for the cache budget.
    pub fn heap_bytes(&self) -> usize {
        self.coded.capacity() + self.restarts.capacity() + (self.restart_ends.capacity() + self.restart_next.capacity()) * std::mem::size_of::<u32>()
    }

    fn restart(&self, restart: usize) -> Option<&[u8]> {
        let end = *self.restart_ends.get(restart)? as usize;
        let start = if restart == 0 { 0 } else { *self.restart_ends.get(restart - 1)? as usize };
        self.restarts.get(start..end)
    }

    /// Applies the next entry of `coded` (which `cursor` reads) to `term`.
    /// A scan's consecutive ids differ by a few bytes (LUBM's
    /// `…UndergraduateStudent100`, `…101`): the suffix is appended by
    /// [`extend_short`].
    fn step(cursor: &mut Cursor<'_>, coded: &[u8], term: &mut Vec<u8>) -> Option<()> {
        let shared = usize::try_from(cursor.varint().ok()?).ok()?;
        let suffix_length = cursor.varint().ok()?;
        let start = cursor.position();
        let suffix = cursor.bytes(suffix_length).ok()?;
        if shared > term.len() {
            return None;
        }
        term.truncate(shared);
        extend_short(term, suffix, coded.get(start..).and_then(|rest| rest.first_chunk()));
        Some(())
    }
}

#[cfg(all(test, feature = "write"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::format::dictionary::{BlockTarget, DictionaryBlock, DictionaryEncoder};

    #[test]
    fn agrees_with_the_expanded_block() {
        let terms: Vec<Vec<u8>> = (0..1000).map(|i| format!("\x01http://example.org/item/{:05}/{}", i * 7, i % 3).into_bytes()).collect();
        let mut sorted = terms.clone();
        sorted.sort();
        let mut encoder = DictionaryEncoder::new(BlockTarget::bytes(1 << 30));
        for term in &sorted {
            assert!(encoder.push(term).is_none());
        }
        let raw = encoder.finish().unwrap().raw;
        let expanded = DictionaryBlock::decode(&raw, "t", 0).unwrap();
        let compact = DictionaryTerms::decode(&raw, "t", 0).unwrap();
        assert_eq!(compact.len(), sorted.len());
        for (i, term) in sorted.iter().enumerate() {
            assert_eq!(compact.get(i).as_deref(), expanded.get(i));
            assert_eq!(compact.find(term), Some(i));
            assert_eq!(compact.lower_bound(term), i);
            let mut before = term.clone();
            before.pop();
            assert_eq!(compact.lower_bound(&before), sorted.partition_point(|t| t.as_slice() < before.as_slice()));
        }
        assert_eq!(compact.get(sorted.len()), None);
        // In order, backwards, repeated and skipping: the cursor agrees.
        let mut cursor = TermCursor::default();
        for position in (0..sorted.len()).chain((0..sorted.len()).rev()).chain([5, 5, 6, 40, 33, 999, 0]) {
            assert_eq!(compact.get_at(position, &mut cursor), Some(sorted[position].as_slice()), "{position}");
        }
        assert_eq!(compact.get_at(sorted.len(), &mut cursor), None);
        assert_eq!(compact.find(b"\x01http://example.org/item/00000/5"), None);
        assert_eq!(compact.find(b"\x00"), None);
        assert_eq!(compact.find(b"\x02"), None);
        assert_eq!((compact.lower_bound(b"\x00"), compact.lower_bound(b"\x02")), (0, sorted.len()));
        assert!(compact.heap_bytes() * 2 < expanded.heap_bytes(), "{} vs {}", compact.heap_bytes(), expanded.heap_bytes());
    }

    #[test]
    fn extend_short_appends_the_bytes_whatever_the_window() {
        let source: Vec<u8> = (0..40).collect();
        for start in 0..source.len() {
            for length in 0..=(source.len() - start).min(SHORT + 2) {
                let bytes = &source[start..start + length];
                let window = source[start..].first_chunk::<SHORT>();
                let mut out = b"ab".to_vec();
                extend_short(&mut out, bytes, window);
                assert_eq!(out[2..], *bytes, "{start} {length}");
                assert_eq!(out[..2], *b"ab");
            }
        }
    }

    #[test]
    fn rejects_what_the_expanded_block_rejects() {
        for raw in [&[2, 0, 1, b'a', 5, 1, b'b'][..], &[2, 0, 1, b'b', 0, 1, b'a'], &[2, 0, 1, b'a', 1, 0], &[1, 0, 1, b'a', 9], &[200], &[1, 1, 1, b'a'], &[1, 0, 0]] {
            assert!(DictionaryTerms::decode(raw, "t", 0).is_err(), "{raw:?}");
            assert!(DictionaryBlock::decode(raw, "t", 0).is_err(), "{raw:?}");
        }
        let terms = DictionaryTerms::decode(&[2, 0, 1, b'a', 1, 1, b'b'], "t", 0).unwrap();
        assert_eq!((terms.get(0), terms.get(1)), (Some(b"a".to_vec()), Some(b"ab".to_vec())));
    }

    /// Found reading the decoder for issue 18 (the fuzzers' inputs are too
    /// short to reach it): each term sharing all of the one before and
    /// adding a byte costs 5 bytes front-coded but its whole length in the
    /// full terms kept every 16th, so 1 MB of block expanded to 1.25 GB.
    #[test]
    fn issue_18_a_block_whose_full_terms_outgrow_the_block_limit_is_corrupt() {
        let count = 200_000u64;
        let mut raw = Vec::new();
        crate::format::varint::put(&mut raw, count);
        for i in 0..count {
            crate::format::varint::put(&mut raw, i); // shares the whole previous term
            raw.extend_from_slice(&[1, b'a' + (i % 16) as u8]);
        }
        let error = DictionaryTerms::decode(&raw, "dictionary block 0", 77).unwrap_err();
        assert_eq!(error.to_string(), "corrupt dictionary block 0 at byte 77: its terms take more than 33554432 bytes in full");
    }
}
