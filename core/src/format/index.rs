//! The INDEX section (FORMAT.md §4): where every block is and what it starts
//! with. With it in memory a reader plans any lookup without further reads.

use super::permutation::{Key, Permutation};
use super::MAX_INDEX_RAW_BYTES;
use super::varint::{self, Cursor};
use crate::{ByteRange, FormatError, TermId};

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

/// The decoded INDEX.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Index {
    /// Dictionary blocks in id order.
    pub dictionary: Vec<DictionaryEntry>,
    /// Named graphs in id order.
    pub graphs: Vec<GraphEntry>,
    /// Blocks of each permutation, indexed by [`Permutation::id`].
    pub permutations: [Vec<PermutationEntry>; 6],
}

impl Index {
    /// Encodes INDEX (decompressed). Block ranges are not stored: only
    /// lengths, since blocks of a section are contiguous.
    #[cfg(feature = "write")]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        varint::put(&mut out, self.dictionary.len() as u64);
        let mut previous_head: &[u8] = &[];
        for entry in &self.dictionary {
            let shared = previous_head.iter().zip(&entry.head).take_while(|(a, b)| a == b).count();
            for value in [entry.range.length, entry.term_count, shared as u64, (entry.head.len() - shared) as u64] {
                varint::put(&mut out, value);
            }
            out.extend_from_slice(&entry.head[shared..]);
            previous_head = &entry.head;
        }
        varint::put(&mut out, self.graphs.len() as u64);
        let mut previous_id = 0;
        for graph in &self.graphs {
            varint::put(&mut out, graph.id - previous_id);
            varint::put(&mut out, graph.quad_count);
            previous_id = graph.id;
        }
        for blocks in &self.permutations {
            varint::put(&mut out, blocks.len() as u64);
            let mut previous_a = 0;
            for block in blocks {
                let [a, b, c, g] = block.first_key;
                for value in [block.range.length, block.quad_count, a - previous_a, b, c, g] {
                    varint::put(&mut out, value);
                }
                previous_a = a;
            }
        }
        out
    }

    /// Decodes INDEX given the sections its blocks live in.
    pub fn decode(raw: &[u8], dictionary_section: ByteRange, permutation_sections: [ByteRange; 6], index_offset: u64) -> Result<Self, FormatError> {
        let corrupt = |reason: String| FormatError::corrupt("INDEX", index_offset, reason);
        let cursor_error = |e: varint::CursorError| corrupt(format!("{} at byte {} of the decompressed index", e.reason, e.position));
        let mut cursor = Cursor::new(raw);

        let count = cursor.count(4).map_err(cursor_error)?;
        let mut dictionary = Vec::with_capacity(count);
        let mut blocks = BlockLayout::new(dictionary_section);
        let mut next_id: TermId = 1;
        let mut previous_head: Vec<u8> = Vec::new();
        let mut head_bytes = 0u64;
        for i in 0..count {
            let length = cursor.varint().map_err(cursor_error)?;
            let term_count = cursor.varint().map_err(cursor_error)?;
            let shared = cursor.varint().map_err(cursor_error)?;
            let suffix_length = cursor.varint().map_err(cursor_error)?;
            let suffix = cursor.bytes(suffix_length).map_err(cursor_error)?;
            if shared > previous_head.len() as u64 || term_count == 0 {
                return Err(corrupt(format!("dictionary block {i} has an invalid head or no terms")));
            }
            // Heads are kept whole: bounded in all like the decompressed INDEX,
            // since each may share all of the last and so cost a few bytes here.
            head_bytes += shared + suffix_length;
            if head_bytes > MAX_INDEX_RAW_BYTES {
                return Err(corrupt(format!("dictionary heads take more than {MAX_INDEX_RAW_BYTES} bytes")));
            }
            let mut head = previous_head[..shared as usize].to_vec();
            head.extend_from_slice(suffix);
            if i > 0 && head <= previous_head {
                return Err(corrupt(format!("dictionary block {i} head is out of order")));
            }
            let range = blocks.next(length).ok_or_else(|| corrupt(format!("dictionary block {i} runs past its section")))?;
            dictionary.push(DictionaryEntry { range, first_id: next_id, term_count, head: head.clone() });
            next_id = next_id.checked_add(term_count).ok_or_else(|| corrupt("term count overflows".into()))?;
            previous_head = head;
        }
        blocks.finish().map_err(|reason| corrupt(format!("dictionary {reason}")))?;

        let count = cursor.count(2).map_err(cursor_error)?;
        let mut graphs = Vec::with_capacity(count);
        let mut previous_id = 0u64;
        for i in 0..count {
            let delta = cursor.varint().map_err(cursor_error)?;
            let id = previous_id.checked_add(delta).filter(|&id| id > previous_id && id < next_id);
            let id = id.ok_or_else(|| corrupt(format!("graph {i} has an invalid id")))?;
            graphs.push(GraphEntry { id, quad_count: cursor.varint().map_err(cursor_error)? });
            previous_id = id;
        }

        let mut permutations: [Vec<PermutationEntry>; 6] = Default::default();
        for (p, section) in permutation_sections.into_iter().enumerate() {
            let count = cursor.count(6).map_err(cursor_error)?;
            let mut blocks = BlockLayout::new(section);
            let mut previous_a = 0u64;
            let entries = &mut permutations[p];
            entries.reserve(count);
            for i in 0..count {
                let mut values = [0u64; 6];
                for value in values.iter_mut() {
                    *value = cursor.varint().map_err(cursor_error)?;
                }
                let [length, quad_count, a_delta, b, c, g] = values;
                let name = Permutation::from_id(p as u8).map_or("?", Permutation::name);
                let a = previous_a.checked_add(a_delta).ok_or_else(|| corrupt(format!("{name} block {i} key overflows")))?;
                let first_key = [a, b, c, g];
                if entries.last().is_some_and(|last: &PermutationEntry| last.first_key >= first_key) || quad_count == 0 {
                    return Err(corrupt(format!("{name} block {i} is out of order or empty")));
                }
                let range = blocks.next(length).ok_or_else(|| corrupt(format!("{name} block {i} runs past its section")))?;
                entries.push(PermutationEntry { range, quad_count, first_key });
                previous_a = a;
            }
            blocks.finish().map_err(|reason| corrupt(format!("permutation {p} {reason}")))?;
        }
        if !cursor.is_empty() {
            return Err(corrupt("trailing bytes".into()));
        }
        Ok(Self { dictionary, graphs, permutations })
    }

    /// The dictionary block that would hold an encoded term (last head ≤ term).
    pub fn dictionary_block_for_term(&self, term: &[u8]) -> Option<usize> {
        self.dictionary.partition_point(|entry| entry.head.as_slice() <= term).checked_sub(1)
    }

    /// The dictionary block holding an id.
    pub fn dictionary_block_for_id(&self, id: TermId) -> Option<usize> {
        let block = self.dictionary.partition_point(|entry| entry.first_id <= id).checked_sub(1)?;
        let entry = &self.dictionary[block];
        (id - entry.first_id < entry.term_count).then_some(block)
    }

    /// Indexes of the blocks of `permutation` that may hold keys starting with `prefix`.
    pub fn blocks_for_prefix(&self, permutation: Permutation, prefix: &[TermId]) -> std::ops::Range<usize> {
        let blocks = &self.permutations[usize::from(permutation.id())];
        let mut low: Key = [0; 4];
        let mut high: Key = [TermId::MAX; 4];
        low[..prefix.len()].copy_from_slice(prefix);
        high[..prefix.len()].copy_from_slice(prefix);
        let first = blocks.partition_point(|b| b.first_key <= low).saturating_sub(1);
        let last = blocks.partition_point(|b| b.first_key <= high);
        first..last.max(first)
    }
}

