//! Reading every part of a file the way rete's hosts do: the first read,
//! the open in rounds (the Worker, `rete query URL`), `Store::open` (`rete
//! query FILE`), `rete verify`'s checks, CARD, SUMMARY and member pages,
//! dictionary and permutation blocks, terms and quad scans.
//!
//! The work of one walk is capped ([`MAX_BLOCKS`], …), as a host caps the
//! work of one request: a `.rete` file may legally declare blocks of up to
//! 32 MiB decompressed (FORMAT.md §1), so reading every block of a small
//! file can legally cost far more than a second, and that is no bug.

use rete_core::format::FIRST_READ_BYTES;
use rete_core::format::header::Header;
use rete_core::format::write::ContentHasher;
use rete_core::read::{Block, BlockCache, BlockKey, Directory, GraphFilter, open_in_rounds, open_prefix};
use rete_core::{Permutation, QuadPattern, RangeSource, ReadError, Store, TermId};
use xxhash_rust::xxh3::xxh3_64;

/// The Worker's default `CACHE_BYTES`: decoded blocks held at once.
pub const CACHE_BYTES: usize = 16 << 20;
/// Blocks decoded by one walk.
pub const MAX_BLOCKS: usize = 48;
/// Terms decoded by one walk.
pub const MAX_TERMS: usize = 2048;
/// Quads scanned by one walk.
pub const MAX_QUADS: usize = 4096;
/// Member pages read by one walk.
pub const MAX_MEMBER_PAGES: usize = 8;

/// Opens `bytes` every way a host does and reads every part of it.
/// `Ok` when the file opened; the error of the open otherwise.
pub fn walk(bytes: &[u8]) -> Result<(), ReadError> {
    let length = bytes.len() as u64;
    let prefix = &bytes[..bytes.len().min(FIRST_READ_BYTES as usize)];
    let checked = open_prefix(prefix, Some(length)).map(|_| ());
    let rounds = open_in_rounds(|ranges| bytes.read_ranges(ranges), BlockCache::new(CACHE_BYTES));
    let opened = Store::open(bytes, CACHE_BYTES);
    // The three opens read the same bytes: they agree (only the first also
    // knows the file's length, so it may refuse what the others accept).
    match (&rounds, &opened) {
        (Ok((by_rounds, _)), Ok(store)) => assert_eq!(by_rounds.header(), store.header(), "open_in_rounds and Store::open decoded different headers"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "open_in_rounds and Store::open failed differently"),
        (a, b) => panic!("open_in_rounds gave {:?} but Store::open gave {:?}", a.as_ref().err(), b.as_ref().err()),
    }
    if opened.is_ok() && checked.is_err() {
        let header = opened.as_ref().map(Store::header).ok().cloned();
        assert!(header.is_some_and(|h: Header| h.file_length != length), "the first read refused a file that opens: {checked:?}");
    }
    let store = opened?;
    verify(&store, bytes);
    // CARD and SUMMARY may be corrupt while the rest reads: each error is its own.
    let _ = store.card().map_err(check_error);
    if let Ok(Some(summary)) = store.summary().map_err(check_error) {
        for node in summary.levels.iter().flat_map(|level| &level.nodes).take(MAX_MEMBER_PAGES) {
            for page in 0..node.members.pages.min(2) {
                let _ = store.member_page(&node.members, page).map_err(check_error);
            }
        }
    }
    read_blocks(&store);
    Ok(())
}

/// What `rete verify` computes: section checksums and the content hash.
fn verify(store: &Store<&[u8]>, bytes: &[u8]) {
    for section in &store.header().sections {
        if let Ok(parts) = bytes.read_ranges(&[section.range()]) {
            let _ = parts.iter().map(|part| xxh3_64(part)).count();
        }
    }
    let mut hasher = ContentHasher::default();
    hasher.update(bytes);
    let _ = hasher.finish();
}

/// Dictionary blocks with their terms, then permutation blocks with a scan
/// bound by the first key of each block read.
fn read_blocks(store: &Store<&[u8]>) {
    let mut keys: Vec<BlockKey> = (0..store.block_count(Directory::Dictionary)).map(BlockKey::Dictionary).collect();
    for permutation in Permutation::ALL {
        keys.extend((0..store.block_count(Directory::Permutation(permutation))).map(|n| BlockKey::Permutation(permutation, n)));
    }
    let mut terms = 0;
    let mut quads = 0;
    for key in spread(&keys, MAX_BLOCKS) {
        let Ok(block) = store.block(key).map_err(check_error) else { continue };
        match (key, block) {
            (BlockKey::Dictionary(_), _) => {
                let Ok(Some(entry)) = store.located(key).map_err(check_error) else { continue };
                for id in entry.items() {
                    if terms >= MAX_TERMS {
                        break;
                    }
                    terms += 1;
                    let Ok(encoded) = store.encoded_term(id).map_err(check_error) else { break };
                    if let Ok(term) = store.term(id).map_err(check_error) {
                        let _ = store.term_id(term.as_ref()).map_err(check_error);
                    }
                    let _ = store.encoded_term_id(&encoded).map_err(check_error);
                }
            }
            (BlockKey::Permutation(permutation, _), Block::Permutation(keys)) => {
                let Some(first_key) = keys.get(0) else { continue };
                let [s, p, o, g] = permutation.quad(first_key);
                for pattern in patterns(s, p, o, g) {
                    for quad in store.quads(pattern).take(MAX_QUADS.saturating_sub(quads)) {
                        quads += 1;
                        if quad.map_err(check_error).is_err() {
                            break;
                        }
                    }
                }
            }
            // The search index is not in `keys`: read_file damages blocks, not postings.
            _ => {}
        }
    }
}

/// Patterns bound by parts of a quad: one per permutation's prefix shape.
fn patterns(s: TermId, p: TermId, o: TermId, g: TermId) -> [QuadPattern; 4] {
    let graph = if g == 0 { GraphFilter::Default } else { GraphFilter::Named(g) };
    [
        QuadPattern { subject: Some(s), predicate: None, object: None, graph: GraphFilter::Any },
        QuadPattern { subject: None, predicate: Some(p), object: Some(o), graph },
        QuadPattern { subject: Some(s), predicate: Some(p), object: None, graph: GraphFilter::AnyNamed },
        QuadPattern { subject: None, predicate: None, object: Some(o), graph: GraphFilter::Any },
    ]
}

/// At most `count` items spread over the whole list (first and last included).
fn spread<T: Copy>(items: &[T], count: usize) -> Vec<T> {
    if items.len() <= count {
        return items.to_vec();
    }
    (0..count).map(|i| items[i * (items.len() - 1) / (count - 1)]).collect()
}

/// An error reading a file held in memory is about its bytes, or a budget:
/// never a failed read, never "missing" (the whole file is there).
pub fn check_error(error: ReadError) -> ReadError {
    match &error {
        ReadError::Format(_) | ReadError::Budget { .. } => error,
        other => panic!("reading a file in memory failed with {other:?}"),
    }
}
