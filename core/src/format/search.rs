//! The label search index (FORMAT.md §12): SEARCH, a small root read with the
//! first 16 KiB (counts, label predicates, language ranges and the directory
//! of posting blocks), and SEARCH BLOCKS, whose blocks hold sorted keys
//! (normalised words, and prefix lists) each with its postings. Encoders and
//! decoders over byte slices only; lookups are in `crate::search`.

use super::varint::{Cursor, CursorError};
#[cfg(feature = "write")]
use super::varint;
use crate::{ByteRange, FormatError, TermId};
use std::collections::HashMap;
use std::ops::RangeInclusive;

/// FORMAT.md §12.1: the SEARCH layout this build writes (columnar posting
/// blocks, a block's repeated weights, lengths and subjects left out).
pub const SEARCH_VERSION: u64 = 3;
/// FORMAT.md §12.1: the SEARCH layouts this build reads.
pub const SEARCH_LAYOUTS: std::ops::RangeInclusive<u64> = 1..=3;
/// FORMAT.md §12.1: the largest decompressed SEARCH root a reader accepts.
pub const MAX_SEARCH_ROOT_RAW_BYTES: u64 = 16 << 20;
/// FORMAT.md §12.3: the byte that ends a prefix list's key (never part of a word).
pub const PREFIX_LIST_MARK: u8 = 0x00;

/// The decoded SEARCH root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchRoot {
    /// The layout of the posting blocks (FORMAT.md §12.1): 1 by key, 2 by
    /// column, 3 by column without a block's repeats.
    pub layout: u64,
    /// Distinct (subject, label) pairs indexed.
    pub entry_count: u64,
    /// Distinct words.
    pub word_count: u64,
    /// Postings stored under words (prefix lists not counted).
    pub posting_count: u64,
    /// The most postings a prefix list holds.
    pub prefix_list_length: u64,
    /// Ids of the label predicates indexed, ascending.
    pub predicates: Vec<TermId>,
    /// For each language tag of the labels (`""` for labels without one),
    /// the first and last label id with that tag.
    pub languages: Vec<LanguageRange>,
    /// Posting blocks in key order.
    pub blocks: Vec<SearchBlockEntry>,
}

/// The label ids of one language tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageRange {
    /// The tag, lowercase as in the dictionary (`""`: no tag).
    pub tag: String,
    /// First and last label id with that tag (labels of one tag are
    /// contiguous in id order, FORMAT.md §5.1).
    pub labels: RangeInclusive<TermId>,
}

/// A posting block's place and first key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchBlockEntry {
    /// Absolute byte range of the sealed block.
    pub range: ByteRange,
    /// Keys in the block.
    pub key_count: u64,
    /// Its first key.
    pub head: Vec<u8>,
}

/// One posting: a label of a subject containing the key's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Posting {
    /// Term id of the subject.
    pub subject: TermId,
    /// Term id of the label literal.
    pub label: TermId,
    /// The subject's weight (FORMAT.md §12.4): higher comes first.
    pub weight: u64,
    /// Characters in the normalised label: shorter comes first among equal weights.
    pub length: u64,
}

impl Posting {
    /// The order of postings under a key: weight descending, then length, subject, label.
    pub fn rank_key(&self) -> (std::cmp::Reverse<u64>, u64, TermId, TermId) {
        (std::cmp::Reverse(self.weight), self.length, self.subject, self.label)
    }
}

/// A key and its postings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPostings {
    /// A normalised word, or a prefix followed by [`PREFIX_LIST_MARK`].
    pub key: Vec<u8>,
    /// Postings of this key in the data; more than `postings.len()` when the
    /// writer kept only the best (FORMAT.md §12.3).
    pub total: u64,
    /// Postings in (label, subject) order.
    pub postings: Vec<Posting>,
}

impl KeyPostings {
    /// Whether this is a prefix list (and the prefix it lists).
    pub fn prefix(&self) -> Option<&[u8]> {
        self.key.strip_suffix(&[PREFIX_LIST_MARK])
    }

    /// Whether every posting of the key is stored.
    pub fn is_complete(&self) -> bool {
        self.total == self.postings.len() as u64
    }

    /// The key's characters (FORMAT.md §12.3): its bytes other than UTF-8
    /// continuation bytes, a prefix list's mark not counted. Defined on any
    /// bytes, so a reader needs no UTF-8 check.
    pub fn characters(&self) -> u64 {
        self.prefix().unwrap_or(&self.key).iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64
    }
}

