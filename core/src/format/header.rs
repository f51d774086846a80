//! The fixed header and the section table (FORMAT.md §2–3): everything a
//! reader learns from the first bytes of a file before planning any read.

use super::FIRST_READ_BYTES;
use crate::FormatError;
use xxhash_rust::xxh3::xxh3_64;

/// FORMAT.md §2: "RETE\r\n\x1a\n".
pub const MAGIC: [u8; 8] = *b"RETE\r\n\x1a\n";
/// The major version this build writes for a file without required features
/// (FORMAT.md §2: every 1.x reader reads it).
pub const MAJOR_VERSION: u16 = 1;
/// The minor version written with [`MAJOR_VERSION`].
pub const MINOR_VERSION: u16 = 2;
/// The major version of a file with `required_features` (FORMAT.md §2);
/// this build reads 1 and 2.
pub const MAJOR_VERSION_WITH_FEATURES: u16 = 2;
/// Size of the fixed header.
pub const FIXED_HEADER_BYTES: usize = 0x60;
/// Size of one section table entry.
pub const SECTION_ENTRY_BYTES: usize = 40;
/// Byte range of the content hash inside the header.
pub const CONTENT_HASH_RANGE: std::ops::Range<usize> = 0x10..0x20;
/// Byte range of the header checksum inside the header.
pub const HEADER_CHECKSUM_RANGE: std::ops::Range<usize> = 0x44..0x48;

/// `flags` bit 0 (FORMAT.md §2): a query without `FROM` sees the union of
/// every graph, the default graph included, as its default graph.
pub const FLAG_UNION_DEFAULT_GRAPH: u64 = 1 << 0;

/// `required_features` bit 0 (FORMAT.md §2): the dictionary holds RDF 1.2
/// triple terms (term kind 0x06).
pub const FEATURE_TRIPLE_TERMS: u64 = 1 << 0;
/// `required_features` bit 1 (FORMAT.md §4.3): INDEX is the root of a tree
/// of directory nodes in a DIRECTORY section.
pub const FEATURE_DIRECTORY: u64 = 1 << 1;
/// `required_features` bit 2 (FORMAT.md §5.1.1): numbers and dates are
/// encoded in the value-ordered term kinds 0x07–0x09.
pub const FEATURE_VALUE_ORDER: u64 = 1 << 2;
/// `required_features` bit 3 (FORMAT.md §6.1): every permutation block has
/// a coding byte, and restarting ids may be deltas from the row before.
pub const FEATURE_RESTART_CODINGS: u64 = 1 << 3;
/// The required features this build reads, with their names.
const KNOWN_FEATURES: [(u64, &str); 4] =
    [(FEATURE_TRIPLE_TERMS, "triple-terms"), (FEATURE_DIRECTORY, "directory"), (FEATURE_VALUE_ORDER, "value-order"), (FEATURE_RESTART_CODINGS, "restart-codings")];

/// Section kinds (FORMAT.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectionKind {
    /// Directories of every block and the graph list.
    Index,
    /// The dataset card (JSON).
    Card,
    /// The summary (JSON).
    Summary,
    /// Member pages of the summary's communities.
    Members,
    /// The label search index's root (FORMAT.md §12).
    Search,
    /// The label search index's posting blocks (FORMAT.md §12).
    SearchBlocks,
    /// Class axioms for coherence checks (JSON).
    ClassAxioms,
    /// Property axioms for coherence checks (JSON).
    PropertyAxioms,
    /// Dictionary blocks.
    Dictionary,
    /// Directory nodes (FORMAT.md §4.3, with required feature bit 1).
    Directory,
    /// Quad blocks of one permutation (0..=5).
    Permutation(u8),
}

