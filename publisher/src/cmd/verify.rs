//! `rete verify`: recomputes every checksum and the content hash, and
//! decodes every block, reading the file once front to back.

use anyhow::{Result, bail};
use rete_core::Permutation;
use rete_core::format::write::ContentHasher;
use rete_core::read::{BlockKey, Directory};
use std::io::Read;
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Checks a file; an error lists what failed.
pub fn run(path: &Path) -> Result<()> {
    let store = super::open(path)?;
    let header = store.header().clone();
    let mut problems = Vec::new();

    let mut hasher = ContentHasher::default();
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    if hasher.finish() != header.content_hash {
        problems.push(format!("content hash is {:032x}, header says {}", hasher.finish(), header.content_hash_hex()));
    }
    for section in &header.sections {
        let bytes = rete_core::RangeSource::read_ranges(store.source(), &[section.range()])?.concat();
        if xxh3_64(&bytes) != section.checksum {
            problems.push(format!("{} section checksum mismatch", section.kind.name()));
        }
    }
    if let Err(error) = store.card() {
        problems.push(error.to_string());
    }
    let mut keys: Vec<BlockKey> = (0..store.block_count(Directory::Dictionary)).map(BlockKey::Dictionary).collect();
    for permutation in Permutation::ALL {
        keys.extend((0..store.block_count(Directory::Permutation(permutation))).map(|n| BlockKey::Permutation(permutation, n)));
    }
    for key in keys {
        if let Err(error) = store.block(key) {
            problems.push(error.to_string());
        }
    }
    if !problems.is_empty() {
        bail!(VerifyFailed(problems));
    }
    let blocks: u64 = header.sections.iter().map(|s| s.item_count).sum();
    println!("{}: ok ({} quads, {} sections, {blocks} blocks, content hash {})", path.display(), header.quad_count, header.sections.len(), header.content_hash_hex());
    Ok(())
}

/// `verify` found mismatches (exit code 1).
#[derive(Debug)]
pub struct VerifyFailed(pub Vec<String>);

impl std::fmt::Display for VerifyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "verification failed:")?;
        for problem in &self.0 {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifyFailed {}