impl Index {
    /// Indexes of the blocks of `permutation` whose keys may start with a
    /// first component in `first` (speculative reads for a term whose exact id
    /// is not known yet, only the id range of its dictionary block).
    pub fn blocks_for_first_range(&self, permutation: Permutation, first: std::ops::Range<TermId>) -> std::ops::Range<usize> {
        let blocks = &self.permutations[usize::from(permutation.id())];
        if first.is_empty() {
            return 0..0;
        }
        let low: Key = [first.start, 0, 0, 0];
        let high: Key = [first.end - 1, TermId::MAX, TermId::MAX, TermId::MAX];
        let start = blocks.partition_point(|b| b.first_key <= low).saturating_sub(1);
        let end = blocks.partition_point(|b| b.first_key <= high);
        start..end.max(start)
    }
}

impl Index {
    /// Indexes of the blocks of `permutation` that may hold a key whose
    /// leading components fall in `bounds`, one id range per component in the
    /// permutation's order. A term whose id is not known yet is bounded by the
    /// id range of its dictionary block, a known one by `id..id + 1`: this is
    /// what a pattern would read, planned before its terms' ids arrive.
    pub fn blocks_for_bounds(&self, permutation: Permutation, bounds: &[std::ops::Range<TermId>]) -> Vec<usize> {
        let blocks = &self.permutations[usize::from(permutation.id())];
        let Some(first) = bounds.first() else { return (0..blocks.len()).collect() };
        if bounds.len() > 4 || bounds.iter().any(|b| b.is_empty()) {
            return Vec::new();
        }
        self.blocks_for_first_range(permutation, first.clone())
            .filter(|&i| {
                // Block i holds keys from its first key up to (excluding) the next block's.
                let high = blocks.get(i + 1).map(|next| &next.first_key[..]);
                may_hold(Some(&blocks[i].first_key[..]), high, bounds)
            })
            .collect()
    }
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

/// Walks contiguous blocks of a section, checking they stay inside it.
struct BlockLayout {
    section: ByteRange,
    used: u64,
}

impl BlockLayout {
    fn new(section: ByteRange) -> Self {
        Self { section, used: 0 }
    }