impl SectionKind {
    /// The on-disk code.
    pub fn code(self) -> u16 {
        match self {
            Self::Index => 0x0001,
            Self::Card => 0x0002,
            Self::Summary => 0x0003,
            Self::Members => 0x0004,
            Self::Search => 0x0005,
            Self::SearchBlocks => 0x0008,
            Self::ClassAxioms => 0x0006,
            Self::PropertyAxioms => 0x0007,
            Self::Dictionary => 0x0010,
            Self::Directory => 0x0011,
            Self::Permutation(p) => 0x0020 + u16::from(p),
        }
    }

    /// The kind of an on-disk code, `None` for unknown kinds (ignored by readers).
    pub fn from_code(code: u16) -> Option<Self> {
        Some(match code {
            0x0001 => Self::Index,
            0x0002 => Self::Card,
            0x0003 => Self::Summary,
            0x0004 => Self::Members,
            0x0005 => Self::Search,
            0x0008 => Self::SearchBlocks,
            0x0006 => Self::ClassAxioms,
            0x0007 => Self::PropertyAxioms,
            0x0010 => Self::Dictionary,
            0x0011 => Self::Directory,
            0x0020..=0x0025 => Self::Permutation((code - 0x0020) as u8),
            _ => return None,
        })
    }

    /// Name used in messages and `rete inspect`.
    pub fn name(self) -> String {
        match self {
            Self::Index => "INDEX".into(),
            Self::Card => "CARD".into(),
            Self::Summary => "SUMMARY".into(),
            Self::Members => "MEMBERS".into(),
            Self::Search => "SEARCH".into(),
            Self::SearchBlocks => "SEARCH BLOCKS".into(),
            Self::ClassAxioms => "CLASS AXIOMS".into(),
            Self::PropertyAxioms => "PROPERTY AXIOMS".into(),
            Self::Dictionary => "DICTIONARY".into(),
            Self::Directory => "DIRECTORY".into(),
            Self::Permutation(p) => match crate::Permutation::from_id(p) {
                Some(p) => format!("PERMUTATION {}", p.name()),
                None => format!("PERMUTATION {p}"),
            },
        }
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// What the section holds.
    pub kind: SectionKind,
    /// Absolute offset.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// Blocks in a block section, 0 otherwise.
    pub item_count: u64,
    /// XXH3-64 of the section's bytes.
    pub checksum: u64,
}

impl Section {
    /// The section's absolute byte range.
    pub fn range(&self) -> crate::ByteRange {
        crate::ByteRange { offset: self.offset, length: self.length }
    }
}

/// The decoded header and section table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Major version (always [`MAJOR_VERSION`] once decoded).
    pub major_version: u16,
    /// Minor version.
    pub minor_version: u16,
    /// Bytes of header plus section table.
    pub header_length: u32,
    /// XXH3-128 content hash; its hex form is the ETag.
    pub content_hash: u128,
    /// Total file length.
    pub file_length: u64,
    /// Distinct quads.
    pub quad_count: u64,
    /// Distinct terms.
    pub term_count: u64,
    /// Distinct named graphs.
    pub graph_count: u64,
    /// Choices that change answers, not reading (FORMAT.md §2); bits this
    /// build does not know are kept and ignored.
    pub flags: u64,
    /// What a reader must know to read the file (FORMAT.md §2); decoding
    /// refuses bits this build does not know.
    pub required_features: u64,
    /// Known sections, in file order.
    pub sections: Vec<Section>,
}

impl Header {
    /// The section of a kind, if present.
    pub fn section(&self, kind: SectionKind) -> Option<&Section> {
        self.sections.iter().find(|s| s.kind == kind)
    }

    /// A required section, or a corruption error naming it.
    pub fn required(&self, kind: SectionKind) -> Result<&Section, FormatError> {
        self.section(kind)
            .ok_or_else(|| FormatError::corrupt("section table", 0x60, format!("no {} section", kind.name())))
    }

    /// Marks the file as needing `features` (FORMAT.md §2): a file with any
    /// required feature is format 2.0, one without stays 1.2 for 1.x readers.
    pub fn require(&mut self, features: u64) {
        self.required_features |= features;
        if self.required_features != 0 {
            (self.major_version, self.minor_version) = (MAJOR_VERSION_WITH_FEATURES, 0);
        }
    }

