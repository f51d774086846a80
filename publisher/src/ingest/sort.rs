//! External sort of fixed-size records of u64s: sorted runs of at most
//! `run_records` records on disk, then a k-way merge. Full-key order makes
//! the result independent of run boundaries and thread count.

use anyhow::{Context, Result};
use rayon::slice::ParallelSliceMut;
use std::collections::BinaryHeap;
use std::cmp::Reverse;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Sorts records pushed one by one, spilling runs to `dir`.
pub struct ExternalSorter<const N: usize> {
    dir: std::path::PathBuf,
    run_records: usize,
    buffer: Vec<[u64; N]>,
    runs: Vec<File>,
}

impl<const N: usize> ExternalSorter<N> {
    /// A sorter keeping at most `memory_bytes` of records in memory.
    pub fn new(dir: &Path, memory_bytes: usize) -> Self {
        let run_records = (memory_bytes / (8 * N)).max(1024);
        Self { dir: dir.to_owned(), run_records, buffer: Vec::new(), runs: Vec::new() }
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
        let mut readers = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::new();
        for (i, mut file) in self.runs.into_iter().enumerate() {
            use std::io::Seek;
            file.rewind()?;
            let mut reader = BufReader::with_capacity(1 << 18, file);
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
    for value in record {
        writer.write_all(&value.to_le_bytes())?;
    }
    Ok(())
}

/// Reads a record, `None` at a clean end of file.
pub fn read_record<const N: usize>(reader: &mut impl Read) -> Result<Option<[u64; N]>> {
    let mut record = [0u64; N];
    let mut bytes = [0u8; 8];
    for (i, value) in record.iter_mut().enumerate() {
        match reader.read_exact(&mut bytes) {
            Ok(()) => *value = u64::from_le_bytes(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && i == 0 => return Ok(None),
            Err(e) => return Err(e).context("temporary file truncated"),
        }
    }
    Ok(Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_dedups_across_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut sorter = ExternalSorter::<2>::new(dir.path(), 0);
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