    fn next(&mut self, length: u64) -> Option<ByteRange> {
        let end = self.used.checked_add(length).filter(|&end| end <= self.section.length)?;
        let range = ByteRange { offset: self.section.offset + self.used, length };
        self.used = end;
        Some(range)
    }

    fn finish(self) -> Result<(), String> {
        if self.used == self.section.length {
            Ok(())
        } else {
            Err(format!("blocks cover {} of the section's {} bytes", self.used, self.section.length))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(first_keys: &[Key]) -> Index {
        let mut index = Index::default();
        let entries = first_keys.iter().map(|&first_key| PermutationEntry { range: ByteRange { offset: 0, length: 1 }, quad_count: 1, first_key }).collect();
        index.permutations[usize::from(Permutation::Pos.id())] = entries;
        index
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn blocks_for_bounds_narrows_by_every_component() {
        // POS blocks: predicate 10 spans blocks 0–2 (objects 1…, 50…, 90…), predicate 11 block 3, 12 block 4.
        let index = index(&[[10, 1, 0, 0], [10, 50, 0, 0], [10, 90, 0, 0], [11, 1, 0, 0], [12, 5, 0, 0]]);
        let pos = Permutation::Pos;
        assert_eq!(index.blocks_for_bounds(pos, &[10..11, 60..70]), [1]);
        assert_eq!(index.blocks_for_bounds(pos, &[10..11, 50..51]), [1], "every (10, 50, …) key is at or after block 1's first key");
        assert_eq!(index.blocks_for_bounds(pos, &[10..13, 95..96]), [2, 3, 4]);
        assert_eq!(index.blocks_for_bounds(pos, &[11..12]), [2, 3], "block 2 may end with predicate 11");
        assert_eq!(index.blocks_for_bounds(pos, &[10..12, 2..3]), [0, 3], "block 2 holds (10, ≥90) and (11, 0) at most");
        assert_eq!(index.blocks_for_bounds(pos, &[13..20]), [4]);
        assert_eq!(index.blocks_for_bounds(pos, &[1..5]), Vec::<usize>::new());
        assert_eq!(index.blocks_for_bounds(pos, &[]).len(), 5);
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
        let index = Index { dictionary, graphs, permutations };
        let dictionary_section = ByteRange { offset: 1_000, length: 60 };
        let decoded = Index::decode(&index.encode(), dictionary_section, sections, 96).unwrap();
        assert_eq!(decoded, index);
        assert_eq!(decoded.dictionary[2].first_id, 3 * BIG + 9);
        assert_eq!(decoded.dictionary_block_for_id(3 * BIG + 8), Some(1));
        assert_eq!(decoded.dictionary_block_for_id(4 * BIG + 8), Some(2));
        assert_eq!(decoded.dictionary_block_for_id(4 * BIG + 9), None);
        assert_eq!(decoded.blocks_for_prefix(Permutation::Pos, &[4 * BIG + 1]), 1..2);
        assert_eq!(decoded.blocks_for_prefix(Permutation::Pos, &[1, BIG + 2]), 0..1);
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
        let section = ByteRange { offset: 0, length: 0 };
        let error = Index::decode(&raw, section, [section; 6], 96).unwrap_err();
        assert_eq!(error.to_string(), "corrupt INDEX at byte 96: dictionary heads take more than 67108864 bytes");
    }
}
