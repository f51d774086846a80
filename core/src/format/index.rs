//! The INDEX section (FORMAT.md §4): where every block is and what it starts
//! with. With it in memory a reader plans any lookup without further reads.

use super::MAX_INDEX_RAW_BYTES;
use super::directory::{Body, Entry, Layout, MAX_DEPTH, Place};
use super::permutation::{Key, Permutation};
use super::varint::{self, Cursor};
use crate::{ByteRange, FormatError, TermId};
use std::sync::Arc;

/// A dictionary block's place and first term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryEntry {
    /// Absolute byte range of the sealed block.
    pub range: ByteRange,
    /// Id of its first term.
    pub first_id: TermId,
    /// Number of terms.
    pub term_count: u64,
    /// Encoded first term.
    pub head: Vec<u8>,
}

/// A permutation block's place and first key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermutationEntry {
    /// Absolute byte range of the sealed block.
    pub range: ByteRange,
    /// Number of quads.
    pub quad_count: u64,
    /// Its first key, in the permutation's order.
    pub first_key: Key,
}

/// A named graph and its quad count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphEntry {
    /// Term id of the graph name.
    pub id: TermId,
    /// Quads in that graph.
    pub quad_count: u64,
}

/// The decoded INDEX: the root of each of the seven directories, and the
/// graph list. In a flat file (FORMAT.md §4.1) each root is a body of level
/// 0 listing every block; with required feature bit 1 (§4.3) a root may be
/// of a higher level, its children nodes of the DIRECTORY section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Index {
    /// The dictionary's directory.
    pub dictionary: Arc<Body<Vec<u8>>>,
    /// Named graphs in id order.
    pub graphs: Vec<GraphEntry>,
    /// Each permutation's directory, indexed by [`Permutation::id`].
    pub permutations: [Arc<Body<Key>>; 6],
}

/// Where the sections a directory points into are (absolute ranges), and
/// whether the file has a DIRECTORY section (required feature bit 1).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sections {
    /// The DICTIONARY section.
    pub dictionary: ByteRange,
    /// The PERMUTATION sections.
    pub permutations: [ByteRange; 6],
    /// The DIRECTORY section, in a file with bit 1.
    pub directory: Option<ByteRange>,
}

impl Sections {
    fn layout(&self) -> Layout {
        if self.directory.is_some() { Layout::Tree } else { Layout::Flat }
    }
}