/// A decoded posting block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PostingBlock {
    /// Keys in ascending byte order.
    pub keys: Vec<KeyPostings>,
}

impl SearchRoot {
    /// Encodes the root (decompressed); block ranges are relative to SEARCH
    /// BLOCKS and only their lengths are stored.
    #[cfg(feature = "write")]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for value in [self.layout, self.entry_count, self.word_count, self.posting_count, self.prefix_list_length, self.predicates.len() as u64] {
            varint::put(&mut out, value);
        }
        let mut previous = 0;
        for &id in &self.predicates {
            varint::put(&mut out, id - previous);
            previous = id;
        }
        varint::put(&mut out, self.languages.len() as u64);
        for language in &self.languages {
            varint::put(&mut out, language.tag.len() as u64);
            out.extend_from_slice(language.tag.as_bytes());
            varint::put(&mut out, *language.labels.start());
            varint::put(&mut out, language.labels.end() - language.labels.start());
        }
        // Depth 0, then a level-0 node as FORMAT.md §4.3 (2.0) lays out a dictionary node.
        varint::put(&mut out, 0);
        varint::put(&mut out, self.blocks.len() as u64);
        varint::put(&mut out, self.blocks.first().map_or(0, |b| b.range.offset));
        let mut previous_head: &[u8] = &[];
        for entry in &self.blocks {
            let shared = shared_prefix(previous_head, &entry.head);
            for value in [entry.range.length, entry.key_count, shared as u64, (entry.head.len() - shared) as u64] {
                varint::put(&mut out, value);
            }
            out.extend_from_slice(&entry.head[shared..]);
            previous_head = &entry.head;
        }
        out
    }

    /// Decodes a decompressed root. `blocks` is the SEARCH BLOCKS section's
    /// range, which the blocks must cover exactly; `offset` names the root in errors.
    pub fn decode(raw: &[u8], blocks: ByteRange, offset: u64) -> Result<Self, FormatError> {
        let fail = |reason: String| FormatError::corrupt("SEARCH", offset, reason);
        let corrupt = |e: CursorError| fail(format!("{} at byte {} of the decompressed root", e.reason, e.position));
        let mut cursor = Cursor::new(raw);
        let layout = cursor.varint().map_err(corrupt)?;
        if !SEARCH_LAYOUTS.contains(&layout) {
            return Err(fail(format!("search index layout {layout}; this build reads layouts {} to {}", SEARCH_LAYOUTS.start(), SEARCH_LAYOUTS.end())));
        }
        let mut root = Self {
            layout,
            entry_count: cursor.varint().map_err(corrupt)?,
            word_count: cursor.varint().map_err(corrupt)?,
            posting_count: cursor.varint().map_err(corrupt)?,
            prefix_list_length: cursor.varint().map_err(corrupt)?,
            ..Self::default()
        };
        let predicates = cursor.count(1).map_err(corrupt)?;
        let mut id: TermId = 0;
        for _ in 0..predicates {
            id = id.checked_add(cursor.varint().map_err(corrupt)?).ok_or_else(|| fail("predicate id overflows".into()))?;
            root.predicates.push(id);
        }
        let languages = cursor.count(3).map_err(corrupt)?;
        for _ in 0..languages {
            let length = cursor.varint().map_err(corrupt)?;
            let tag = std::str::from_utf8(cursor.bytes(length).map_err(corrupt)?).map_err(|_| fail("language tag is not UTF-8".into()))?.to_owned();
            let first = cursor.varint().map_err(corrupt)?;
            let last = first.checked_add(cursor.varint().map_err(corrupt)?).ok_or_else(|| fail("label id range overflows".into()))?;
            root.languages.push(LanguageRange { tag, labels: first..=last });
        }
        let depth = cursor.varint().map_err(corrupt)?;
        if depth != 0 {
            return Err(fail(format!("directory of depth {depth}; this build reads depth 0")));
        }
        let count = cursor.count(5).map_err(corrupt)?;
        let mut position = blocks.offset.saturating_add(cursor.varint().map_err(corrupt)?);
        let mut head: Vec<u8> = Vec::new();
        for i in 0..count {
            let length = cursor.varint().map_err(corrupt)?;
            let key_count = cursor.varint().map_err(corrupt)?;
            let shared = cursor.varint().map_err(corrupt)?;
            let suffix_length = cursor.varint().map_err(corrupt)?;
            if shared > head.len() as u64 || (i == 0 && shared != 0) {
                return Err(fail(format!("block {i}'s head shares {shared} bytes with a {}-byte head", head.len())));
            }
            let previous = std::mem::take(&mut head);
            head.extend_from_slice(&previous[..shared as usize]);
            head.extend_from_slice(cursor.bytes(suffix_length).map_err(corrupt)?);
            if key_count == 0 || length == 0 || (i > 0 && head <= previous) {
                return Err(fail(format!("block {i} is empty or its head is out of order")));
            }
            let range = ByteRange { offset: position, length };
            if range.offset.checked_add(length).is_none_or(|end| end > blocks.end()) {
                return Err(fail(format!("block {i} runs past the SEARCH BLOCKS section")));
            }
            position += length;
            root.blocks.push(SearchBlockEntry { range, key_count, head: head.clone() });
        }
        if !cursor.is_empty() {
            return Err(fail("trailing bytes after the directory".into()));
        }
        if root.blocks.first().is_some_and(|b| b.range.offset != blocks.offset) || (!root.blocks.is_empty() && position != blocks.end()) {
            return Err(fail("the posting blocks do not cover the SEARCH BLOCKS section exactly".into()));
        }
        Ok(root)
    }

    /// The blocks that may hold keys starting with `prefix` (FORMAT.md §12.5):
    /// from the last block whose head is ≤ `prefix` to the last whose head
    /// is below every key that starts with it.
    pub fn blocks_for_prefix(&self, prefix: &[u8]) -> std::ops::Range<usize> {
        // No key holds 0xFF (keys are UTF-8 and 0x00), so `prefix + FF` is above all of them.
        let mut upper = prefix.to_vec();
        upper.push(0xFF);
        let end = self.blocks.partition_point(|b| b.head < upper);
        if end == 0 {
            return 0..0;
        }
        self.blocks.partition_point(|b| b.head.as_slice() <= prefix).saturating_sub(1)..end
    }

    /// The block that holds `key` if any block does: the last whose head is ≤ it.
    pub fn block_for_key(&self, key: &[u8]) -> Option<usize> {
        self.blocks.partition_point(|b| b.head.as_slice() <= key).checked_sub(1)
    }

    /// The label id ranges of the tags `lang` matches (SPARQL `langMatches`:
    /// the tag itself or a subtag of it; `""` matches labels without a tag).
    pub fn language_ranges(&self, lang: &str) -> Vec<RangeInclusive<TermId>> {
        let lang = lang.to_ascii_lowercase();
        self.languages
            .iter()
            .filter(|l| if lang.is_empty() { l.tag.is_empty() } else { l.tag == lang || l.tag.strip_prefix(&lang).is_some_and(|rest| rest.starts_with('-')) })
            .map(|l| l.labels.clone())
            .collect()
    }
}

