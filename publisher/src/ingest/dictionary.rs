//! Building the dictionary with bounded memory. Parsing numbers each term
//! with a temporary id in order of appearance; when the table outgrows its
//! budget it is written out as a sorted run and started afresh (so a term can
//! get several temporary ids). Merging the runs yields the terms in final id
//! order and the mapping from every temporary id to its final id.

use super::sort::{ExternalSorter, read_record, write_record};
use anyhow::{Context, Result};
use rete_core::TermId;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Temporary ids for terms while parsing; 0 is the default graph.
pub struct TermRuns {
    dir: PathBuf,
    budget_bytes: usize,
    table: HashMap<Box<[u8]>, u64>,
    table_bytes: usize,
    next_temporary: u64,
    runs: Vec<File>,
}

impl TermRuns {
    /// A table spilling to `dir` beyond `budget_bytes`.
    pub fn new(dir: &Path, budget_bytes: usize) -> Self {
        Self { dir: dir.to_owned(), budget_bytes, table: HashMap::new(), table_bytes: 0, next_temporary: 1, runs: Vec::new() }
    }

    /// The temporary id of an encoded term (0 for the empty slice: the default graph).
    pub fn intern(&mut self, term: &[u8]) -> Result<u64> {
        if term.is_empty() {
            return Ok(0);
        }
        if let Some(&id) = self.table.get(term) {
            return Ok(id);
        }
        let id = self.next_temporary;
        self.next_temporary += 1;
        self.table.insert(term.into(), id);
        self.table_bytes += term.len() + 64;
        if self.table_bytes > self.budget_bytes {
            self.spill()?;
        }
        Ok(id)
    }

    /// Temporary ids handed out so far.
    pub fn temporary_count(&self) -> u64 {
        self.next_temporary
    }

    fn spill(&mut self) -> Result<()> {
        let mut entries: Vec<(Box<[u8]>, u64)> = self.table.drain().collect();
        entries.sort_unstable();
        self.table_bytes = 0;
        let mut file = tempfile::tempfile_in(&self.dir).context("cannot create a temporary file")?;
        {
            let mut writer = BufWriter::with_capacity(1 << 20, &mut file);
            for (term, id) in entries {
                writer.write_all(&(term.len() as u32).to_le_bytes())?;
                writer.write_all(&term)?;
                writer.write_all(&id.to_le_bytes())?;
            }
            writer.flush()?;
        }
        self.runs.push(file);
        Ok(())
    }

    /// Distinct terms and their total encoded bytes (a merge pass without output).
    pub fn distinct(&mut self) -> Result<(u64, u64)> {
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
    pub fn merge(mut self, memory_bytes: usize, each_term: impl FnMut(&[u8]) -> Result<()>) -> Result<IdMapping> {
        let temporary_count = self.next_temporary;
        if temporary_count.saturating_mul(8) <= memory_bytes as u64 {
            let mut mapping = vec![0; temporary_count as usize];
            self.merge_runs(each_term, |temporary, final_id| {
                mapping[temporary as usize] = final_id;
                Ok(())
            })?;
            return Ok(IdMapping::Memory(mapping));
        }
        let mut pairs = ExternalSorter::<2>::new(&self.dir, memory_bytes);
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
        if !self.table.is_empty() {
            self.spill()?;
        }
        let mut readers = Vec::with_capacity(self.runs.len());
        for run in &self.runs {
            let mut file = run.try_clone()?;
            file.rewind()?;
            readers.push(RunReader::new(file)?);
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
    fn new(file: File) -> Result<Self> {
        Ok(Self { reader: BufReader::with_capacity(1 << 18, file) })
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
