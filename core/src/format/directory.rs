//! Directory bodies and nodes (FORMAT.md §4.1, §4.3): one codec for the seven
//! directories of INDEX, flat or as a tree. A *body* lists children (blocks
//! at level 0, nodes of the DIRECTORY section above) with their lengths,
//! counts and first terms or keys; a *node* is a sealed body read like a
//! block. Decoding places every child (absolute range, first id or quad, first
//! block number) and checks what one body can: order, bounds, overflow.

use super::permutation::Key;
use super::varint::{self, Cursor};
use crate::ByteRange;

/// FORMAT.md §4.3: the deepest tree a reader accepts.
pub const MAX_DEPTH: u8 = 3;
/// FORMAT.md §4.3: most entries of a node…
pub const MAX_NODE_ENTRIES: usize = 4096;
/// … and most sealed bytes.
pub const MAX_NODE_SEALED_BYTES: u64 = 65_536;
/// The fewest entries [`build_tree`] spreads the root's children to (fewer
/// only when nodes are forced smaller): a node's seal costs a few dozen bytes.
#[cfg(feature = "write")]
const MIN_SPREAD_ENTRIES: usize = 128;

/// What a directory's entries start with: the dictionary's first terms
/// (encoded, front-coded against the previous head) or a permutation's first
/// keys (`a` as a delta). The first entry of a body is coded against
/// `Self::default()`: the empty string, the key of zeros.
pub trait Head: Clone + Ord + Default + std::fmt::Debug {
    /// Appends this head, coded against the previous one of its body.
    fn put(&self, previous: &Self, out: &mut Vec<u8>);
    /// Reads a head coded against `previous`.
    fn take(cursor: &mut Cursor<'_>, previous: &Self) -> Result<Self, String>;
    /// Bytes of memory it holds beyond its own size (bounds decoding).
    fn heap_bytes(&self) -> u64;
}

impl Head for Vec<u8> {
    fn put(&self, previous: &Self, out: &mut Vec<u8>) {
        let shared = previous.iter().zip(self).take_while(|(a, b)| a == b).count();
        varint::put(out, shared as u64);
        varint::put(out, (self.len() - shared) as u64);
        out.extend_from_slice(&self[shared..]);
    }

    fn take(cursor: &mut Cursor<'_>, previous: &Self) -> Result<Self, String> {
        let shared = cursor.varint().map_err(cursor_reason)?;
        let suffix_length = cursor.varint().map_err(cursor_reason)?;
        let suffix = cursor.bytes(suffix_length).map_err(cursor_reason)?;
        let kept = previous.get(..usize::try_from(shared).unwrap_or(usize::MAX)).ok_or("head shares more bytes than the previous head has")?;
        let mut head = Vec::with_capacity(kept.len() + suffix.len());
        head.extend_from_slice(kept);
        head.extend_from_slice(suffix);
        Ok(head)
    }

    fn heap_bytes(&self) -> u64 {
        self.len() as u64
    }
}

impl Head for Key {
    fn put(&self, previous: &Self, out: &mut Vec<u8>) {
        let [a, b, c, g] = *self;
        for value in [a - previous[0], b, c, g] {
            varint::put(out, value);
        }
    }

    fn take(cursor: &mut Cursor<'_>, previous: &Self) -> Result<Self, String> {
        let mut values = [0u64; 4];
        for value in values.iter_mut() {
            *value = cursor.varint().map_err(cursor_reason)?;
        }
        let [a_delta, b, c, g] = values;
        let a = previous[0].checked_add(a_delta).ok_or("key overflows")?;
        Ok([a, b, c, g])
    }

    fn heap_bytes(&self) -> u64 {
        0
    }
}

fn cursor_reason(error: varint::CursorError) -> String {
    error.reason.to_string()
}

/// One child of a body: a block (level 0) or a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<H> {
    /// Absolute byte range of the child.
    pub range: ByteRange,
    /// Id of its first term (dictionary) or ordinal of its first quad (permutation).
    pub first_item: u64,
    /// Terms or quads under it.
    pub item_count: u64,
    /// Number of its first block in the block section (FORMAT.md §4.3).
    pub first_block: usize,
    /// Blocks under it (1 for a block).
    pub block_count: usize,
    /// Its first term or key.
    pub head: H,
}

impl<H> Entry<H> {
    /// One past its last item.
    pub fn item_end(&self) -> u64 {
        self.first_item + self.item_count
    }

    /// One past its last block number.
    pub fn block_end(&self) -> usize {
        self.first_block + self.block_count
    }
}