impl PostingBlock {
    /// Encodes a block (decompressed) in layout 3 (FORMAT.md §12.3); fails
    /// on a posting whose length is below its key's characters.
    #[cfg(feature = "write")]
    pub fn encode(&self) -> std::io::Result<Vec<u8>> {
        let mut encoder = BlockEncoder::default();
        for key in &self.keys {
            encoder.push(key)?;
        }
        Ok(encoder.finish())
    }

    /// Decodes a decompressed block of `layout` (1, 2 or 3, FORMAT.md §12.3);
    /// `what`/`offset` name it in errors.
    pub fn decode(raw: &[u8], layout: u64, what: &str, offset: u64) -> Result<Self, FormatError> {
        let fail = |reason: String| FormatError::corrupt(what, offset, reason);
        let corrupt = |e: CursorError| fail(format!("{} at byte {} of the decompressed block", e.reason, e.position));
        let column_error = |e: ColumnError| match e {
            ColumnError::Cursor(error) => corrupt(error),
            ColumnError::Bad(reason) => fail(reason),
        };
        let mut cursor = Cursor::new(raw);
        let count = cursor.count(4).map_err(corrupt)?;
        let mut keys: Vec<KeyPostings> = Vec::with_capacity(count);
        let mut stored = Vec::with_capacity(count);
        if layout == 3 {
            // The keys' shared lengths, then their suffix lengths, then their suffixes.
            let mut lengths = Vec::with_capacity(count);
            for _ in 0..count {
                lengths.push([cursor.varint().map_err(corrupt)?, 0]);
            }
            for [_, suffix_length] in &mut lengths {
                *suffix_length = cursor.varint().map_err(corrupt)?;
            }
            for [shared, suffix_length] in lengths {
                push_key(&mut keys, shared, cursor.bytes(suffix_length).map_err(corrupt)?).map_err(column_error)?;
            }
        } else {
            // Layout 1 holds each key's count and postings right after it; layout 2 every key first.
            for i in 0..count {
                let shared = cursor.varint().map_err(corrupt)?;
                let suffix_length = cursor.varint().map_err(corrupt)?;
                push_key(&mut keys, shared, cursor.bytes(suffix_length).map_err(corrupt)?).map_err(column_error)?;
                if layout == 1 {
                    stored.push(read_count(&mut cursor, &mut keys[i], i, raw.len()).map_err(column_error)?);
                    read_columns(&mut cursor, &mut keys[i..], &stored[i..], i).map_err(column_error)?;
                }
            }
        }
        if layout != 1 {
            let mut stored_sum = 0usize;
            for (i, key) in keys.iter_mut().enumerate() {
                stored.push(read_count(&mut cursor, key, i, raw.len()).map_err(column_error)?);
                stored_sum = stored_sum.saturating_add(stored[i]);
                if stored_sum > raw.len() {
                    return Err(fail(format!("key {i}: the keys store more postings than the block has bytes")));
                }
            }
            if layout == 2 {
                read_columns(&mut cursor, &mut keys, &stored, 0).map_err(column_error)?;
            } else {
                read_columns_without_repeats(&mut cursor, &mut keys, &stored).map_err(column_error)?;
            }
        }
        if !cursor.is_empty() {
            return Err(fail("trailing bytes after the last key".into()));
        }
        Ok(Self { keys })
    }

