//! Dictionary blocks (FORMAT.md §5.2): sorted encoded terms, front-coded.
//! The directory of block heads lives in INDEX (`index.rs`); this file
//! encodes and decodes one block and searches inside it.

use super::varint::{self, Cursor};
use crate::FormatError;

/// One decoded dictionary block: its terms in id order.
#[derive(Debug, Clone)]
pub struct DictionaryBlock {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl DictionaryBlock {
    /// Decodes a decompressed block; `what`/`offset` name it in errors.
    pub fn decode(raw: &[u8], what: &str, offset: u64) -> Result<Self, FormatError> {
        let corrupt = |e: varint::CursorError| FormatError::corrupt(what, offset, format!("{} at byte {} of the decompressed block", e.reason, e.position));
        let mut cursor = Cursor::new(raw);
        let count = cursor.count(2).map_err(corrupt)?;
        let mut bytes = Vec::with_capacity(raw.len() * 2);
        let mut ends = Vec::with_capacity(count);
        let mut previous_start = 0;
        for i in 0..count {
            let shared = cursor.varint().map_err(corrupt)?;
            let previous_length = bytes.len() - previous_start;
            if (i == 0 && shared != 0) || shared > previous_length as u64 {
                return Err(FormatError::corrupt(what, offset, format!("term {i} shares {shared} bytes with a {previous_length}-byte term")));
            }
            let suffix_length = cursor.varint().map_err(corrupt)?;
            let suffix = cursor.bytes(suffix_length).map_err(corrupt)?;
            let start = bytes.len();
            bytes.extend_from_within(previous_start..previous_start + shared as usize);
            bytes.extend_from_slice(suffix);
            if start == bytes.len() {
                return Err(FormatError::corrupt(what, offset, format!("term {i} is empty")));
            }
            if i > 0 && bytes[previous_start..start] >= bytes[start..] {
                return Err(FormatError::corrupt(what, offset, format!("term {i} is out of order")));
            }
            ends.push(bytes.len());
            previous_start = start;
        }
        if !cursor.is_empty() {
            return Err(FormatError::corrupt(what, offset, "trailing bytes after the last term"));
        }
        Ok(Self { bytes, ends })
    }

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the block holds no term.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The encoded term at a position.
    pub fn get(&self, position: usize) -> Option<&[u8]> {
        let end = *self.ends.get(position)?;
        let start = if position == 0 { 0 } else { self.ends[position - 1] };
        Some(&self.bytes[start..end])
    }

    /// The position of an encoded term, if present.
    pub fn find(&self, term: &[u8]) -> Option<usize> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = (low + high) / 2;
            match self.get(middle)?.cmp(term) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    /// Approximate heap bytes, for the cache budget.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * std::mem::size_of::<usize>()
    }
}

/// A finished, not yet sealed, dictionary block.
#[cfg(feature = "write")]
#[derive(Debug)]
pub struct RawDictionaryBlock {
    /// Decompressed block bytes.
    pub raw: Vec<u8>,
    /// Terms in the block.
    pub term_count: u64,
    /// Its first term.
    pub head: Vec<u8>,
}

/// When the reference writer cuts a dictionary block (FORMAT.md §8).
#[cfg(feature = "write")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTarget {
    /// A block is full at this many front-coded bytes…
    pub bytes: usize,
    /// … or at this many terms, once it holds at least `min_bytes` (so that
    /// a dictionary of short, similar terms still gets a bounded number of
    /// terms per block, which keeps its id range narrow; FORMAT.md §8).
    pub terms: u64,
    /// Bytes below which the term count does not cut a block.
    pub min_bytes: usize,
}

#[cfg(feature = "write")]
impl BlockTarget {
    /// Blocks cut on front-coded bytes only.
    pub fn bytes(bytes: usize) -> Self {
        Self { bytes, terms: u64::MAX, min_bytes: 0 }
    }
}

/// A full block is cut before the next term of at most this many bytes, so
/// that the block heads INDEX keeps (full terms, FORMAT.md §4) stay short…
#[cfg(feature = "write")]
const SHORT_HEAD_BYTES: usize = 64;
/// … unless the block grows past this many times the size it was full at.
#[cfg(feature = "write")]
const MAX_OVERFULL_FACTOR: usize = 2;

/// Cuts a sorted stream of distinct encoded terms into blocks as a
/// [`BlockTarget`] says.
#[cfg(feature = "write")]
pub struct DictionaryEncoder {
    target: BlockTarget,
    body: Vec<u8>,
    count: u64,
    previous: Vec<u8>,
    head: Vec<u8>,
    /// Body bytes when the block became full.
    full_at: Option<usize>,
}

#[cfg(feature = "write")]
impl DictionaryEncoder {
    /// An encoder cutting blocks at `target`.
    pub fn new(target: BlockTarget) -> Self {
        Self { target, body: Vec::new(), count: 0, previous: Vec::new(), head: Vec::new(), full_at: None }
    }

    /// Adds the next term (strictly greater than the previous one); returns
    /// the block before it when that block was full (the term then heads the
    /// next block).
    pub fn push(&mut self, term: &[u8]) -> Option<RawDictionaryBlock> {
        debug_assert!(self.count == 0 || term > self.previous.as_slice());
        let cut = self.full_at.is_some_and(|full_at| term.len() <= SHORT_HEAD_BYTES || self.body.len() >= full_at.saturating_mul(MAX_OVERFULL_FACTOR)).then(|| self.cut());
        let shared = if self.count == 0 {
            self.head = term.to_vec();
            0
        } else {
            self.previous.iter().zip(term).take_while(|(a, b)| a == b).count()
        };
        varint::put(&mut self.body, shared as u64);
        varint::put(&mut self.body, (term.len() - shared) as u64);
        self.body.extend_from_slice(&term[shared..]);
        self.count += 1;
        self.previous.clear();
        self.previous.extend_from_slice(term);
        let full = self.body.len() >= self.target.bytes || (self.count >= self.target.terms && self.body.len() >= self.target.min_bytes);
        if full && self.full_at.is_none() {
            self.full_at = Some(self.body.len());
        }
        cut
    }