/// A decoded body: the root of a directory (in INDEX) or a node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Body<H> {
    /// 0 when the children are blocks.
    pub level: u8,
    /// The children, in order.
    pub entries: Vec<Entry<H>>,
}

/// Where a body's children lie and how they are numbered: the parent's
/// entry for a node, the section and the start for a root.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    /// The section holding the children: DIRECTORY at level ≥ 1, the blocks' section at level 0.
    pub section: ByteRange,
    /// Id or quad ordinal of the first item (1 for the dictionary's root, 0 for a permutation's).
    pub first_item: u64,
    /// Number of the first block.
    pub first_block: usize,
}

/// How a body is laid out: flat (FORMAT.md §4.1, no `first_child_offset`,
/// children tile their section) or as §4.3 writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// §4.1: a file without required feature bit 1.
    Flat,
    /// §4.3: with bit 1.
    Tree,
}

impl<H: Head> Body<H> {
    /// Terms or quads under the body.
    pub fn item_count(&self) -> u64 {
        self.entries.iter().map(|e| e.item_count).sum()
    }

    /// Blocks under the body.
    pub fn block_count(&self) -> usize {
        self.entries.iter().map(|e| e.block_count).sum()
    }

    /// Appends the body; children must be contiguous, the first at
    /// `section.offset + first_child_offset`.
    #[cfg(feature = "write")]
    pub fn encode(&self, section_offset: u64, layout: Layout, out: &mut Vec<u8>) {
        varint::put(out, self.entries.len() as u64);
        if layout == Layout::Tree {
            varint::put(out, self.entries.first().map_or(0, |e| e.range.offset - section_offset));
        }
        let mut previous = H::default();
        for entry in &self.entries {
            varint::put(out, entry.range.length);
            varint::put(out, entry.item_count);
            if self.level > 0 {
                varint::put(out, entry.block_count as u64);
            }
            entry.head.put(&previous, out);
            previous = entry.head.clone();
        }
    }

    /// Decodes a body of `level` from `cursor`. Errors are reasons; the
    /// caller names the part (INDEX, a node) and its offset. `max_entries`
    /// bounds a node; `head_bytes` adds up the heads' bytes across bodies,
    /// which must stay under `max_head_bytes`.
    pub fn decode(cursor: &mut Cursor<'_>, level: u8, place: Place, layout: Layout, max_entries: usize, head_bytes: &mut u64, max_head_bytes: u64) -> Result<Self, String> {
        let at = |cursor: &Cursor<'_>, reason: String| format!("{reason} at byte {} of the decompressed directory", cursor.position());
        let count = cursor.count(3).map_err(|e| at(cursor, e.reason.into()))?;
        if count > max_entries {
            return Err(format!("{count} entries, more than {max_entries}"));
        }
        let first_child_offset = match layout {
            Layout::Flat => 0,
            Layout::Tree => cursor.varint().map_err(|e| at(cursor, e.reason.into()))?,
        };
        let mut used = first_child_offset;
        let mut first_item = place.first_item;
        let mut first_block = place.first_block;
        let mut previous = H::default();
        let mut entries: Vec<Entry<H>> = Vec::with_capacity(count);
        for i in 0..count {
            let length = cursor.varint().map_err(|e| at(cursor, e.reason.into()))?;
            let item_count = cursor.varint().map_err(|e| at(cursor, e.reason.into()))?;
            let block_count = if level > 0 { cursor.varint().map_err(|e| at(cursor, e.reason.into()))? } else { 1 };
            let head = H::take(cursor, &previous).map_err(|reason| at(cursor, format!("entry {i}: {reason}")))?;
            *head_bytes += head.heap_bytes();
            if *head_bytes > max_head_bytes {
                return Err(format!("heads take more than {max_head_bytes} bytes"));
            }
            if item_count == 0 || block_count == 0 {
                return Err(format!("entry {i} is empty"));
            }
            if i > 0 && head <= previous {
                return Err(format!("entry {i} is out of order"));
            }
            let end = used.checked_add(length).filter(|&end| end <= place.section.length).ok_or_else(|| format!("entry {i} runs past its section"))?;
            let block_count = usize::try_from(block_count).map_err(|_| format!("entry {i} has more blocks than this platform numbers"))?;
            let range = ByteRange { offset: place.section.offset + used, length };
            entries.push(Entry { range, first_item, item_count, first_block, block_count, head: head.clone() });
            first_item = first_item.checked_add(item_count).ok_or_else(|| format!("counts add up to more than 2^64 at entry {i}"))?;
            first_block = first_block.checked_add(block_count).ok_or_else(|| format!("block counts overflow at entry {i}"))?;
            used = end;
            previous = head;
        }
        if layout == Layout::Flat && used != place.section.length {
            return Err(format!("blocks cover {used} of the section's {} bytes", place.section.length));
        }
        Ok(Self { level, entries })
    }