    /// The key equal to `key`, if the block holds it.
    pub fn find(&self, key: &[u8]) -> Option<&KeyPostings> {
        self.keys.binary_search_by(|k| k.key.as_slice().cmp(key)).ok().map(|i| &self.keys[i])
    }

    /// The keys starting with `prefix`, in order.
    pub fn with_prefix<'a>(&'a self, prefix: &'a [u8]) -> impl Iterator<Item = &'a KeyPostings> + 'a {
        let start = self.keys.partition_point(|k| k.key.as_slice() < prefix);
        self.keys[start..].iter().take_while(move |k| k.key.starts_with(prefix))
    }

    /// Approximate heap bytes, for the cache budget.
    pub fn heap_bytes(&self) -> usize {
        self.keys.iter().map(|k| k.key.capacity() + k.postings.capacity() * std::mem::size_of::<Posting>() + std::mem::size_of::<KeyPostings>()).sum()
    }
}

/// Why a block's counts or columns could not be read.
enum ColumnError {
    Cursor(CursorError),
    Bad(String),
}

impl From<CursorError> for ColumnError {
    fn from(error: CursorError) -> Self {
        Self::Cursor(error)
    }
}

/// Appends the key that shares `shared` bytes with the last of `keys` and
/// ends with `suffix`, checking that keys strictly increase.
fn push_key(keys: &mut Vec<KeyPostings>, shared: u64, suffix: &[u8]) -> Result<(), ColumnError> {
    let i = keys.len();
    let previous = keys.last().map_or(&[][..], |k| k.key.as_slice());
    if shared > previous.len() as u64 {
        return Err(ColumnError::Bad(format!("key {i} shares {shared} bytes with a {}-byte key", previous.len())));
    }
    let mut key = previous[..shared as usize].to_vec();
    key.extend_from_slice(suffix);
    if key.is_empty() || (i > 0 && key.as_slice() <= previous) {
        return Err(ColumnError::Bad(format!("key {i} is empty or out of order")));
    }
    keys.push(KeyPostings { key, total: 0, postings: Vec::new() });
    Ok(())
}

