//! External sort of fixed-size records of u64s: sorted runs of at most
//! `run_records` records on disk, then a k-way merge. Full-key order makes
//! the result independent of run boundaries and thread count.

use anyhow::{Context, Result};
use rayon::slice::ParallelSliceMut;
use std::collections::BinaryHeap;
use std::cmp::Reverse;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

/// Sorts records pushed one by one, spilling runs to `dir`.
pub struct ExternalSorter<const N: usize> {
    dir: std::path::PathBuf,
    run_records: usize,
    buffer: Vec<[u64; N]>,
    runs: Vec<File>,
}

impl<const N: usize> ExternalSorter<N> {
    /// A sorter keeping at most `memory_bytes` of records in memory, for about
    /// `expected_records`. Its buffer is allocated once, at its final size: a
    /// buffer grown by doubling leaves its smaller copies in the allocator's
    /// heap, adding to the process's size for the rest of the build.
    pub fn new(dir: &Path, memory_bytes: usize, expected_records: u64) -> Self {
        let run_records = (memory_bytes / (8 * N)).max(1024);
        let capacity = usize::try_from(expected_records).unwrap_or(usize::MAX).clamp(1, run_records);
        Self { dir: dir.to_owned(), run_records, buffer: Vec::with_capacity(capacity), runs: Vec::new() }
    }

    /// Adds a record.
    pub fn push(&mut self, record: [u64; N]) -> Result<()> {
        self.buffer.push(record);
        if self.buffer.len() >= self.run_records {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        self.buffer.par_sort_unstable();
        self.buffer.dedup();
        let mut file = tempfile::tempfile_in(&self.dir).context("cannot create a temporary file")?;
        {
            let mut writer = BufWriter::with_capacity(1 << 20, &mut file);
            for record in self.buffer.drain(..) {
                write_record(&mut writer, &record)?;
            }
            writer.flush()?;
        }
        self.runs.push(file);
        Ok(())
    }

    /// Sorted records, duplicates removed, in one pass.
    pub fn finish(mut self) -> Result<SortedRecords<N>> {
        if self.runs.is_empty() {
            self.buffer.par_sort_unstable();
            self.buffer.dedup();
            return Ok(SortedRecords { memory: self.buffer.into_iter(), readers: Vec::new(), heap: BinaryHeap::new(), last: None });
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        // The merge's read buffers share the memory the run buffer had.
        self.buffer = Vec::new();
        let buffer_bytes = (self.run_records * 8 * N / self.runs.len()).clamp(4 << 10, 256 << 10);
        let mut readers = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::new();
        for (i, mut file) in self.runs.into_iter().enumerate() {
            use std::io::Seek;
            file.rewind()?;
            let mut reader = BufReader::with_capacity(buffer_bytes, file);
            if let Some(record) = read_record(&mut reader)? {
                heap.push(Reverse((record, i)));
            }
            readers.push(reader);
        }
        Ok(SortedRecords { memory: Vec::new().into_iter(), readers, heap, last: None })
    }
}

/// The merged, deduplicated output of an [`ExternalSorter`].
pub struct SortedRecords<const N: usize> {
    memory: std::vec::IntoIter<[u64; N]>,
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<([u64; N], usize)>>,
    last: Option<[u64; N]>,
}

impl<const N: usize> SortedRecords<N> {
    /// The next distinct record.
    pub fn next_record(&mut self) -> Result<Option<[u64; N]>> {
        if self.readers.is_empty() {
            return Ok(self.memory.next());
        }
        while let Some(Reverse((record, i))) = self.heap.pop() {
            if let Some(next) = read_record(&mut self.readers[i])? {
                self.heap.push(Reverse((next, i)));
            }
            if self.last != Some(record) {
                self.last = Some(record);
                return Ok(Some(record));
            }
        }
        Ok(None)
    }
}

/// Writes a record as little-endian u64s.
pub fn write_record<const N: usize>(writer: &mut impl Write, record: &[u64; N]) -> Result<()> {
    let mut bytes = [0u8; 64];
    for (chunk, value) in bytes.chunks_exact_mut(8).zip(record) {
        chunk.copy_from_slice(&value.to_le_bytes());
    }
    writer.write_all(&bytes[..8 * N])?;
    Ok(())
}

/// Reads a record, `None` at a clean end of file.
pub fn read_record<const N: usize>(reader: &mut impl BufRead) -> Result<Option<[u64; N]>> {
    const { assert!(N <= 8) };
    let mut bytes = [0u8; 64];
    let bytes = &mut bytes[..8 * N];
    // A whole record is usually in the buffer: take it without read_exact's loop.
    let buffered = reader.fill_buf()?;
    if buffered.len() >= bytes.len() {
        bytes.copy_from_slice(&buffered[..bytes.len()]);
        reader.consume(bytes.len());
    } else if buffered.is_empty() {
        return Ok(None);
    } else {
        reader.read_exact(bytes).context("temporary file truncated")?;
    }
    let mut record = [0u64; N];
    for (value, chunk) in record.iter_mut().zip(bytes.chunks_exact(8)) {
        *value = u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
    }
    Ok(Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_dedups_across_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut sorter = ExternalSorter::<2>::new(dir.path(), 0, 5000);
        for i in (0..5000u64).rev() {
            sorter.push([i % 1000, i % 7]).unwrap();
        }
        let mut sorted = sorter.finish().unwrap();
        let mut all = Vec::new();
        while let Some(record) = sorted.next_record().unwrap() {
            all.push(record);
        }
        let mut expected: Vec<[u64; 2]> = (0..5000u64).map(|i| [i % 1000, i % 7]).collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(all, expected);
    }
}