    /// The last entry `pick` holds for, in a body ordered so that it holds
    /// for a prefix of the entries (`partition_point`).
    pub fn last_where(&self, pick: impl Fn(&Entry<H>) -> bool) -> Option<usize> {
        self.entries.partition_point(pick).checked_sub(1)
    }
}

/// Encodes a node (FORMAT.md §4.3): its level, then its body, decompressed
/// (the writer seals it like a block).
#[cfg(feature = "write")]
pub fn encode_node<H: Head>(body: &Body<H>, section_offset: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint::put(&mut out, u64::from(body.level));
    body.encode(section_offset, Layout::Tree, &mut out);
    out
}

/// Decodes a node's decompressed bytes, checking it against its parent's
/// `entry`: its level, first head, and counts. `place` is where its children
/// lie (DIRECTORY, or the block section at level 0).
pub fn decode_node<H: Head>(raw: &[u8], level: u8, entry: &Entry<H>, section: ByteRange) -> Result<Body<H>, String> {
    let mut cursor = Cursor::new(raw);
    let found = cursor.varint().map_err(cursor_reason)?;
    if found != u64::from(level) {
        return Err(format!("is level {found}, its parent says {level}"));
    }
    let place = Place { section, first_item: entry.first_item, first_block: entry.first_block };
    let body = Body::decode(&mut cursor, level, place, Layout::Tree, MAX_NODE_ENTRIES, &mut 0, u64::MAX)?;
    if !cursor.is_empty() {
        return Err("trailing bytes".into());
    }
    let Some(first) = body.entries.first() else { return Err("has no entries".into()) };
    if first.head != entry.head {
        return Err("its first head is not the one its parent gives".into());
    }
    let (items, blocks) = body.entries.last().map_or((0, 0), |last| (last.item_end() - entry.first_item, last.block_end() - entry.first_block));
    if items != entry.item_count || blocks != entry.block_count {
        return Err(format!("holds {items} items in {blocks} blocks, its parent says {} in {}", entry.item_count, entry.block_count));
    }
    Ok(body)
}

/// Builds a directory of the least depth whose root has at most
/// `root_entries` entries (FORMAT.md §4.3, writer guidance): the level-0
/// `body` lists the blocks (ranges relative to their section); each level
/// groups the one below into nodes of at most `node_entries` entries (fewer
/// when a node would seal past [`MAX_NODE_SEALED_BYTES`]), sealed and
/// appended to `directory` (ranges relative to the DIRECTORY section).
/// With `spread`, the level under the root is spread over as many nodes as
/// the root may list (of at least [`MIN_SPREAD_ENTRIES`]): the root rides in
/// the open's first read whatever its size, and every lookup then reads a
/// smaller node (the dictionary's; a permutation's nodes stay wide, so that
/// the id range of one dictionary node reaches few of them, READ-PATH.md).
/// Returns the root and the number of nodes written. Stops at depth [`MAX_DEPTH`].
#[cfg(feature = "write")]
pub fn build_tree<H: Head>(mut body: Body<H>, node_entries: usize, root_entries: usize, spread: bool, directory: &mut Vec<u8>) -> std::io::Result<(Body<H>, usize)> {
    let mut nodes = 0;
    let node_entries = node_entries.clamp(2, MAX_NODE_ENTRIES);
    let root_entries = root_entries.max(1);
    while body.entries.len() > root_entries && body.level < MAX_DEPTH {
        let per_node = match spread && body.entries.len().div_ceil(node_entries) <= root_entries {
            true => body.entries.len().div_ceil(root_entries).max(MIN_SPREAD_ENTRIES).min(node_entries),
            false => node_entries,
        };
        let mut parents = Vec::new();
        let mut rest = &body.entries[..];
        while !rest.is_empty() {
            let mut take = per_node.min(rest.len());
            let sealed = loop {
                let node = Body { level: body.level, entries: rest[..take].to_vec() };
                let sealed = super::block::seal(&encode_node(&node, 0))?;
                if sealed.len() as u64 <= MAX_NODE_SEALED_BYTES || take == 1 {
                    break sealed;
                }
                take /= 2;
            };
            let (chunk, after) = rest.split_at(take);
            rest = after;
            let range = ByteRange { offset: directory.len() as u64, length: sealed.len() as u64 };
            directory.extend_from_slice(&sealed);
            nodes += 1;
            let first = &chunk[0];
            let item_count = chunk.iter().map(|e| e.item_count).sum();
            let block_count = chunk.iter().map(|e| e.block_count).sum();
            parents.push(Entry { range, first_item: first.first_item, item_count, first_block: first.first_block, block_count, head: first.head.clone() });
        }
        body = Body { level: body.level + 1, entries: parents };
    }
    Ok((body, nodes))
}