/// Reads a key's `stored × 2 + truncated` (and `total`) into `key.total`;
/// returns `stored`. `i` names the key.
fn read_count(cursor: &mut Cursor, key: &mut KeyPostings, i: usize, raw_bytes: usize) -> Result<usize, ColumnError> {
    let stored_and_flag = cursor.varint()?;
    let stored = usize::try_from(stored_and_flag >> 1).map_err(|_| ColumnError::Bad(format!("key {i} stores too many postings")))?;
    let total = if stored_and_flag & 1 == 1 { cursor.varint()? } else { stored as u64 };
    if stored as u64 > total || stored > raw_bytes {
        return Err(ColumnError::Bad(format!("key {i} stores {stored} of {total} postings")));
    }
    key.total = total;
    Ok(stored)
}

/// Reads the four posting columns of `keys`, `stored[k]` postings for key
/// `k`: label id deltas, subject ids, weights, lengths, each column over
/// every key in turn. `first` is the first key's number, for errors.
fn read_columns(cursor: &mut Cursor, keys: &mut [KeyPostings], stored: &[usize], first: usize) -> Result<(), ColumnError> {
    for (i, (key, &count)) in keys.iter_mut().zip(stored).enumerate() {
        let mut label: TermId = 0;
        key.postings.reserve_exact(count);
        for _ in 0..count {
            label = label.checked_add(cursor.varint()?).ok_or_else(|| ColumnError::Bad(format!("key {}: label id overflows", first + i)))?;
            key.postings.push(Posting { subject: 0, label, weight: 0, length: 0 });
        }
    }
    for column in 0..3 {
        for posting in keys.iter_mut().flat_map(|k| k.postings.iter_mut()) {
            let value = cursor.varint()?;
            match column {
                0 => posting.subject = value,
                1 => posting.weight = value,
                _ => posting.length = value,
            }
        }
    }
    Ok(())
}

/// Reads the columns of layout 3 (FORMAT.md §12.3) into `keys`, `stored[k]`
/// postings for key `k`: label id deltas, subject codes (after a posting of
/// the same key and label: the subject's increase; otherwise 0 for the
/// subject of the label's latest posting in the block, or subject + 1), then
/// a weight for each new subject and a length for each new label, the
/// others taken from their first posting.
fn read_columns_without_repeats(cursor: &mut Cursor, keys: &mut [KeyPostings], stored: &[usize]) -> Result<(), ColumnError> {
    let mut labels = Vec::with_capacity(stored.iter().sum());
    for (i, &count) in stored.iter().enumerate() {
        let mut label: TermId = 0;
        for _ in 0..count {
            label = label.checked_add(cursor.varint()?).ok_or_else(|| ColumnError::Bad(format!("key {i}: label id overflows")))?;
            labels.push((i, label));
        }
    }
    // Per posting: its subject, and whether its subject and its label are new to the block.
    let mut latest_subject: HashMap<TermId, TermId> = HashMap::new();
    let mut weights: HashMap<TermId, u64> = HashMap::new();
    let mut postings: Vec<(TermId, bool, bool)> = Vec::with_capacity(labels.len());
    // The previous posting: (key, label, subject).
    let mut previous: Option<(usize, TermId, TermId)> = None;
    for &(i, label) in &labels {
        let code = cursor.varint()?;
        let subject = match previous {
            // After a posting of the same key and label, the subject's increase.
            Some((key, previous_label, previous_subject)) if key == i && previous_label == label => {
                previous_subject.checked_add(code).filter(|_| code > 0).ok_or_else(|| ColumnError::Bad(format!("key {i}: label {label}'s subjects do not increase")))?
            }
            _ if code == 0 => *latest_subject.get(&label).ok_or_else(|| ColumnError::Bad(format!("key {i}: label {label} repeats a subject, but the block has no earlier posting of it")))?,
            _ => code - 1,
        };
        previous = Some((i, label, subject));
        let new_label = latest_subject.insert(label, subject).is_none();
        let new_subject = !weights.contains_key(&subject);
        if new_subject {
            weights.insert(subject, 0);
        }
        postings.push((subject, new_subject, new_label));
    }
    for &(subject, new_subject, _) in &postings {
        if new_subject {
            weights.insert(subject, cursor.varint()?);
        }
    }
    let mut lengths: HashMap<TermId, u64> = HashMap::new();
    for (&(i, label), &(subject, _, new_label)) in labels.iter().zip(&postings) {
        let length = if new_label {
            let length = cursor.varint()?.checked_add(keys[i].characters()).ok_or_else(|| ColumnError::Bad(format!("key {i}: length overflows")))?;
            lengths.insert(label, length);
            length
        } else {
            lengths.get(&label).copied().unwrap_or_default()
        };
        let weight = weights.get(&subject).copied().unwrap_or_default();
        keys[i].postings.push(Posting { subject, label, weight, length });
    }
    Ok(())
}

