//! Committed files of earlier format versions (docs/fixtures/), read by this
//! build's reader: a reader of a later version MUST read every 1.x file
//! (FORMAT.md §2, Appendix B). The fixtures were written by the writer of
//! their version and are never rebuilt, so a reader change that breaks them
//! fails here rather than on files already published.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rete_core::read::{GraphFilter, QuadPattern};
use rete_core::{FormatError, Header, ReadError, Store};

/// A 1.2 file (rete's writer of 2026-11-26, `rete build format-1.2.nq
/// --title "rete format 1.2 fixture"` with SOURCE_DATE_EPOCH=1764115200):
/// 12 quads, one named graph, language-tagged and typed literals, a blank node.
const FORMAT_1_2: &[u8] = include_bytes!("../../docs/fixtures/format-1.2.rete");
/// Its quads, as given to the writer.
const FORMAT_1_2_QUADS: &str = include_str!("../../docs/fixtures/format-1.2.nq");

/// Every quad of a store as sorted N-Quads lines.
fn nquads(store: &Store<Vec<u8>>) -> Vec<String> {
    let pattern = QuadPattern { subject: None, predicate: None, object: None, graph: GraphFilter::Any };
    let mut lines: Vec<String> = store
        .quads(pattern)
        .map(|quad| {
            let quad = quad.unwrap();
            let [s, p, o, g] = quad.map(|id| (id != 0).then(|| store.term(id).unwrap().to_string()));
            let graph = g.map(|g| format!(" {g}")).unwrap_or_default();
            format!("{} {} {}{graph} .", s.unwrap(), p.unwrap(), o.unwrap())
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn reads_a_format_1_2_file() {
    let store = Store::open(FORMAT_1_2.to_vec(), 1 << 20).unwrap();
    let header = store.header();
    assert_eq!((header.major_version, header.minor_version, header.required_features), (1, 2, 0));
    assert_eq!((header.quad_count, header.term_count, header.graph_count), (12, 18, 1));
    let mut expected: Vec<String> = FORMAT_1_2_QUADS.lines().map(str::to_owned).collect();
    expected.sort();
    assert_eq!(nquads(&store), expected);
    assert_eq!(store.card().unwrap().title.as_deref(), Some("rete format 1.2 fixture"));
}

/// A 2.0 file with a directory (required feature bit 1) and permutation
/// blocks without coding bytes (no bit 3, FORMAT.md §6.1): rete's writer of
/// 2026-11-26 before §6.1, `rete build format-1.2.nq --title "rete format
/// 2.0 directory fixture" --block-quads 4 --node-entries 4` with
/// SOURCE_DATE_EPOCH=1764115200 (three blocks per order, nodes of four entries).
const FORMAT_2_0_DIRECTORY: &[u8] = include_bytes!("../../docs/fixtures/format-2.0-directory.rete");

#[test]
fn reads_a_format_2_0_directory_file_without_coding_bytes() {
    let store = Store::open(FORMAT_2_0_DIRECTORY.to_vec(), 1 << 20).unwrap();
    let header = store.header();
    // Bit 1 (directory) and bit 2 (value-ordered literals: the fixture has numbers), not bit 3.
    use rete_core::format::header::{FEATURE_DIRECTORY, FEATURE_VALUE_ORDER};
    assert_eq!((header.major_version, header.minor_version, header.required_features), (2, 0, FEATURE_DIRECTORY | FEATURE_VALUE_ORDER));
    assert_eq!(header.block_layout(), rete_core::format::permutation::BlockLayout::Raw);
    let mut expected: Vec<String> = FORMAT_1_2_QUADS.lines().map(str::to_owned).collect();
    expected.sort();
    assert_eq!(nquads(&store), expected);
    assert_eq!(store.card().unwrap().title.as_deref(), Some("rete format 2.0 directory fixture"));
}

#[test]
fn refuses_a_major_version_it_does_not_know_by_number() {
    let mut bytes = FORMAT_1_2.to_vec();
    bytes[0x08..0x0A].copy_from_slice(&3u16.to_le_bytes());
    let error = Header::decode(&bytes, None).unwrap_err();
    assert!(matches!(error, FormatError::UnsupportedVersion { found: 3, .. }), "{error}");
    let error = Store::open(bytes, 1 << 20).err().unwrap();
    assert!(matches!(error, ReadError::Format(FormatError::UnsupportedVersion { found: 3, .. })), "{error}");
}

/// A file with required feature `bits` (FORMAT.md §2), made from the 1.2
/// fixture by rewriting its header: the writer's `Header::require` makes it
/// format 2.
fn with_required_features(bits: u64) -> Vec<u8> {
    let mut bytes = FORMAT_1_2.to_vec();
    let mut header = Header::decode(&bytes, None).unwrap();
    header.require(bits);
    let encoded = header.encode();
    bytes[..encoded.len()].copy_from_slice(&encoded);
    bytes
}

/// Issue 17: a file with the directory (required feature bit 1) is format 2,
/// so a 1.x reader, whose only check was `major_version != 1` ("file is rete
/// format 2; this build reads format 1"), refuses it before reading its
/// INDEX; and a 2.x reader that lacks a feature names its bit.
#[test]
fn issue_17_a_file_with_a_directory_is_format_2_and_unknown_features_are_named() {
    let bytes = with_required_features(rete_core::format::header::FEATURE_DIRECTORY);
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2, "what a 1.x reader checks");
    assert_eq!(u64::from_le_bytes(bytes[0x48..0x50].try_into().unwrap()), 2);

    let error = Store::open(with_required_features(1 << 5), 1 << 20).err().unwrap();
    assert!(matches!(error, ReadError::Format(FormatError::UnsupportedFeatures { bits: 32, .. })), "{error}");
    assert!(error.to_string().starts_with("file needs required feature bit 5 this build does not know"), "{error}");
}