#[cfg(all(test, feature = "write"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const BIG: u64 = 1 << 32;

    fn tree_place(section: ByteRange) -> Place {
        Place { section, first_item: 0, first_block: 0 }
    }

    /// FORMAT.md §4.3's example: a POS directory of depth 1, its root body
    /// byte for byte.
    #[test]
    fn spec_example_bytes() {
        let directory = ByteRange { offset: 50_000, length: 8_000 };
        let bytes = [0x02, 0x00, 0x84, 0x20, 0xA0, 0x9C, 0x01, 0x78, 0x07, 0x01, 0x00, 0x00, 0xBC, 0x1E, 0xD0, 0x8C, 0x01, 0x64, 0x02, 0x05, 0x00, 0x00];
        let body = Body::<Key>::decode(&mut Cursor::new(&bytes), 1, tree_place(directory), Layout::Tree, usize::MAX, &mut 0, u64::MAX).unwrap();
        let expected = vec![
            Entry { range: ByteRange { offset: 50_000, length: 4_100 }, first_item: 0, item_count: 20_000, first_block: 0, block_count: 120, head: [7, 1, 0, 0] },
            Entry { range: ByteRange { offset: 54_100, length: 3_900 }, first_item: 20_000, item_count: 18_000, first_block: 120, block_count: 100, head: [9, 5, 0, 0] },
        ];
        assert_eq!(body.entries, expected);
        let mut out = Vec::new();
        body.encode(directory.offset, Layout::Tree, &mut out);
        assert_eq!(out, bytes);
    }

    /// Ids, counts and keys beyond 2^32 survive a node's round trip, and a
    /// node is checked against its parent's entry.
    #[test]
    fn issue_17_node_counts_beyond_2_pow_32() {
        let directory = ByteRange { offset: 1_000, length: 1 << 20 };
        let blocks = ByteRange { offset: 5 << 40, length: 1 << 40 };
        let entries = vec![
            Entry { range: ByteRange { offset: blocks.offset + 10, length: 20 }, first_item: 3 * BIG, item_count: 2 * BIG, first_block: 7, block_count: 1, head: b"\x01http://a/x".to_vec() },
            Entry { range: ByteRange { offset: blocks.offset + 30, length: 40 }, first_item: 5 * BIG, item_count: BIG + 1, first_block: 8, block_count: 1, head: b"\x01http://a/y".to_vec() },
        ];
        let node = Body { level: 0, entries };
        let raw = encode_node(&node, blocks.offset);
        let parent = Entry { range: ByteRange { offset: directory.offset, length: 99 }, first_item: 3 * BIG, item_count: 3 * BIG + 1, first_block: 7, block_count: 2, head: b"\x01http://a/x".to_vec() };
        assert_eq!(decode_node(&raw, 0, &parent, blocks).unwrap(), node);
        assert_eq!(node.entries[1].item_end(), 6 * BIG + 1);

        let wrong_count = Entry { item_count: 3 * BIG, ..parent.clone() };
        assert_eq!(decode_node(&raw, 0, &wrong_count, blocks).unwrap_err(), format!("holds {} items in 2 blocks, its parent says {} in 2", 3 * BIG + 1, 3 * BIG));
        let wrong_head = Entry { head: b"\x01http://a/w".to_vec(), ..parent.clone() };
        assert_eq!(decode_node(&raw, 0, &wrong_head, blocks).unwrap_err(), "its first head is not the one its parent gives");
        assert_eq!(decode_node(&raw, 1, &parent, blocks).unwrap_err(), "is level 0, its parent says 1");

        // A level-1 body with keys and block counts past 2^32.
        let keys = Body {
            level: 1,
            entries: vec![
                Entry { range: ByteRange { offset: directory.offset, length: 5 }, first_item: 0, item_count: 4 * BIG, first_block: 0, block_count: 1 << 20, head: [BIG, 2, 3, 0] },
                Entry { range: ByteRange { offset: directory.offset + 5, length: 6 }, first_item: 4 * BIG, item_count: 1, first_block: 1 << 20, block_count: 1, head: [3 * BIG, 1, 5 * BIG, 9] },
            ],
        };
        let mut out = Vec::new();
        keys.encode(directory.offset, Layout::Tree, &mut out);
        let decoded = Body::<Key>::decode(&mut Cursor::new(&out), 1, tree_place(directory), Layout::Tree, MAX_NODE_ENTRIES, &mut 0, u64::MAX).unwrap();
        assert_eq!(decoded, keys);
        assert_eq!((decoded.item_count(), decoded.block_count()), (4 * BIG + 1, (1 << 20) + 1));
    }

    /// With `spread`, the level under the root is spread over as many nodes
    /// as the root may list, of at least MIN_SPREAD_ENTRIES; lower levels are
    /// full; forced small nodes keep their size.
    #[test]
    fn issue_17_the_level_under_the_root_is_spread() {
        let blocks = |n: u64| Body { level: 0, entries: (0..n).map(|i| Entry { range: ByteRange { offset: i, length: 1 }, first_item: i, item_count: 1, first_block: i as usize, block_count: 1, head: [i, 0, 0, 0] }).collect() };
        let shape = |n: u64, node_entries: usize, root_entries: usize| {
            let (root, nodes) = build_tree(blocks(n), node_entries, root_entries, true, &mut Vec::new()).unwrap();
            (root.level, root.entries.len(), nodes, root.entries.iter().map(|e| e.block_count).max().unwrap())
        };
        // 61,458 blocks, 512 entries a node, a root of 128: 121 full nodes before, 128 of 481 now.
        assert_eq!(shape(61_458, 512, 128), (1, 128, 128, 481));
        // Few blocks: nodes of 128, not of 5.
        assert_eq!(shape(616, 512, 128), (1, 5, 5, 128));
        // Depth 2: level 1 full (391 nodes of 512), the level under the root spread (4 of 128).
        assert_eq!(shape(200_000, 512, 128), (2, 4, 391 + 4, 128 * 512));
        // Forced small nodes (tests, fuzzing) are not spread.
        assert_eq!(shape(9, 2, 2), (3, 2, 5 + 3 + 2, 8));
        // Without `spread`, nodes are full.
        let (root, nodes) = build_tree(blocks(61_458), 512, 128, false, &mut Vec::new()).unwrap();
        assert_eq!((root.entries.len(), nodes), (121, 121));
    }

    #[test]
    fn rejects_bad_bodies() {
        let section = ByteRange { offset: 0, length: 100 };
        let decode = |bytes: &[u8], layout| Body::<Key>::decode(&mut Cursor::new(bytes), 0, tree_place(section), layout, 4, &mut 0, u64::MAX);
        assert_eq!(decode(&[5, 0], Layout::Tree).unwrap_err(), "count larger than the bytes that follow at byte 1 of the decompressed directory");
        assert_eq!(decode(&[2, 0, 10, 1, 5, 0, 0, 0, 10, 1, 0, 0, 0, 0], Layout::Tree).unwrap_err(), "entry 1 is out of order");
        assert_eq!(decode(&[1, 95, 10, 1, 5, 0, 0, 0], Layout::Tree).unwrap_err(), "entry 0 runs past its section");
        assert_eq!(decode(&[1, 0, 10, 0, 5, 0, 0, 0], Layout::Tree).unwrap_err(), "entry 0 is empty");
        assert_eq!(decode(&[1, 10, 1, 5, 0, 0, 0], Layout::Flat).unwrap_err(), "blocks cover 10 of the section's 100 bytes");
        let five = [5, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0];
        assert_eq!(decode(&five, Layout::Tree).unwrap_err(), "5 entries, more than 4");
        let mut raw = vec![0];
        let body = Body::<Key> { level: 1, entries: Vec::new() };
        body.encode(0, Layout::Tree, &mut raw);
        let parent = Entry { range: section, first_item: 0, item_count: 1, first_block: 0, block_count: 1, head: [0; 4] };
        assert_eq!(decode_node(&raw[..], 1, &parent, section).unwrap_err(), "is level 0, its parent says 1");
        raw[0] = 1;
        assert_eq!(decode_node(&raw[..], 1, &parent, section).unwrap_err(), "has no entries");
    }
}
