//! Building the dictionary with bounded memory. Parsing numbers each term
//! with a temporary id in order of appearance; when the table outgrows its
//! budget it is written out as a sorted run and started afresh (so a term can
//! get several temporary ids). Merging the runs yields the terms in final id
//! order and the mapping from every temporary id to its final id.

use super::sort::{ExternalSorter, read_record, write_record};
use anyhow::{Context, Result};
use hashbrown::HashTable;
use rayon::slice::ParallelSliceMut;
use rete_core::TermId;
use std::fs::File;
use std::hash::Hasher;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Temporary ids for terms while parsing; 0 is the default graph.
pub struct TermRuns {
    dir: PathBuf,
    budget_bytes: usize,
    table: TermTable,
    next_temporary: u64,
    runs: Vec<File>,
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
        let mut file = tempfile::tempfile_in(&self.dir).context("cannot create a temporary file")?;
        {
            let mut writer = BufWriter::with_capacity(1 << 20, &mut file);
            for slot in slots {
                writer.write_all(&slot.length.to_le_bytes())?;
                writer.write_all(self.table.term(&slot))?;
                writer.write_all(&slot.temporary.to_le_bytes())?;
            }
            writer.flush()?;
        }
        self.runs.push(file);
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
        let (mut count, mut bytes) = (0, 0);
        self.merge_runs(|term| {
            count += 1;
            bytes += term.len() as u64;
            Ok(())
        }, |_, _| Ok(()))?;
        Ok((count, bytes))
    }

    /// Merges all runs: calls `each_term` with every distinct term in order
    /// (its final id is its 1-based position) and returns the id mapping.
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
        if temporary_count.saturating_mul(8) <= memory_bytes as u64 {
            let mut mapping = vec![0; temporary_count as usize];
            self.merge_runs(each_term, |temporary, final_id| {
                mapping[temporary as usize] = final_id;
                Ok(())
            })?;
            return Ok(IdMapping::Memory(mapping));
        }
        let mut pairs = ExternalSorter::<2>::new(&self.dir, memory_bytes, temporary_count);
        self.merge_runs(each_term, |temporary, final_id| pairs.push([temporary, final_id]))?;
        let mut sorted = pairs.finish()?;
        let mut file = tempfile::tempfile_in(&self.dir)?;
        let mut writer = BufWriter::with_capacity(1 << 20, &mut file);
        write_record(&mut writer, &[0u64])?;
        while let Some([_, final_id]) = sorted.next_record()? {
            write_record(&mut writer, &[final_id])?;
        }
        writer.flush()?;
        drop(writer);
        Ok(IdMapping::Disk { file, count: temporary_count })
    }

    fn merge_runs(&mut self, mut each_term: impl FnMut(&[u8]) -> Result<()>, mut each_pair: impl FnMut(u64, TermId) -> Result<()>) -> Result<()> {
        if !self.table.slots.is_empty() {
            self.spill()?;
        }
        self.table = TermTable::default();
        // The merge's read buffers share the memory the table had.
        let buffer_bytes = (self.budget_bytes / self.runs.len().max(1)).clamp(4 << 10, 256 << 10);
        let mut readers = Vec::with_capacity(self.runs.len());
        for run in &self.runs {
            let mut file = run.try_clone()?;
            file.rewind()?;
            readers.push(RunReader::new(file, buffer_bytes)?);
        }
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

struct RunReader {
    reader: BufReader<File>,
}

impl RunReader {
    fn new(file: File, buffer_bytes: usize) -> Result<Self> {
        Ok(Self { reader: BufReader::with_capacity(buffer_bytes, file) })
    }

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

/// Set on ids already translated; [`final_id`] removes it.
const TRANSLATED: u64 = 1 << 63;

/// The final id of a translated record value (0 stays the default graph).
pub fn final_id(value: u64) -> TermId {
    value & !TRANSLATED
}

/// Temporary id → final id.
pub enum IdMapping {
    /// Small enough for memory.
    Memory(Vec<TermId>),
    /// A dense array of u64 on disk, translated window by window.
    Disk {
        /// The array.
        file: File,
        /// Entries.
        count: u64,
    },
}

impl IdMapping {
    /// Rewrites a file of `[s, p, o, g]` temporary-id records into final ids,
    /// in as many passes as windows of `memory_bytes` the mapping needs.
    pub fn translate(&mut self, quads: File, dir: &Path, memory_bytes: usize) -> Result<File> {
        match self {
            Self::Memory(mapping) => translate_window(quads, dir, mapping, 0),
            Self::Disk { file, count } => {
                let window = (memory_bytes / 8).max(1 << 16) as u64;
                let mut quads = quads;
                let mut start = 0;
                while start < *count {
                    let length = window.min(*count - start);
                    let mut buffer = vec![0u8; (length * 8) as usize];
                    file.seek(std::io::SeekFrom::Start(start * 8))?;
                    file.read_exact(&mut buffer).context("temporary mapping truncated")?;
                    let values: Vec<u64> = buffer.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
                    quads = translate_window(quads, dir, &values, start)?;
                    start += length;
                }
                Ok(quads)
            }
        }
    }
}

fn translate_window(mut quads: File, dir: &Path, mapping: &[u64], start: u64) -> Result<File> {
    quads.rewind()?;
    let mut reader = BufReader::with_capacity(1 << 20, quads);
    let mut output = tempfile::tempfile_in(dir)?;
    {
        let mut writer = BufWriter::with_capacity(1 << 20, &mut output);
        let end = start + mapping.len() as u64;
        while let Some(mut quad) = read_record::<4>(&mut reader)? {
            for id in quad.iter_mut() {
                // Final and temporary ids share a number space: the flag keeps a
                // later window from translating an id twice.
                if *id & TRANSLATED == 0 && *id != 0 && (start..end).contains(id) {
                    *id = mapping[(*id - start) as usize] | TRANSLATED;
                }
            }
            write_record(&mut writer, &quad)?;
        }
        writer.flush()?;
    }
    output.rewind()?;
    Ok(output)
}
