//! Building the dictionary with bounded memory. Parsing numbers each term
//! with a temporary id in order of appearance; when the table outgrows its
//! budget it is written out as a sorted run and started afresh (so a term can
//! get several temporary ids). Merging the runs yields the terms in final id
//! order and the mapping from every temporary id to its final id.

use super::sort::{ChunkReader, ChunkWriter, ExternalSorter, RecordWriter, TempFile, TempRecords};
use anyhow::{Context, Result};
use hashbrown::HashTable;
use rayon::slice::ParallelSliceMut;
use rete_core::TermId;
use std::hash::Hasher;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Temporary ids for terms while parsing; 0 is the default graph.
pub struct TermRuns {
    dir: PathBuf,
    budget_bytes: usize,
    table: TermTable,
    next_temporary: u64,
    runs: Vec<TempFile>,
}

/// Terms back to back in one buffer, found through a hash table of their
/// positions. Two allocations in all: the memory is counted exactly, and
/// returned whole when the table goes (a box per term would leave the heap
/// fragmented, and the process that much bigger, for the rest of the build).
#[derive(Default)]
struct TermTable {
    bytes: Vec<u8>,
    slots: HashTable<Slot>,
}

#[derive(Clone, Copy)]
struct Slot {
    start: usize,
    length: u32,
    temporary: u64,
}

fn hash_term(term: &[u8]) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(term);
    hasher.finish()
}

impl TermTable {
    fn term(&self, slot: &Slot) -> &[u8] {
        &self.bytes[slot.start..slot.start + slot.length as usize]
    }

    /// Heap bytes held, counting what sorting the table will need too: the
    /// slots copied out (24 bytes each) and the id mapping (8 bytes per term).
    fn heap_bytes(&self) -> usize {
        self.bytes.len() + self.table_bytes() + self.slots.len() * 32
    }

    /// Bytes of the hash table: 24-byte slots plus a control byte, at most 7/8 full.
    fn table_bytes(&self) -> usize {
        self.slots.capacity() * 8 / 7 * (size_of::<Slot>() + 1)
    }

    /// Its slots in term order.
    fn sorted_slots(&self) -> Vec<Slot> {
        let mut slots: Vec<Slot> = self.slots.iter().copied().collect();
        slots.par_sort_unstable_by(|a, b| self.term(a).cmp(self.term(b)));
        slots
    }
}

impl TermRuns {
    /// A table spilling to `dir` beyond `budget_bytes`.
    pub fn new(dir: &Path, budget_bytes: usize) -> Self {
        Self { dir: dir.to_owned(), budget_bytes, table: TermTable::default(), next_temporary: 1, runs: Vec::new() }
    }

    /// The temporary id of an encoded term (0 for the empty slice: the default graph).
    pub fn intern(&mut self, term: &[u8]) -> Result<u64> {
        if term.is_empty() {
            return Ok(0);
        }
        let hash = hash_term(term);
        if let Some(slot) = self.table.slots.find(hash, |slot| self.table.term(slot) == term) {
            return Ok(slot.temporary);
        }
        // Growing the hash table holds the old one and one twice its size at once.
        let growth = if self.table.slots.len() == self.table.slots.capacity() { 2 * self.table.table_bytes().max(1024) } else { 0 };
        if self.table.heap_bytes() + term.len() + 32 + growth > self.budget_bytes && !self.table.slots.is_empty() {
            self.spill()?;
        }
        let temporary = self.next_temporary;
        self.next_temporary += 1;
        let slot = Slot { start: self.table.bytes.len(), length: u32::try_from(term.len()).context("term too long")?, temporary };
        self.table.bytes.extend_from_slice(term);
        let bytes = &self.table.bytes;
        self.table.slots.insert_unique(hash, slot, |slot| hash_term(&bytes[slot.start..slot.start + slot.length as usize]));
        Ok(temporary)
    }

    fn spill(&mut self) -> Result<()> {
        let slots = self.table.sorted_slots();
        let mut writer = ChunkWriter::new(&self.dir)?;
        for slot in slots {
            writer.write_all(&slot.length.to_le_bytes())?;
            writer.write_all(self.table.term(&slot))?;
            writer.write_all(&slot.temporary.to_le_bytes())?;
        }
        self.runs.push(writer.finish()?);
        // Keep the allocations for the next run: no heap churn, and the budget already counts them.
        self.table.bytes.clear();
        self.table.slots.clear();
        Ok(())
    }

    /// Distinct terms and their total encoded bytes (a merge pass without output).
    pub fn distinct(&mut self) -> Result<(u64, u64)> {
        if self.runs.is_empty() {
            return Ok((self.table.slots.len() as u64, self.table.bytes.len() as u64));
        }
        self.spill_last()?;
        let (mut count, mut bytes) = (0, 0);
        let readers = self.runs.iter().map(TempFile::reader).collect::<Result<Vec<_>>>()?;
        Self::merge_runs(readers, |term| {
            count += 1;
            bytes += term.len() as u64;
            Ok(())
        }, |_, _| Ok(()))?;
        Ok((count, bytes))
    }