impl Index {
    /// A flat INDEX (FORMAT.md §4.1) listing these blocks.
    pub fn flat(dictionary: Vec<DictionaryEntry>, graphs: Vec<GraphEntry>, permutations: [Vec<PermutationEntry>; 6]) -> Self {
        let dictionary = dictionary
            .into_iter()
            .enumerate()
            .map(|(i, e)| Entry { range: e.range, first_item: e.first_id, item_count: e.term_count, first_block: i, block_count: 1, head: e.head })
            .collect();
        let mut first_quad = [0u64; 6];
        let permutations = std::array::from_fn(|p| {
            let entries = permutations[p]
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let first_item = first_quad[p];
                    // Given counts are the writer's; decoding checks them for overflow.
                    first_quad[p] = first_quad[p].wrapping_add(e.quad_count);
                    Entry { range: e.range, first_item, item_count: e.quad_count, first_block: i, block_count: 1, head: e.first_key }
                })
                .collect();
            Arc::new(Body { level: 0, entries })
        });
        Self { dictionary: Arc::new(Body { level: 0, entries: dictionary }), graphs, permutations }
    }

    /// Encodes INDEX (decompressed): flat (§4.1) when `sections` has no
    /// DIRECTORY, else each directory's depth and root body (§4.3). Block
    /// ranges are not stored, only lengths, and the offset of a root's first
    /// child relative to `sections`.
    #[cfg(feature = "write")]
    pub fn encode(&self, sections: &Sections) -> Vec<u8> {
        let layout = sections.layout();
        let base = |body_level: u8, blocks: ByteRange| if body_level == 0 { blocks.offset } else { sections.directory.map_or(0, |d| d.offset) };
        let mut out = Vec::new();
        if layout == Layout::Tree {
            varint::put(&mut out, u64::from(self.dictionary.level));
        }
        self.dictionary.encode(base(self.dictionary.level, sections.dictionary), layout, &mut out);
        varint::put(&mut out, self.graphs.len() as u64);
        let mut previous_id = 0;
        for graph in &self.graphs {
            varint::put(&mut out, graph.id - previous_id);
            varint::put(&mut out, graph.quad_count);
            previous_id = graph.id;
        }
        for (p, body) in self.permutations.iter().enumerate() {
            if layout == Layout::Tree {
                varint::put(&mut out, u64::from(body.level));
            }
            body.encode(base(body.level, sections.permutations[p]), layout, &mut out);
        }
        out
    }

    /// Decodes INDEX given the sections its directories point into.
    pub fn decode(raw: &[u8], sections: &Sections, index_offset: u64) -> Result<Self, FormatError> {
        let corrupt = |reason: String| FormatError::corrupt("INDEX", index_offset, reason);
        let cursor_error = |e: varint::CursorError| corrupt(format!("{} at byte {} of the decompressed index", e.reason, e.position));
        let layout = sections.layout();
        let mut cursor = Cursor::new(raw);
        // Heads are kept whole: bounded in all like the decompressed INDEX,
        // since each may share all of the last and so cost a few bytes here.
        let mut head_bytes = 0u64;
        let read_root = |cursor: &mut Cursor<'_>, blocks: ByteRange, first_item: u64, name: &str| -> Result<(u8, Place), FormatError> {
            let level = match layout {
                Layout::Flat => 0,
                Layout::Tree => cursor.varint().map_err(cursor_error)?,
            };
            if level > u64::from(MAX_DEPTH) {
                return Err(corrupt(format!("{name} directory has depth {level}, more than {MAX_DEPTH}")));
            }
            let section = if level == 0 { blocks } else { sections.directory.unwrap_or(blocks) };
            Ok((level as u8, Place { section, first_item, first_block: 0 }))
        };
        let (level, place) = read_root(&mut cursor, sections.dictionary, 1, "dictionary")?;
        let dictionary = Body::<Vec<u8>>::decode(&mut cursor, level, place, layout, usize::MAX, &mut head_bytes, MAX_INDEX_RAW_BYTES)
            .map_err(|reason| corrupt(format!("dictionary directory: {reason}")))?;
        check_tiles(&dictionary, sections.dictionary).map_err(|reason| corrupt(format!("dictionary directory: {reason}")))?;
        let term_end = dictionary.entries.last().map_or(1, Entry::item_end);

        let count = cursor.count(2).map_err(cursor_error)?;
        let mut graphs = Vec::with_capacity(count);
        let mut previous_id = 0u64;
        for i in 0..count {
            let delta = cursor.varint().map_err(cursor_error)?;
            let id = previous_id.checked_add(delta).filter(|&id| id > previous_id && id < term_end);
            let id = id.ok_or_else(|| corrupt(format!("graph {i} has an invalid id")))?;
            graphs.push(GraphEntry { id, quad_count: cursor.varint().map_err(cursor_error)? });
            previous_id = id;
        }

        let mut permutations: [Arc<Body<Key>>; 6] = Default::default();
        for (p, slot) in permutations.iter_mut().enumerate() {
            let name = Permutation::from_id(p as u8).map_or("?", Permutation::name);
            let (level, place) = read_root(&mut cursor, sections.permutations[p], 0, name)?;
            let body = Body::<Key>::decode(&mut cursor, level, place, layout, usize::MAX, &mut head_bytes, MAX_INDEX_RAW_BYTES)
                .map_err(|reason| corrupt(format!("{name} directory: {reason}")))?;
            check_tiles(&body, sections.permutations[p]).map_err(|reason| corrupt(format!("{name} directory: {reason}")))?;
            *slot = Arc::new(body);
        }
        if !cursor.is_empty() {
            return Err(corrupt("trailing bytes".into()));
        }
        Ok(Self { dictionary: Arc::new(dictionary), graphs, permutations })
    }
}

/// A root of level 0 lists blocks, which must tile their section exactly
/// (the flat decoder checks it as it goes; a §4.3 root places its first block
/// with `first_child_offset`).
fn check_tiles<H>(body: &Body<H>, section: ByteRange) -> Result<(), String> {
    if body.level > 0 {
        return Ok(());
    }
    let start = body.entries.first().map_or(section.offset, |e| e.range.offset);
    let end = body.entries.last().map_or(section.offset, |e| e.range.end());
    if start != section.offset || end != section.end() {
        return Err(format!("blocks cover bytes {start}..{end} of the section's {}..{}", section.offset, section.end()));
    }
    Ok(())
}