/// Writes a posting block in layout 3 (FORMAT.md §12.3) a key at a time,
/// so that a writer can cut blocks at a decompressed size: the columns grow
/// apart and [`BlockEncoder::finish`] joins them.
#[cfg(feature = "write")]
#[derive(Default)]
pub struct BlockEncoder {
    key_count: u64,
    previous_key: Vec<u8>,
    /// The keys: bytes shared with the previous key, suffix lengths, suffixes.
    shared: Vec<u8>,
    suffix_lengths: Vec<u8>,
    suffixes: Vec<u8>,
    counts: Vec<u8>,
    /// Label id deltas, subject codes, weights, lengths.
    columns: [Vec<u8>; 4],
    /// Each label's latest subject in the block (its presence: the label is not new).
    latest_subject: HashMap<TermId, TermId>,
    /// Subjects whose weight the block has given.
    weighed: std::collections::HashSet<TermId>,
}

#[cfg(feature = "write")]
impl BlockEncoder {
    /// Adds a key, after the keys added so far (keys ascending); fails when
    /// its postings are not in (label, subject) order or a posting's length
    /// is below the key's characters, which no label holding its word has.
    pub fn push(&mut self, key: &KeyPostings) -> std::io::Result<()> {
        let characters = key.characters();
        if key.postings.windows(2).any(|pair| (pair[0].label, pair[0].subject) >= (pair[1].label, pair[1].subject)) {
            let key = String::from_utf8_lossy(&key.key);
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("search key {key:?}: postings not in (label, subject) order")));
        }
        if let Some(posting) = key.postings.iter().find(|p| p.length < characters) {
            let key = String::from_utf8_lossy(&key.key);
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("search key {key:?}: label {} has length {}, below the key's {characters} characters", posting.label, posting.length)));
        }
        let shared = shared_prefix(&self.previous_key, &key.key);
        varint::put(&mut self.shared, shared as u64);
        varint::put(&mut self.suffix_lengths, (key.key.len() - shared) as u64);
        self.suffixes.extend_from_slice(&key.key[shared..]);
        self.previous_key.clone_from(&key.key);
        self.key_count += 1;
        varint::put(&mut self.counts, (key.postings.len() as u64) << 1 | u64::from(!key.is_complete()));
        if !key.is_complete() {
            varint::put(&mut self.counts, key.total);
        }
        let [labels, subjects, weights, lengths] = &mut self.columns;
        let mut previous: Option<&Posting> = None;
        for posting in &key.postings {
            varint::put(labels, posting.label - previous.map_or(0, |p| p.label));
            let latest = self.latest_subject.insert(posting.label, posting.subject);
            let code = match previous {
                Some(p) if p.label == posting.label => posting.subject - p.subject,
                _ if latest == Some(posting.subject) => 0,
                _ => posting.subject + 1,
            };
            varint::put(subjects, code);
            if latest.is_none() {
                varint::put(lengths, posting.length - characters);
            }
            if self.weighed.insert(posting.subject) {
                varint::put(weights, posting.weight);
            }
            previous = Some(posting);
        }
        Ok(())
    }

    /// Decompressed bytes of the block so far.
    pub fn len(&self) -> u64 {
        let key_count = u64::from((64 - (self.key_count | 1).leading_zeros()).div_ceil(7));
        let keys = self.shared.len() + self.suffix_lengths.len() + self.suffixes.len();
        key_count + (keys + self.counts.len() + self.columns.iter().map(Vec::len).sum::<usize>()) as u64
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.key_count == 0
    }

    /// Keys added.
    pub fn key_count(&self) -> u64 {
        self.key_count
    }

    /// The decompressed block.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() as usize);
        varint::put(&mut out, self.key_count);
        for column in [&self.shared, &self.suffix_lengths, &self.suffixes, &self.counts].into_iter().chain(&self.columns) {
            out.extend_from_slice(column);
        }
        out
    }
}

