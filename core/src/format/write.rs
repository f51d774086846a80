//! Assembling a file (FORMAT.md §1–3): section order, the header that
//! points at them, and the content hash. The caller streams the bytes; this
//! file only decides where they go and hashes what it is shown.

use super::header::{CONTENT_HASH_RANGE, HEADER_CHECKSUM_RANGE, Header, MAJOR_VERSION, MINOR_VERSION, Section, SectionKind};
use xxhash_rust::xxh3::Xxh3;

/// Length, block count and checksum of a section the caller has written out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SectionSummary {
    /// Bytes.
    pub length: u64,
    /// Blocks (0 for non-block sections).
    pub item_count: u64,
    /// XXH3-64 of its bytes.
    pub checksum: u64,
}

/// Counts recorded in the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Distinct quads.
    pub quads: u64,
    /// Distinct terms.
    pub terms: u64,
    /// Named graphs.
    pub graphs: u64,
}

/// The header for sections laid out in the FORMAT.md §1 order: INDEX, CARD,
/// SEARCH (optional: its root, read with the first 16 KiB when there is
/// room), CLASS AXIOMS, PROPERTY AXIOMS and SUMMARY (optional), DICTIONARY, the six
/// permutations, then MEMBERS and SEARCH BLOCKS (optional). Its content hash is zero until [`ContentHasher`] has seen the
/// whole file.
pub fn layout(
    counts: Counts,
    index: SectionSummary,
    card: SectionSummary,
    axioms: [Option<SectionSummary>; 2],
    summary: Option<SectionSummary>,
    dictionary: SectionSummary,
    permutations: [SectionSummary; 6],
    members: Option<SectionSummary>,
    search: Option<[SectionSummary; 2]>,
) -> Header {
    layout_with_directory(counts, index, card, axioms, summary, None, dictionary, permutations, members, search)
}

/// [`layout`] with a DIRECTORY section (FORMAT.md §4.3) between SUMMARY and
/// DICTIONARY, and required feature bit 1 when there is one.
#[allow(clippy::too_many_arguments)]
pub fn layout_with_directory(
    counts: Counts,
    index: SectionSummary,
    card: SectionSummary,
    axioms: [Option<SectionSummary>; 2],
    summary: Option<SectionSummary>,
    directory: Option<SectionSummary>,
    dictionary: SectionSummary,
    permutations: [SectionSummary; 6],
    members: Option<SectionSummary>,
    search: Option<[SectionSummary; 2]>,
) -> Header {
    let mut kinds = vec![(SectionKind::Index, index), (SectionKind::Card, card)];
    kinds.extend(search.map(|[root, _]| (SectionKind::Search, root)));
    let [class_axioms, property_axioms] = axioms;
    kinds.extend(class_axioms.map(|s| (SectionKind::ClassAxioms, s)));
    kinds.extend(property_axioms.map(|s| (SectionKind::PropertyAxioms, s)));
    kinds.extend(summary.map(|s| (SectionKind::Summary, s)));
    kinds.extend(directory.map(|s| (SectionKind::Directory, s)));
    kinds.push((SectionKind::Dictionary, dictionary));
    kinds.extend(permutations.into_iter().enumerate().map(|(p, s)| (SectionKind::Permutation(p as u8), s)));
    kinds.extend(members.map(|s| (SectionKind::Members, s)));
    kinds.extend(search.map(|[_, blocks]| (SectionKind::SearchBlocks, blocks)));
    let mut offset = (super::header::FIXED_HEADER_BYTES + super::header::SECTION_ENTRY_BYTES * kinds.len()) as u64;
    let header_length = offset as u32;
    let sections = kinds
        .into_iter()
        .map(|(kind, summary)| {
            let section = Section { kind, offset, length: summary.length, item_count: summary.item_count, checksum: summary.checksum };
            offset += summary.length;
            section
        })
        .collect();
    let mut header = Header {
        major_version: MAJOR_VERSION,
        minor_version: MINOR_VERSION,
        header_length,
        content_hash: 0,
        file_length: offset,
        quad_count: counts.quads,
        term_count: counts.terms,
        graph_count: counts.graphs,
        flags: 0,
        required_features: 0,
        sections,
    };
    if directory.is_some() {
        header.require(super::header::FEATURE_DIRECTORY);
    }
    header
}

/// Streams a whole file through XXH3-128 with the content hash and header
/// checksum fields read as zeros (FORMAT.md §2).
#[derive(Clone)]
pub struct ContentHasher {
    hasher: Xxh3,
    position: usize,
}

impl Default for ContentHasher {
    fn default() -> Self {
        Self { hasher: Xxh3::new(), position: 0 }
    }
}

impl ContentHasher {
    /// Feeds the next bytes of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        let end = self.position.saturating_add(bytes.len());
        if self.position < HEADER_CHECKSUM_RANGE.end {
            let mut copy = bytes.to_vec();
            for range in [CONTENT_HASH_RANGE, HEADER_CHECKSUM_RANGE] {
                for i in range.start.max(self.position)..range.end.min(end) {
                    copy[i - self.position] = 0;
                }
            }
            self.hasher.update(&copy);
        } else {
            self.hasher.update(bytes);
        }
        self.position = end;
    }

    /// The content hash.
    pub fn finish(&self) -> u128 {
        self.hasher.digest128()
    }
}

/// Writes the content hash into encoded header bytes and refreshes the header checksum.
pub fn stamp_content_hash(header_bytes: &mut [u8], content_hash: u128) {
    header_bytes[CONTENT_HASH_RANGE].copy_from_slice(&content_hash.to_le_bytes());
    let checksum = super::header::header_checksum(header_bytes);
    header_bytes[HEADER_CHECKSUM_RANGE].copy_from_slice(&checksum.to_le_bytes());
}