/// Positions of the entries of a body of a permutation's directory that may
/// hold a key whose leading components fall in `bounds`, one id range per
/// component in the permutation's order; `high` is the first key after the
/// body (`None`: unbounded). Entry i holds keys from its head up to
/// (excluding) the next entry's.
pub fn entries_for_bounds(entries: &[Entry<Key>], high: Option<&Key>, bounds: &[std::ops::Range<TermId>]) -> Vec<usize> {
    let Some(first) = bounds.first() else { return (0..entries.len()).collect() };
    if bounds.len() > 4 || bounds.iter().any(|b| b.is_empty()) {
        return Vec::new();
    }
    let low: Key = [first.start, 0, 0, 0];
    let last: Key = [first.end - 1, TermId::MAX, TermId::MAX, TermId::MAX];
    let start = entries.partition_point(|e| e.head <= low).saturating_sub(1);
    let end = entries.partition_point(|e| e.head <= last);
    (start..end.max(start))
        .filter(|&i| {
            let next = entries.get(i + 1).map(|e| &e.head).or(high);
            may_hold(Some(&entries[i].head[..]), next.map(|k| &k[..]), bounds)
        })
        .collect()
}

/// Whether some key `k` with `low ≤ k < high` (lexicographic; `None` is
/// unbounded) has `k[j]` in `bounds[j]` for every `j`.
fn may_hold(low: Option<&[TermId]>, high: Option<&[TermId]>, bounds: &[std::ops::Range<TermId>]) -> bool {
    let Some((bound, rest)) = bounds.split_first() else {
        return match (low, high) {
            (Some(low), Some(high)) => low < high,
            (None, Some(high)) => high.iter().any(|&c| c > 0),
            _ => true,
        };
    };
    let low_first = low.and_then(|l| l.first().copied());
    let high_first = high.and_then(|h| h.first().copied());
    // A first component strictly between the two leaves the rest free.
    let inner_start = match low_first {
        Some(l) => l.checked_add(1),
        None => Some(0),
    };
    if let Some(start) = inner_start {
        let end = high_first.unwrap_or(TermId::MAX).min(bound.end);
        let end_inclusive = high_first.is_none() && bound.end == TermId::MAX;
        if bound.start.max(start) < end || (end_inclusive && bound.start.max(start) <= end) {
            return true;
        }
    }
    if let Some(l) = low_first.filter(|l| bound.contains(l)) {
        let sub_high = if high_first == Some(l) { high.map(|h| &h[1..]) } else { None };
        if may_hold(low.map(|x| &x[1..]), sub_high, rest) {
            return true;
        }
    }
    high_first.is_some_and(|h| bound.contains(&h) && low_first != Some(h)) && may_hold(None, high.map(|x| &x[1..]), rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(first_keys: &[Key]) -> Vec<Entry<Key>> {
        let entries = first_keys.iter().map(|&first_key| PermutationEntry { range: ByteRange { offset: 0, length: 1 }, quad_count: 1, first_key }).collect();
        let mut permutations: [Vec<PermutationEntry>; 6] = Default::default();
        permutations[0] = entries;
        Index::flat(Vec::new(), Vec::new(), permutations).permutations[0].entries.clone()
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn entries_for_bounds_narrows_by_every_component() {
        // POS blocks: predicate 10 spans blocks 0–2 (objects 1…, 50…, 90…), predicate 11 block 3, 12 block 4.
        let blocks = entries(&[[10, 1, 0, 0], [10, 50, 0, 0], [10, 90, 0, 0], [11, 1, 0, 0], [12, 5, 0, 0]]);
        let select = |bounds: &[std::ops::Range<TermId>]| entries_for_bounds(&blocks, None, bounds);
        assert_eq!(select(&[10..11, 60..70]), [1]);
        assert_eq!(select(&[10..11, 50..51]), [1], "every (10, 50, …) key is at or after block 1's first key");
        assert_eq!(select(&[10..13, 95..96]), [2, 3, 4]);
        assert_eq!(select(&[11..12]), [2, 3], "block 2 may end with predicate 11");
        assert_eq!(select(&[10..12, 2..3]), [0, 3], "block 2 holds (10, ≥90) and (11, 0) at most");
        assert_eq!(select(&[13..20]), [4]);
        assert_eq!(select(&[1..5]), Vec::<usize>::new());
        assert_eq!(select(&[]).len(), 5);
        // A node's last entry ends where its parent's next entry starts.
        assert_eq!(entries_for_bounds(&blocks[..4], Some(&[12, 0, 0, 0]), &[12..13]), Vec::<usize>::new(), "keys below (12, 0, 0, 0)");
        assert_eq!(entries_for_bounds(&blocks[..4], Some(&[12, 5, 0, 0]), &[12..13]), [3]);
    }

    /// Term ids, term counts and quad counts beyond 2^32 (issue 17: a
    /// billion-triple file has ~2^28 terms, but ids and counts are u64 in the
    /// format and nothing may truncate them to 32 bits).
    #[test]
    fn issue_17_ids_and_counts_beyond_2_pow_32_round_trip() {
        const BIG: u64 = 1 << 32;
        let blocks = |offset: u64, lengths: &[u64]| -> Vec<ByteRange> {
            let mut at = offset;
            lengths.iter().map(|&length| { let range = ByteRange { offset: at, length }; at += length; range }).collect()
        };
        let dictionary_ranges = blocks(1_000, &[10, 20, 30]);
        let term_counts = [3 * BIG + 7, 1, BIG];
        let heads: [&[u8]; 3] = [b"\x01http://a/", b"\x01http://a/x", b"\x03zz"];
        let mut first_id = 1;
        let dictionary = (0..3)
            .map(|i| {
                let entry = DictionaryEntry { range: dictionary_ranges[i], first_id, term_count: term_counts[i], head: heads[i].to_vec() };
                first_id += term_counts[i];
                entry
            })
            .collect();
        let graphs = vec![GraphEntry { id: 5, quad_count: 2 }, GraphEntry { id: 3 * BIG + 9, quad_count: BIG + 1 }];
        let sections: [ByteRange; 6] = std::array::from_fn(|p| ByteRange { offset: 10_000 * (p as u64 + 1), length: 15 });
        let permutations = std::array::from_fn(|p| {
            let ranges = blocks(sections[p].offset, &[5, 10]);
            vec![
                PermutationEntry { range: ranges[0], quad_count: 2 * BIG, first_key: [1, BIG + 2, 3, 0] },
                PermutationEntry { range: ranges[1], quad_count: BIG + 3, first_key: [4 * BIG, 1, 5 * BIG, 3 * BIG + 9] },
            ]
        });
        let index = Index::flat(dictionary, graphs, permutations);
        let sections = Sections { dictionary: ByteRange { offset: 1_000, length: 60 }, permutations: sections, directory: None };
        let decoded = Index::decode(&index.encode(&sections), &sections, 96).unwrap();
        assert_eq!(decoded, index);
        assert_eq!(decoded.dictionary.entries[2].first_item, 3 * BIG + 9);
        assert_eq!(decoded.permutations[3].entries[1].first_item, 2 * BIG);
        let tree = Sections { directory: Some(ByteRange { offset: 500, length: 0 }), ..sections };
        assert_eq!(Index::decode(&index.encode(&tree), &tree, 96).unwrap(), index, "depth 0 in a file with a directory");
    }

    /// Found reading the decoder for issue 18: each dictionary head sharing
    /// all of the one before and adding a byte costs 5 bytes of INDEX but its
    /// whole length in memory, so 100 KB of INDEX asked for 200 MB of heads.
    #[test]
    fn issue_18_dictionary_heads_that_outgrow_the_index_limit_are_corrupt() {
        let count = 20_000u64;
        let mut raw = Vec::new();
        varint::put(&mut raw, count);
        for i in 0..count {
            for value in [0, 1, i, 1] {
                varint::put(&mut raw, value); // an empty block of one term whose head extends the last one
            }
            raw.push(b'a');
        }
        let error = Index::decode(&raw, &Sections::default(), 96).unwrap_err();
        assert_eq!(error.to_string(), "corrupt INDEX at byte 96: dictionary directory: heads take more than 67108864 bytes");
    }
}
