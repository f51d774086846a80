//! Checksums made to agree with arbitrary bytes. Every structure of a `.rete`
//! file carries a checksum (header, INDEX, CARD, SUMMARY, each sealed block),
//! so random bytes almost never get past the first check; a fuzzer cannot
//! guess XXH3. [`repair`] recomputes each checksum the bytes reach, in the
//! order a reader meets them, so the decoders behind the checks see the
//! fuzzer's bytes too. The unrepaired bytes are read as well: the checks
//! themselves stay under test.

use rete_core::format::header::{FIXED_HEADER_BYTES, HEADER_CHECKSUM_RANGE, Header, MAGIC, SECTION_ENTRY_BYTES, header_checksum};
use rete_core::format::write::{ContentHasher, stamp_content_hash};
use rete_core::read::{BlockKey, Directory, decode_index};
use rete_core::{Permutation, SectionKind, Store};
use xxhash_rust::xxh3::xxh3_64;

/// Rewrites the checksums of `bytes` (and the header's file length) so that
/// they agree with its content. Returns whether anything changed.
pub fn repair(bytes: &mut [u8]) -> bool {
    let before = xxh3_64(bytes);
    if bytes.len() < FIXED_HEADER_BYTES || bytes[..8] != MAGIC {
        return false;
    }
    let length = bytes.len() as u64;
    bytes[0x20..0x28].copy_from_slice(&length.to_le_bytes());
    let section_count = u32::from_le_bytes([bytes[0x40], bytes[0x41], bytes[0x42], bytes[0x43]]) as usize;
    let Some(header_length) = section_count.checked_mul(SECTION_ENTRY_BYTES).and_then(|n| n.checked_add(FIXED_HEADER_BYTES)).filter(|&n| n <= bytes.len()) else {
        return xxh3_64(bytes) != before;
    };
    bytes[0x0C..0x10].copy_from_slice(&(header_length as u32).to_le_bytes());

    // Section checksums, then the header's (it covers the table).
    for i in 0..section_count {
        let at = FIXED_HEADER_BYTES + SECTION_ENTRY_BYTES * i;
        let offset = u64_at(bytes, at + 8) as usize;
        let section_length = u64_at(bytes, at + 16) as usize;
        if let Some(section) = offset.checked_add(section_length).and_then(|end| bytes.get(offset..end)) {
            let checksum = xxh3_64(section);
            bytes[at + 32..at + 40].copy_from_slice(&checksum.to_le_bytes());
        }
    }
    seal_header(bytes, header_length);

    // Block trailers, where INDEX says the blocks are.
    let Ok(header) = Header::decode(bytes, Some(length)) else { return xxh3_64(bytes) != before };
    let index_bytes = header.section(SectionKind::Index).and_then(|section| bytes.get(section.offset as usize..(section.offset + section.length) as usize));
    if let Some(Ok(index)) = index_bytes.map(|index_bytes| decode_index(&header, index_bytes)) {
        let store = Store::from_parts(Vec::new(), header.clone(), index, rete_core::read::BlockCache::new(0));
        let mut keys: Vec<BlockKey> = (0..store.block_count(Directory::Dictionary)).map(BlockKey::Dictionary).collect();
        for permutation in Permutation::ALL {
            keys.extend((0..store.block_count(Directory::Permutation(permutation))).map(|n| BlockKey::Permutation(permutation, n)));
        }
        for key in keys {
            if let Some(range) = store.block_range(key) {
                seal_block(bytes, range.offset as usize, range.length as usize);
            }
        }
    }
    seal_members(bytes, &header);

    let mut hasher = ContentHasher::default();
    hasher.update(bytes);
    stamp_content_hash(&mut bytes[..header_length], hasher.finish());
    xxh3_64(bytes) != before
}

/// Member page directories and pages (FORMAT.md §11), found through the
/// SUMMARY's nodes: each is a sealed block.
fn seal_members(bytes: &mut [u8], header: &Header) {
    let (Some(summary), Some(members)) = (header.section(SectionKind::Summary), header.section(SectionKind::Members)) else { return };
    let Some(frame) = bytes.get(summary.offset as usize..(summary.offset + summary.length) as usize) else { return };
    let Ok(raw) = rete_core::format::block::decompress(frame, rete_core::format::summary::MAX_SUMMARY_BYTES * 64) else { return };
    let Ok(summary) = serde_json::from_slice::<rete_core::format::summary::Summary>(&raw) else { return };
    for node in summary.levels.iter().flat_map(|level| &level.nodes) {
        let pages = node.members;
        let Some(directory_at) = members.offset.checked_add(pages.offset) else { continue };
        let Some(directory_end) = directory_at.checked_add(pages.directory_bytes).filter(|&end| end <= members.offset + members.length) else { continue };
        seal_block(bytes, directory_at as usize, pages.directory_bytes as usize);
        let sealed = &bytes[directory_at as usize..directory_end as usize];
        let Ok(raw) = rete_core::format::block::open(sealed, &String::new, 0) else { continue };
        let Ok(entries) = rete_core::format::summary::decode_directory(&raw, 0) else { continue };
        for (start, page_length) in entries {
            if let Some(page_at) = directory_end.checked_add(start).filter(|at| at.saturating_add(page_length) <= members.offset + members.length) {
                seal_block(bytes, page_at as usize, page_length as usize);
            }
        }
    }
}

/// Writes the checksum trailer of the sealed block at `offset` (FORMAT.md §5.3).
fn seal_block(bytes: &mut [u8], offset: usize, length: usize) {
    let Some(block) = bytes.get_mut(offset..offset.saturating_add(length)) else { return };
    if block.len() < 4 {
        return;
    }
    let (frame, trailer) = block.split_at_mut(length - 4);
    trailer.copy_from_slice(&(xxh3_64(frame) as u32).to_le_bytes());
}

fn seal_header(bytes: &mut [u8], header_length: usize) {
    let checksum = header_checksum(&bytes[..header_length]);
    bytes[HEADER_CHECKSUM_RANGE].copy_from_slice(&checksum.to_le_bytes());
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}