#[cfg(feature = "write")]
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: &[u8], total: u64, postings: &[(TermId, TermId, u64, u64)]) -> KeyPostings {
        KeyPostings { key: key.to_vec(), total, postings: postings.iter().map(|&(subject, label, weight, length)| Posting { subject, label, weight, length }).collect() }
    }

    #[test]
    fn block_round_trip_and_lookups() {
        let block = PostingBlock {
            keys: vec![
                key(b"lin", 3, &[(7, 40, 9, 7), (3, 41, 2, 12)]),
                key(b"lin\0", 2, &[(7, 40, 9, 7), (3, 41, 2, 12)]),
                key(b"lincoln", 2, &[(7, 40, 9, 7), (3, 41, 2, 12)]),
                key(b"lindsay", 1, &[(5, 44, 0, 7)]),
            ],
        };
        let raw = block.encode().unwrap();
        let decoded = PostingBlock::decode(&raw, 3, "SEARCH block 0", 0).unwrap();
        assert_eq!(decoded, block);
        let mut encoder = BlockEncoder::default();
        for key in &block.keys {
            encoder.push(key).unwrap();
        }
        assert_eq!(encoder.len(), raw.len() as u64, "len measures what finish writes");
        assert_eq!(encoder.finish(), raw);
        assert!(!decoded.keys[0].is_complete());
        assert_eq!(decoded.keys[1].prefix(), Some(&b"lin"[..]));
        assert_eq!(decoded.find(b"lindsay").unwrap().postings[0].subject, 5);
        assert!(decoded.find(b"lind").is_none());
        let found: Vec<&[u8]> = decoded.with_prefix(b"linc").map(|k| k.key.as_slice()).collect();
        assert_eq!(found, [&b"lincoln"[..]]);
    }

    #[test]
    fn block_rejects_keys_out_of_order() {
        let mut raw = PostingBlock { keys: vec![key(b"b", 0, &[]), key(b"c", 0, &[])] }.encode().unwrap();
        // The second key's suffix "c" becomes "a": below the first.
        let position = raw.iter().rposition(|&b| b == b'c').unwrap();
        raw[position] = b'a';
        let error = PostingBlock::decode(&raw, 3, "SEARCH block 3", 99).unwrap_err();
        assert_eq!(error.to_string(), "corrupt SEARCH block 3 at byte 99: key 1 is empty or out of order");
    }

    #[test]
    fn the_spec_examples_in_both_layouts() {
        // FORMAT.md §12.3: `lincoln` (subject 7, label 40, weight 9, length 7), (3, 41, 2, 12); `lindsay` (5, 44, 0, 7).
        let block = PostingBlock { keys: vec![key(b"lincoln", 2, &[(7, 40, 9, 7), (3, 41, 2, 12)]), key(b"lindsay", 1, &[(5, 44, 0, 7)])] };
        let layout1 = [&[2, 0, 7][..], b"lincoln", &[4, 0x28, 1, 7, 3, 9, 2, 7, 0x0C], &[3, 4], b"dsay", &[2, 0x2C, 5, 0, 7]].concat();
        assert_eq!(PostingBlock::decode(&layout1, 1, "SEARCH block 0", 0).unwrap(), block);
        let layout2 = [&[2, 0, 7][..], b"lincoln", &[3, 4], b"dsay", &[4, 2], &[0x28, 1, 0x2C], &[7, 3, 5], &[9, 2, 0], &[7, 0x0C, 7]].concat();
        assert_eq!(PostingBlock::decode(&layout2, 2, "SEARCH block 0", 0).unwrap(), block);
        // Counts that promise more postings than the block holds are refused before reading them.
        let mut short = layout2.clone();
        short.truncate(short.len() - 2);
        assert!(PostingBlock::decode(&short, 2, "SEARCH block 0", 0).is_err());
    }

    #[test]
    fn the_spec_example_of_layout_3() {
        // FORMAT.md §12.3: label 41 is "Lincoln Lindsay" (length 15), so `lindsay` lists (3, 41, 2, 15) too.
        let block = PostingBlock { keys: vec![key(b"lincoln", 2, &[(7, 40, 9, 7), (3, 41, 2, 15)]), key(b"lindsay", 2, &[(3, 41, 2, 15), (5, 44, 0, 7)])] };
        let layout3 = [&[2, 0, 3, 7, 4][..], b"lincoln", b"dsay", &[4, 4], &[0x28, 1, 0x29, 3], &[8, 4, 0, 6], &[9, 2, 0], &[0, 8, 0]].concat();
        assert_eq!(block.encode().unwrap(), layout3);
        assert_eq!(PostingBlock::decode(&layout3, 3, "SEARCH block 0", 0).unwrap(), block);
        let layout2 = [&[2, 0, 7][..], b"lincoln", &[3, 4], b"dsay", &[4, 4], &[0x28, 1, 0x29, 3], &[7, 3, 3, 5], &[9, 2, 2, 0], &[7, 0x0F, 0x0F, 7]].concat();
        assert_eq!(PostingBlock::decode(&layout2, 2, "SEARCH block 0", 0).unwrap(), block);
        // A repeated subject (0) for a label the block has not listed before.
        let mut orphan = layout3.clone();
        orphan[20] = 0x2A;
        let error = PostingBlock::decode(&orphan, 3, "SEARCH block 0", 5).unwrap_err();
        assert_eq!(error.to_string(), "corrupt SEARCH block 0 at byte 5: key 1: label 42 repeats a subject, but the block has no earlier posting of it");
        // A writer cannot store a length below its key's characters.
        let short = PostingBlock { keys: vec![key(b"lincoln", 1, &[(7, 40, 9, 6)])] };
        assert!(short.encode().unwrap_err().to_string().contains("below the key's 7 characters"));
        // A label with several subjects in one key: the later ones as increases (3 + 1, then 7 - 3).
        let shared = PostingBlock { keys: vec![key(b"tile", 2, &[(3, 40, 1, 4), (7, 40, 2, 4)])] };
        let raw = shared.encode().unwrap();
        assert_eq!(raw, [&[1, 0, 4][..], b"tile", &[4], &[0x28, 0], &[4, 4], &[1, 2], &[0]].concat());
        assert_eq!(PostingBlock::decode(&raw, 3, "SEARCH block 0", 0).unwrap(), shared);
        let mut flat = raw.clone();
        flat[11] = 0;
        assert_eq!(PostingBlock::decode(&flat, 3, "SEARCH block 0", 0).unwrap_err().to_string(), "corrupt SEARCH block 0 at byte 0: key 0: label 40's subjects do not increase");
        // Characters: continuation bytes and a prefix list's mark are not counted.
        assert_eq!(key("ελ\0".as_bytes(), 0, &[]).characters(), 2);
    }

    #[test]
    fn root_round_trip_and_block_choice() {
        let blocks = [(b"a".to_vec(), 10), (b"lin".to_vec(), 20), (b"lincoln".to_vec(), 30), (b"m".to_vec(), 5)];
        let mut offset = 0;
        let root = SearchRoot {
            layout: 2,
            entry_count: 4,
            word_count: 9,
            posting_count: 12,
            prefix_list_length: 100,
            predicates: vec![3, 8],
            languages: vec![LanguageRange { tag: String::new(), labels: 50..=60 }, LanguageRange { tag: "en".into(), labels: 61..=70 }, LanguageRange { tag: "en-gb".into(), labels: 71..=71 }],
            blocks: blocks
                .iter()
                .map(|(head, length)| {
                    let entry = SearchBlockEntry { range: ByteRange { offset, length: *length }, key_count: 2, head: head.clone() };
                    offset += length;
                    entry
                })
                .collect(),
        };
        let section = ByteRange { offset: 0, length: 65 };
        let decoded = SearchRoot::decode(&root.encode(), section, 0).unwrap();
        assert_eq!(decoded, root);
        assert_eq!(decoded.blocks_for_prefix(b"lin"), 1..3);
        assert_eq!(decoded.blocks_for_prefix(b"linc"), 1..3);
        assert_eq!(decoded.blocks_for_prefix(b"lincoln"), 2..3);
        assert_eq!(decoded.blocks_for_prefix(b"b"), 0..1);
        assert_eq!(decoded.blocks_for_prefix(b"0"), 0..0);
        assert_eq!(decoded.blocks_for_prefix(b"z"), 3..4);
        assert_eq!(decoded.block_for_key(b"0"), None);
        assert_eq!(decoded.language_ranges("EN"), [61..=70, 71..=71]);
        assert_eq!(decoded.language_ranges(""), [50..=60]);
        assert!(decoded.language_ranges("e").is_empty());
        let short = ByteRange { offset: 0, length: 64 };
        assert_eq!(SearchRoot::decode(&root.encode(), short, 7).unwrap_err().to_string(), "corrupt SEARCH at byte 7: block 3 runs past the SEARCH BLOCKS section");
    }
}