    /// Merges all runs: calls `each_term` with every distinct term in order
    /// (its final id is its 1-based position) and returns the id mapping.
    /// Each run's file is released once read.
    pub fn merge(mut self, memory_bytes: usize, mut each_term: impl FnMut(&[u8]) -> Result<()>) -> Result<IdMapping> {
        let temporary_count = self.next_temporary;
        if self.runs.is_empty() {
            // Never spilled: every term has one temporary id, sort them in memory.
            let slots = self.table.sorted_slots();
            self.table.slots = HashTable::new();
            let mut mapping = vec![0; temporary_count as usize];
            for (final_id, slot) in (1..).zip(slots) {
                each_term(self.table.term(&slot))?;
                mapping[slot.temporary as usize] = final_id;
            }
            return Ok(IdMapping::Memory(mapping));
        }
        self.spill_last()?;
        let readers = std::mem::take(&mut self.runs).into_iter().map(TempFile::into_reader).collect();
        if temporary_count.saturating_mul(8) <= memory_bytes as u64 {
            let mut mapping = vec![0; temporary_count as usize];
            Self::merge_runs(readers, each_term, |temporary, final_id| {
                mapping[temporary as usize] = final_id;
                Ok(())
            })?;
            return Ok(IdMapping::Memory(mapping));
        }
        let mut pairs = ExternalSorter::<2>::new(&self.dir, memory_bytes, temporary_count);
        Self::merge_runs(readers, each_term, |temporary, final_id| pairs.push([temporary, final_id]))?;
        let mut sorted = pairs.finish()?;
        let mut writer = RecordWriter::<1>::new(&self.dir)?;
        writer.push(&[0u64])?;
        while let Some([_, final_id]) = sorted.next_record()? {
            writer.push(&[final_id])?;
        }
        Ok(IdMapping::Disk { file: writer.finish()?, count: temporary_count })
    }

    /// Writes what the table holds as the last run and lets the table go.
    fn spill_last(&mut self) -> Result<()> {
        if !self.table.slots.is_empty() {
            self.spill()?;
        }
        self.table = TermTable::default();
        Ok(())
    }

    fn merge_runs(readers: Vec<ChunkReader>, mut each_term: impl FnMut(&[u8]) -> Result<()>, mut each_pair: impl FnMut(u64, TermId) -> Result<()>) -> Result<()> {
        let mut readers: Vec<RunReader> = readers.into_iter().map(|reader| RunReader { reader }).collect();
        let mut heap = std::collections::BinaryHeap::new();
        for (i, reader) in readers.iter_mut().enumerate() {
            if let Some((term, id)) = reader.next()? {
                heap.push(std::cmp::Reverse((term, id, i)));
            }
        }
        let mut last: Option<Vec<u8>> = None;
        let mut final_id: TermId = 0;
        while let Some(std::cmp::Reverse((term, temporary, i))) = heap.pop() {
            if let Some(next) = readers[i].next()? {
                heap.push(std::cmp::Reverse((next.0, next.1, i)));
            }
            if last.as_deref() != Some(&term[..]) {
                final_id += 1;
                each_term(&term)?;
                last = Some(term);
            }
            each_pair(temporary, final_id)?;
        }
        Ok(())
    }
}

/// A term run read back: `[length u32 LE][term][temporary id u64 LE]` records.
struct RunReader {
    reader: ChunkReader,
}

impl RunReader {
    fn next(&mut self) -> Result<Option<(Vec<u8>, u64)>> {
        let mut length = [0u8; 4];
        match self.reader.read_exact(&mut length) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let mut term = vec![0u8; u32::from_le_bytes(length) as usize];
        self.reader.read_exact(&mut term).context("temporary term run truncated")?;
        let mut id = [0u8; 8];
        self.reader.read_exact(&mut id).context("temporary term run truncated")?;
        Ok(Some((term, u64::from_le_bytes(id))))
    }
}

/// Set on ids already translated by an earlier window (final and temporary
/// ids share a number space: the flag keeps a later window from translating
/// an id twice).
const TRANSLATED: u64 = 1 << 63;

/// Temporary id → final id.
pub enum IdMapping {
    /// Small enough for memory.
    Memory(Vec<TermId>),
    /// The final id of every temporary id in order, on disk, translated window by window.
    Disk {
        /// The final ids.
        file: TempRecords<1>,
        /// Entries.
        count: u64,
    },
}

impl IdMapping {
    /// Translates a file of `[s, p, o, g]` temporary-id records into final ids
    /// and hands each quad to `each`, in as many passes as windows of
    /// `memory_bytes` the mapping needs: the passes before the last write a
    /// partly translated copy. Each file is released once read.
    pub fn translate(self, quads: TempRecords<4>, dir: &Path, memory_bytes: usize, mut each: impl FnMut([u64; 4]) -> Result<()>) -> Result<()> {
        let mut last = |quad: [u64; 4]| each(quad.map(|id| id & !TRANSLATED));
        match self {
            Self::Memory(mapping) => translate_window(quads, &mapping, 0, &mut last),
            Self::Disk { file, count } => {
                let window = (memory_bytes / 8).max(1 << 16) as u64;
                let mut mapping = file.into_reader();
                let mut quads = quads;
                let mut start = 0;
                loop {
                    let length = window.min(count - start);
                    let mut values = Vec::with_capacity(length as usize);
                    for _ in 0..length {
                        values.push(mapping.next_record()?.context("temporary id mapping truncated")?[0]);
                    }
                    if start + length >= count {
                        drop(mapping);
                        return translate_window(quads, &values, start, &mut last);
                    }
                    let mut copy = RecordWriter::new(dir)?;
                    translate_window(quads, &values, start, &mut |quad| copy.push(&quad))?;
                    quads = copy.finish()?;
                    start += length;
                }
            }
        }
    }
}

/// Translates the ids in `start..start + mapping.len()`.
fn translate_window(quads: TempRecords<4>, mapping: &[u64], start: u64, each: &mut impl FnMut([u64; 4]) -> Result<()>) -> Result<()> {
    let end = start + mapping.len() as u64;
    let mut reader = quads.into_reader();
    while let Some(mut quad) = reader.next_record()? {
        for id in quad.iter_mut() {
            if *id & TRANSLATED == 0 && *id != 0 && (start..end).contains(id) {
                *id = mapping[(*id - start) as usize] | TRANSLATED;
            }
        }
        each(quad)?;
    }
    Ok(())
}
