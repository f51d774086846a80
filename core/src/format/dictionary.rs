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

/// Cuts a sorted stream of distinct encoded terms into blocks of about
/// `target_raw_bytes` each.
#[cfg(feature = "write")]
pub struct DictionaryEncoder {
    target_raw_bytes: usize,
    body: Vec<u8>,
    count: u64,
    previous: Vec<u8>,
    head: Vec<u8>,
}

#[cfg(feature = "write")]
impl DictionaryEncoder {
    /// An encoder cutting blocks at `target_raw_bytes`.
    pub fn new(target_raw_bytes: usize) -> Self {
        Self { target_raw_bytes, body: Vec::new(), count: 0, previous: Vec::new(), head: Vec::new() }
    }

    /// Adds the next term (strictly greater than the previous one); returns a
    /// block when one is full.
    pub fn push(&mut self, term: &[u8]) -> Option<RawDictionaryBlock> {
        debug_assert!(self.count == 0 || term > self.previous.as_slice());
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
        (self.body.len() >= self.target_raw_bytes).then(|| self.cut())
    }

    /// Returns the last, partial block.
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
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_and_round_trip() {
        let mut encoder = DictionaryEncoder::new(1 << 20);
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
        let mut encoder = DictionaryEncoder::new(16);
        // Terms cost 9 bytes, then 3 each (6 shared): a block fills at 4 terms.
        let blocks: Vec<_> = (0..10).filter_map(|i| encoder.push(format!("\x03term{i:02}").as_bytes())).collect();
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].head.as_slice(), blocks[0].term_count), (&b"\x03term00"[..], 4));
        assert_eq!((blocks[1].head.as_slice(), blocks[1].term_count), (&b"\x03term04"[..], 4));
        let last = encoder.finish().unwrap();
        assert_eq!((last.head.as_slice(), last.term_count), (&b"\x03term08"[..], 2));
    }

    #[test]
    fn rejects_corrupt_blocks() {
        assert!(DictionaryBlock::decode(&[2, 0, 1, b'a', 5, 1, b'b'], "t", 0).is_err());
        assert!(DictionaryBlock::decode(&[2, 0, 1, b'b', 0, 1, b'a'], "t", 0).is_err());
        assert!(DictionaryBlock::decode(&[1, 0, 1, b'a', 9], "t", 0).is_err());
        assert!(DictionaryBlock::decode(&[200], "t", 0).is_err());
    }
}