    /// Ends the block being filled, if it holds a term, so that the next
    /// term heads a block of its own whatever the target (FORMAT.md §8:
    /// predicates and classes).
    pub fn cut_before(&mut self) -> Option<RawDictionaryBlock> {
        (self.count > 0).then(|| self.cut())
    }

    /// Returns the last block.
    pub fn finish(mut self) -> Option<RawDictionaryBlock> {
        (self.count > 0).then(|| self.cut())
    }

    fn cut(&mut self) -> RawDictionaryBlock {
        let mut raw = Vec::with_capacity(self.body.len() + 10);
        varint::put(&mut raw, self.count);
        raw.append(&mut self.body);
        let block = RawDictionaryBlock { raw, term_count: self.count, head: std::mem::take(&mut self.head) };
        self.count = 0;
        self.previous.clear();
        self.full_at = None;
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_and_round_trip() {
        let mut encoder = DictionaryEncoder::new(BlockTarget::bytes(1 << 20));
        assert!(encoder.push(b"\x01http://a/x").is_none());
        assert!(encoder.push(b"\x01http://a/y").is_none());
        let block = encoder.finish().unwrap();
        let mut expected = vec![2, 0, 11];
        expected.extend_from_slice(b"\x01http://a/x");
        expected.extend_from_slice(&[10, 1, b'y']);
        assert_eq!(block.raw, expected);
        let decoded = DictionaryBlock::decode(&block.raw, "test", 0).unwrap();
        assert_eq!(decoded.get(1), Some(&b"\x01http://a/y"[..]));
        assert_eq!(decoded.find(b"\x01http://a/y"), Some(1));
        assert_eq!(decoded.find(b"\x01http://a/z"), None);
    }

    #[test]
    fn cuts_blocks() {
        let mut encoder = DictionaryEncoder::new(BlockTarget::bytes(16));
        // Terms cost 9 bytes, then 3 each (6 shared): a block fills at 4 terms.
        let blocks: Vec<_> = (0..10).filter_map(|i| encoder.push(format!("\x03term{i:02}").as_bytes())).collect();
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].head.as_slice(), blocks[0].term_count), (&b"\x03term00"[..], 4));
        assert_eq!((blocks[1].head.as_slice(), blocks[1].term_count), (&b"\x03term04"[..], 4));
        let last = encoder.finish().unwrap();
        assert_eq!((last.head.as_slice(), last.term_count), (&b"\x03term08"[..], 2));
    }

    #[test]
    fn cuts_blocks_by_term_count_past_a_byte_floor() {
        // 3 bytes a term after the first: 3 terms are 15 bytes, under the floor; 4 are 18.
        let target = BlockTarget { bytes: 1 << 20, terms: 3, min_bytes: 16 };
        let mut encoder = DictionaryEncoder::new(target);
        let counts: Vec<u64> = (0..10).filter_map(|i| encoder.push(format!("\x03term{i:02}").as_bytes())).map(|b| b.term_count).collect();
        assert_eq!(counts, [4, 4]);
        assert_eq!(encoder.finish().map(|b| b.term_count), Some(2));
    }

    #[test]
    fn a_full_block_waits_for_a_short_head() {
        // 70-byte terms sharing all but their last byte: 72 bytes, then 3 each; full at the 4th.
        let long = |i: usize| format!("\x03{}{i}", "x".repeat(68));
        let mut terms: Vec<String> = (0..9).map(long).collect();
        terms.push("\x03y".into());
        let mut encoder = DictionaryEncoder::new(BlockTarget::bytes(80));
        let blocks: Vec<_> = terms.iter().filter_map(|t| encoder.push(t.as_bytes())).collect();
        // The long terms after it join the full block; the short "y" heads the next one.
        assert_eq!(blocks.iter().map(|b| b.term_count).collect::<Vec<_>>(), [9]);
        assert_eq!(encoder.finish().map(|b| b.head), Some(b"\x03y".to_vec()));
        // Long terms sharing nothing (103 bytes each): full at the first, cut once past twice that.
        let distinct = |i: usize| format!("\x03{}{}", char::from(b'a' + i as u8), "x".repeat(100));
        let mut encoder = DictionaryEncoder::new(BlockTarget::bytes(80));
        let counts: Vec<u64> = (0..10).filter_map(|i| encoder.push(distinct(i).as_bytes())).map(|b| b.term_count).collect();
        assert_eq!(counts, [3, 3, 3]);
    }

    #[test]
    fn rejects_corrupt_blocks() {
        assert!(DictionaryBlock::decode(&[2, 0, 1, b'a', 5, 1, b'b'], "t", 0).is_err());
        assert!(DictionaryBlock::decode(&[2, 0, 1, b'b', 0, 1, b'a'], "t", 0).is_err());
        assert!(DictionaryBlock::decode(&[1, 0, 1, b'a', 9], "t", 0).is_err());
        assert!(DictionaryBlock::decode(&[200], "t", 0).is_err());
    }
}