    /// Whether the dictionary may hold RDF 1.2 triple terms.
    pub fn has_triple_terms(&self) -> bool {
        self.required_features & FEATURE_TRIPLE_TERMS != 0
    }

    /// How the dictionary encodes numbers and dates (FORMAT.md §5.1.1).
    pub fn literal_order(&self) -> crate::format::term::LiteralOrder {
        if self.required_features & FEATURE_VALUE_ORDER != 0 { crate::format::term::LiteralOrder::Value } else { crate::format::term::LiteralOrder::Lexical }
    }

    /// How the permutation blocks are laid out (FORMAT.md §6.1).
    pub fn block_layout(&self) -> crate::format::permutation::BlockLayout {
        use crate::format::permutation::BlockLayout;
        if self.required_features & FEATURE_RESTART_CODINGS != 0 { BlockLayout::Coded } else { BlockLayout::Raw }
    }

    /// Whether a query without `FROM` sees every graph as its default graph.
    pub fn union_default_graph(&self) -> bool {
        self.flags & FLAG_UNION_DEFAULT_GRAPH != 0
    }

    /// The content hash as 32 lowercase hex digits (the ETag at the edge).
    pub fn content_hash_hex(&self) -> String {
        format!("{:032x}", self.content_hash)
    }

    /// Encodes header and section table; the checksum field is filled, the
    /// content hash is written as given (the writer patches it at the end).
    #[cfg(feature = "write")]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; FIXED_HEADER_BYTES];
        out[0..8].copy_from_slice(&MAGIC);
        out[0x08..0x0A].copy_from_slice(&self.major_version.to_le_bytes());
        out[0x0A..0x0C].copy_from_slice(&self.minor_version.to_le_bytes());
        let header_length = (FIXED_HEADER_BYTES + SECTION_ENTRY_BYTES * self.sections.len()) as u32;
        out[0x0C..0x10].copy_from_slice(&header_length.to_le_bytes());
        out[CONTENT_HASH_RANGE].copy_from_slice(&self.content_hash.to_le_bytes());
        out[0x20..0x28].copy_from_slice(&self.file_length.to_le_bytes());
        out[0x28..0x30].copy_from_slice(&self.quad_count.to_le_bytes());
        out[0x30..0x38].copy_from_slice(&self.term_count.to_le_bytes());
        out[0x38..0x40].copy_from_slice(&self.graph_count.to_le_bytes());
        out[0x40..0x44].copy_from_slice(&(self.sections.len() as u32).to_le_bytes());
        out[0x48..0x50].copy_from_slice(&self.required_features.to_le_bytes());
        out[0x50..0x58].copy_from_slice(&self.flags.to_le_bytes());
        for section in &self.sections {
            let mut entry = [0u8; SECTION_ENTRY_BYTES];
            entry[0..2].copy_from_slice(&section.kind.code().to_le_bytes());
            entry[8..16].copy_from_slice(&section.offset.to_le_bytes());
            entry[16..24].copy_from_slice(&section.length.to_le_bytes());
            entry[24..32].copy_from_slice(&section.item_count.to_le_bytes());
            entry[32..40].copy_from_slice(&section.checksum.to_le_bytes());
            out.extend_from_slice(&entry);
        }
        let checksum = header_checksum(&out);
        out[HEADER_CHECKSUM_RANGE].copy_from_slice(&checksum.to_le_bytes());
        out
    }

    /// Decodes the header from the first bytes of a file (at least
    /// `header_length` of them; the reader's first read has 16 KiB).
    /// `known_length` is the file length when the host knows it.
    pub fn decode(prefix: &[u8], known_length: Option<u64>) -> Result<Self, FormatError> {
        let corrupt = |offset: usize, reason: String| FormatError::corrupt("header", offset as u64, reason);
        if prefix.len() < 8 || prefix[0..8] != MAGIC {
            return Err(FormatError::BadMagic);
        }
        if prefix.len() < FIXED_HEADER_BYTES {
            return Err(corrupt(0, format!("file is only {} bytes long", prefix.len())));
        }
        let u16_at = |at: usize| u16::from_le_bytes([prefix[at], prefix[at + 1]]);
        let u32_at = |at: usize| u32::from_le_bytes(array(&prefix[at..at + 4]));
        let u64_at = |at: usize| u64::from_le_bytes(array(&prefix[at..at + 8]));
        let major_version = u16_at(0x08);
        if !(MAJOR_VERSION..=MAJOR_VERSION_WITH_FEATURES).contains(&major_version) {
            return Err(FormatError::UnsupportedVersion { found: major_version, supported: MAJOR_VERSION_WITH_FEATURES });
        }
        let header_length = u32_at(0x0C);
        let section_count = u32_at(0x40) as usize;
        let expected_length = FIXED_HEADER_BYTES + SECTION_ENTRY_BYTES * section_count;
        if header_length as usize != expected_length || u64::from(header_length) > FIRST_READ_BYTES {
            return Err(corrupt(0x0C, format!("header length {header_length} does not fit {section_count} sections")));
        }
        if prefix.len() < expected_length {
            return Err(corrupt(0, format!("file ends inside the header ({} of {expected_length} bytes)", prefix.len())));
        }
        let header_bytes = &prefix[..expected_length];
        if header_checksum(header_bytes) != u32_at(0x44) {
            return Err(corrupt(0x44, "header checksum mismatch".into()));
        }
        let required_features = u64_at(0x48);
        let unknown = KNOWN_FEATURES.iter().fold(required_features, |bits, (bit, _)| bits & !bit);
        if unknown != 0 {
            return Err(FormatError::UnsupportedFeatures { bits: unknown, known: KNOWN_FEATURES.iter().map(|(_, name)| *name).collect::<Vec<_>>().join(", ") });
        }
        let file_length = u64_at(0x20);
        if let Some(known) = known_length
            && known != file_length
        {
            return Err(corrupt(0x20, format!("header says {file_length} bytes but the file has {known}")));
        }
        let mut sections = Vec::with_capacity(section_count);
        let mut previous_end = expected_length as u64;
        for i in 0..section_count {
            let at = FIXED_HEADER_BYTES + SECTION_ENTRY_BYTES * i;
            let offset = u64_at(at + 8);
            let length = u64_at(at + 16);
            let end = offset.checked_add(length).filter(|&end| end <= file_length);
            let Some(end) = end.filter(|_| offset >= previous_end) else {
                return Err(corrupt(at, format!("section {i} at {offset}+{length} overlaps another or runs past the end")));
            };
            previous_end = end;
            let Some(kind) = SectionKind::from_code(u16_at(at)) else { continue };
            if sections.iter().any(|s: &Section| s.kind == kind) {
                return Err(corrupt(at, format!("{} section appears twice", kind.name())));
            }
            sections.push(Section { kind, offset, length, item_count: u64_at(at + 24), checksum: u64_at(at + 32) });
        }
        Ok(Self {
            major_version,
            minor_version: u16_at(0x0A),
            header_length,
            content_hash: u128::from_le_bytes(array(&prefix[CONTENT_HASH_RANGE])),
            file_length,
            quad_count: u64_at(0x28),
            term_count: u64_at(0x30),
            graph_count: u64_at(0x38),
            flags: u64_at(0x50),
            required_features,
            sections,
        })
    }
}

/// FORMAT.md §2: XXH3-64 of the header with the checksum field zeroed, low 32 bits.
pub fn header_checksum(header: &[u8]) -> u32 {
    let mut copy = header.to_vec();
    if copy.len() >= HEADER_CHECKSUM_RANGE.end {
        copy[HEADER_CHECKSUM_RANGE].fill(0);
    }
    xxh3_64(&copy) as u32
}

fn array<const N: usize>(slice: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(slice);
    out
}
