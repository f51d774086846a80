//! Encoders and decoders for each part of a `.rete` file, one file per
//! section of `docs/FORMAT.md`. Everything here works on byte slices.

pub mod axioms;
pub mod block;
pub mod card;
pub mod dictionary;
pub mod directory;
pub mod header;
pub mod index;
pub mod permutation;
pub mod search;
pub mod summary;
pub mod term;
pub mod varint;
#[cfg(feature = "write")]
pub mod write;

/// FORMAT.md §1: the reader's first read, which holds header, section table and (usually) INDEX.
pub const FIRST_READ_BYTES: u64 = 16384;
/// FORMAT.md §1: the largest decompressed block a reader accepts.
pub const MAX_BLOCK_RAW_BYTES: u64 = 32 * 1024 * 1024;
/// FORMAT.md §4: the largest decompressed INDEX a reader accepts.
pub const MAX_INDEX_RAW_BYTES: u64 = 64 * 1024 * 1024;
/// FORMAT.md §5.1: the longest encoded term.
pub const MAX_TERM_BYTES: usize = 16 * 1024 * 1024;
/// FORMAT.md §7: the largest CARD section.
pub const MAX_CARD_BYTES: u64 = 32 * 1024;
/// zstd level used by the reference writer (fixed, for determinism: FORMAT.md §9).
pub const ZSTD_LEVEL: i32 = 9;
