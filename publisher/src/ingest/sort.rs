//! The build's temporary files, and the external sort over them.
//!
//! Temporary files are the build's biggest cost in disk: at a billion quads a
//! plain 32-byte record per quad is 32 GB a copy, several times the output.
//! So every temporary file is a [`ChunkWriter`] stream: bytes cut into chunks
//! of [`CHUNK_BYTES`], each compressed with a fast zstd level (stored as is
//! when that does not help), and records of ids are coded as the varint of
//! each id's zigzag difference from the same id of the record before. Sorted
//! records (runs, the sorted quads, links by subject) code to a byte or two an
//! id. A file is released when its last handle goes: the merge drops a run as
//! soon as it is read to its end. A stream that ends within its first chunk
//! never becomes a file: it stays in memory, decoded (a small build's dozen
//! temporary streams cost no file, no write, no read and no zstd context).
//! The output's sections written before assembly (sealed blocks) are
//! [`SectionWriter`]s: in memory up to 1 MiB, a file past it.
//!
//! The external sort keeps sorted runs of at most `run_records` records on
//! disk, then merges them. Full-key order makes the result independent of run
//! boundaries and thread count.

use anyhow::{Context, Result, bail};
use rayon::slice::ParallelSliceMut;
use rete_core::ByteRange;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Decoded bytes per chunk: what a reader holds (twice, coded and decoded),
/// and what a merge holds per run.
const CHUNK_BYTES: usize = 64 << 10;
/// zstd level of temporary chunks: the fastest positive level (docs/BENCHMARK.md
/// "Scale (issue 17)" measures its cost against none).
const CHUNK_LEVEL: i32 = 1;
/// A write of at most this many bytes never spans two chunks.
const WHOLE_BYTES: usize = 4 << 10;
/// Set in a chunk's coded length when the chunk is stored uncompressed.
const STORED: u32 = 1 << 31;

/// A temporary file written as compressed chunks. Each chunk is `[coded
/// length u32 LE (bit 31: stored)][decoded length u32 LE][bytes]`. The file
/// and its compressor are made when the first chunk is full.
pub struct ChunkWriter {
    dir: PathBuf,
    file: Option<File>,
    chunk: Vec<u8>,
    coded: Vec<u8>,
    compressor: Option<zstd::bulk::Compressor<'static>>,
}

impl ChunkWriter {
    /// A new stream, an unnamed file in `dir` (removed when its last handle
    /// closes) once it outgrows one chunk.
    pub fn new(dir: &Path) -> Result<Self> {
        Ok(Self { dir: dir.to_owned(), file: None, chunk: Vec::with_capacity(CHUNK_BYTES + 1024), coded: Vec::new(), compressor: None })
    }

    fn flush_chunk(&mut self) -> std::io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = temp_file_in(&self.dir)?;
                self.file.insert(file)
            }
        };
        let compressor = match &mut self.compressor {
            Some(compressor) => compressor,
            None => self.compressor.insert(zstd::bulk::Compressor::new(CHUNK_LEVEL)?),
        };
        self.coded.clear();
        self.coded.reserve(zstd::zstd_safe::compress_bound(self.chunk.len()));
        compressor.compress_to_buffer(&self.chunk[..], &mut self.coded)?;
        let decoded = self.chunk.len() as u32;
        let (length, bytes) = if self.coded.len() < self.chunk.len() { (self.coded.len() as u32, &self.coded) } else { (decoded | STORED, &self.chunk) };
        let mut head = [0u8; 8];
        head[..4].copy_from_slice(&length.to_le_bytes());
        head[4..].copy_from_slice(&decoded.to_le_bytes());
        file.write_all(&head)?;
        file.write_all(bytes)?;
        self.chunk.clear();
        Ok(())
    }

    /// Writes the last chunk; the file can then be read. A stream that is
    /// still its first chunk stays in memory.
    pub fn finish(mut self) -> Result<TempFile> {
        if self.file.is_none() {
            self.chunk.shrink_to_fit();
            return Ok(TempFile::Memory(Arc::new(self.chunk)));
        }
        self.flush_chunk().context("cannot write a temporary file")?;
        match self.file {
            Some(file) => Ok(TempFile::Disk(file)),
            None => bail!("internal error: a temporary file flushed without a file"),
        }
    }
}

impl Write for ChunkWriter {
    /// Takes `bytes` into the current chunk, all of them when they are at
    /// most [`WHOLE_BYTES`]: a record written in one call never spans two chunks.
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = bytes.len().min(CHUNK_BYTES.saturating_sub(self.chunk.len()).max(WHOLE_BYTES));
        self.chunk.extend_from_slice(&bytes[..n]);
        if self.chunk.len() >= CHUNK_BYTES {
            self.flush_chunk()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An unnamed file in `dir`, removed when its last handle closes; the error
/// names the directory (a full or missing `--temp-dir` is the usual cause).
fn temp_file_in(dir: &Path) -> std::io::Result<File> {
    tempfile::tempfile_in(dir).map_err(|e| std::io::Error::new(e.kind(), format!("cannot create a temporary file in {}: {e}", dir.display())))
}

/// A finished temporary file; read it as often as needed.
pub enum TempFile {
    /// Chunks on disk.
    Disk(File),
    /// The one chunk of a stream that never outgrew it, decoded.
    Memory(Arc<Vec<u8>>),
}

impl TempFile {
    /// Bytes on disk.
    pub fn disk_bytes(&self) -> Result<u64> {
        match self {
            Self::Disk(file) => Ok(file.metadata()?.len()),
            Self::Memory(_) => Ok(0),
        }
    }

    /// A reader from the start, with its own position (readers do not disturb each other).
    pub fn reader(&self) -> Result<ChunkReader> {
        Ok(ChunkReader::new(match self {
            Self::Disk(file) => Self::Disk(file.try_clone().context("cannot reopen a temporary file")?),
            Self::Memory(chunk) => Self::Memory(Arc::clone(chunk)),
        }))
    }

    /// A reader that owns the file: its disk space is released when the reader goes.
    pub fn into_reader(self) -> ChunkReader {
        ChunkReader::new(self)
    }
}

/// Reads a [`ChunkWriter`]'s bytes back.
pub struct ChunkReader {
    /// A memory stream is taken out once it has been handed over as the chunk.
    source: Option<TempFile>,
    offset: u64,
    chunk: Vec<u8>,
    position: usize,
    coded: Vec<u8>,
}

impl ChunkReader {
    fn new(source: TempFile) -> Self {
        Self { source: Some(source), offset: 0, chunk: Vec::new(), position: 0, coded: Vec::new() }
    }

    /// Loads the next chunk; false at the end of the file.
    fn next_chunk(&mut self) -> Result<bool> {
        self.chunk.clear();
        self.position = 0;
        let file = match &mut self.source {
            Some(TempFile::Disk(file)) => file,
            Some(TempFile::Memory(_)) => {
                if let Some(TempFile::Memory(chunk)) = self.source.take() {
                    self.chunk.extend_from_slice(&chunk);
                }
                return Ok(!self.chunk.is_empty());
            }
            None => return Ok(false),
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let mut head = [0u8; 8];
        let mut read = 0;
        while read < head.len() {
            match file.read(&mut head[read..])? {
                0 if read == 0 => return Ok(false),
                0 => bail!("temporary file truncated at byte {}", self.offset),
                n => read += n,
            }
        }
        let length = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let decoded = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        if decoded > CHUNK_BYTES + WHOLE_BYTES {
            bail!("temporary file damaged at byte {}: a chunk of {decoded} bytes", self.offset);
        }
        if length & STORED != 0 {
            self.chunk.resize(decoded, 0);
            file.read_exact(&mut self.chunk).context("temporary file truncated")?;
            self.offset += 8 + decoded as u64;
        } else {
            self.coded.resize(length as usize, 0);
            file.read_exact(&mut self.coded).context("temporary file truncated")?;
            self.chunk.resize(decoded, 0);
            let n = zstd::bulk::decompress_to_buffer(&self.coded, &mut self.chunk[..]).context("temporary file damaged")?;
            if n != decoded {
                bail!("temporary file damaged at byte {}: {n} bytes decoded, {decoded} expected", self.offset);
            }
            self.offset += 8 + u64::from(length);
        }
        Ok(true)
    }
}

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ChunkReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.position == self.chunk.len() {
            self.next_chunk().map_err(std::io::Error::other)?;
        }
        Ok(&self.chunk[self.position..])
    }

    fn consume(&mut self, n: usize) {
        self.position = (self.position + n).min(self.chunk.len());
    }
}

/// Writes records of `N` ids, each id as the varint of its zigzag
/// difference from the same id of the record before.
pub struct RecordWriter<const N: usize> {
    chunks: ChunkWriter,
    previous: [u64; N],
    records: u64,
}

impl<const N: usize> RecordWriter<N> {
    /// A new temporary file of records in `dir`.
    pub fn new(dir: &Path) -> Result<Self> {
        Ok(Self { chunks: ChunkWriter::new(dir)?, previous: [0; N], records: 0 })
    }

    /// Appends a record.
    pub fn push(&mut self, record: &[u64; N]) -> Result<()> {
        const { assert!(N <= 8) };
        let mut bytes = [0u8; 80];
        let mut length = 0;
        for (value, previous) in record.iter().zip(&mut self.previous) {
            let difference = value.wrapping_sub(*previous);
            let mut zigzag = (difference << 1) ^ ((difference as i64 >> 63) as u64);
            while zigzag >= 0x80 {
                bytes[length] = zigzag as u8 | 0x80;
                zigzag >>= 7;
                length += 1;
            }
            bytes[length] = zigzag as u8;
            length += 1;
            *previous = *value;
        }
        // At most 80 bytes: one write, one chunk.
        self.chunks.write_all(&bytes[..length])?;
        self.records += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the last chunk; the records can then be read.
    pub fn finish(self) -> Result<TempRecords<N>> {
        Ok(TempRecords { file: self.chunks.finish()?, records: self.records })
    }
}

/// A finished file of records; read it as often as needed.
pub struct TempRecords<const N: usize> {
    file: TempFile,
    records: u64,
}

impl<const N: usize> TempRecords<N> {
    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes on disk.
    pub fn disk_bytes(&self) -> Result<u64> {
        self.file.disk_bytes()
    }

    /// A reader from the first record.
    pub fn reader(&self) -> Result<RecordReader<N>> {
        Ok(RecordReader { chunks: self.file.reader()?, previous: [0; N] })
    }

    /// A reader that owns the file: its disk space is released when the reader goes.
    pub fn into_reader(self) -> RecordReader<N> {
        RecordReader { chunks: self.file.into_reader(), previous: [0; N] }
    }
}

/// Reads a [`RecordWriter`]'s records back.
pub struct RecordReader<const N: usize> {
    chunks: ChunkReader,
    previous: [u64; N],
}

impl<const N: usize> RecordReader<N> {
    /// The next record, `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<[u64; N]>> {
        let bytes = self.chunks.fill_buf()?;
        if bytes.is_empty() {
            return Ok(None);
        }
        let mut used = 0;
        let mut record = [0u64; N];
        for (value, previous) in record.iter_mut().zip(&mut self.previous) {
            let mut zigzag = 0u64;
            let mut shift = 0;
            loop {
                // A record never spans chunks (RecordWriter writes it in one call).
                let Some(&byte) = bytes.get(used) else { bail!("temporary record file damaged: a record cut short") };
                used += 1;
                zigzag |= u64::from(byte & 0x7F) << shift;
                if byte < 0x80 {
                    break;
                }
                shift += 7;
                if shift > 63 {
                    bail!("temporary record file damaged: a varint over 64 bits");
                }
            }
            let difference = (zigzag >> 1) ^ (zigzag & 1).wrapping_neg();
            *value = previous.wrapping_add(difference);
            *previous = *value;
        }
        self.chunks.consume(used);
        Ok(Some(record))
    }
}

/// Sorts records pushed one by one, spilling runs to `dir`.
pub struct ExternalSorter<const N: usize> {
    dir: std::path::PathBuf,
    run_records: usize,
    buffer: Vec<[u64; N]>,
    runs: Vec<TempRecords<N>>,
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
        let mut run = RecordWriter::new(&self.dir)?;
        for record in self.buffer.drain(..) {
            run.push(&record)?;
        }
        self.runs.push(run.finish()?);
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
        // The merge reads a chunk of each run at a time.
        self.buffer = Vec::new();
        let mut readers = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::new();
        for (i, run) in self.runs.into_iter().enumerate() {
            let mut reader = run.into_reader();
            if let Some(record) = reader.next_record()? {
                heap.push(Reverse((record, i)));
            }
            readers.push(Some(reader));
        }
        Ok(SortedRecords { memory: Vec::new().into_iter(), readers, heap, last: None })
    }
}

/// The merged, deduplicated output of an [`ExternalSorter`].
pub struct SortedRecords<const N: usize> {
    memory: std::vec::IntoIter<[u64; N]>,
    /// A run's reader, dropped (and its file released) once read to its end.
    readers: Vec<Option<RecordReader<N>>>,
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
            let reader = &mut self.readers[i];
            match reader.as_mut().map(RecordReader::next_record).transpose()?.flatten() {
                Some(next) => self.heap.push(Reverse((next, i))),
                None => *reader = None,
            }
            if self.last != Some(record) {
                self.last = Some(record);
                return Ok(Some(record));
            }
        }
        Ok(None)
    }
}

/// What a finished section holds in memory at most before it goes to a
/// temporary file: the size of the write buffer each section had anyway.
const SECTION_MEMORY_BYTES: usize = 1 << 20;

/// A section of the output written before assembly (sealed blocks, member
/// pages, posting blocks): in memory while it is at most
/// [`SECTION_MEMORY_BYTES`], then in an unnamed temporary file in `dir`. A
/// small build's nine sections cost no file, no write and no read back (they
/// were most of its system calls, docs/RELIABILITY.md "Throughput").
pub struct SectionWriter {
    dir: PathBuf,
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
}

impl SectionWriter {
    /// A new, empty section.
    pub fn new(dir: &Path) -> Self {
        Self { dir: dir.to_owned(), memory: Vec::new(), file: None }
    }

    /// The section's bytes, to read back and to copy into the output.
    pub fn finish(self) -> Result<Section> {
        match self.file {
            None => Ok(Section::Memory(self.memory)),
            Some(file) => Ok(Section::Disk(file.into_inner().map_err(|e| e.into_error()).context("cannot flush a temporary file")?)),
        }
    }
}

impl Write for SectionWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Some(file) = &mut self.file {
            return file.write(bytes);
        }
        self.memory.extend_from_slice(bytes);
        if self.memory.len() > SECTION_MEMORY_BYTES {
            let mut file = BufWriter::with_capacity(SECTION_MEMORY_BYTES, temp_file_in(&self.dir)?);
            file.write_all(&std::mem::take(&mut self.memory))?;
            self.file = Some(file);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

/// A finished [`SectionWriter`]'s bytes.
pub enum Section {
    /// At most [`SECTION_MEMORY_BYTES`].
    Memory(Vec<u8>),
    /// More, in a temporary file (removed when closed).
    Disk(File),
}

impl Section {
    /// The bytes of `range` (relative to the section).
    pub fn read(&mut self, range: ByteRange) -> Result<Cow<'_, [u8]>> {
        match self {
            Self::Memory(bytes) => {
                let start = usize::try_from(range.offset)?;
                let end = start.checked_add(usize::try_from(range.length)?).filter(|&end| end <= bytes.len()).context("internal error: a range past the end of its section")?;
                Ok(Cow::Borrowed(&bytes[start..end]))
            }
            Self::Disk(file) => {
                let mut bytes = vec![0u8; usize::try_from(range.length)?];
                file.seek(SeekFrom::Start(range.offset))?;
                file.read_exact(&mut bytes)?;
                Ok(Cow::Owned(bytes))
            }
        }
    }

    /// Writes the whole section to `out`.
    pub fn copy_to(&mut self, out: &mut impl Write) -> Result<()> {
        match self {
            Self::Memory(bytes) => out.write_all(bytes)?,
            Self::Disk(file) => {
                file.rewind()?;
                std::io::copy(file, out)?;
            }
        }
        Ok(())
    }
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

    #[test]
    fn records_round_trip_across_chunks_with_any_ids() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = RecordWriter::<4>::new(dir.path()).unwrap();
        // Sorted runs, random jumps, the extremes; enough records for several chunks.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut records = Vec::new();
        for i in 0..100_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            records.push(match i % 4 {
                0 => [i, i / 3, 7, 0],
                1 => [state, u64::MAX, 0, state >> 40],
                2 => [u64::MAX, 0, u64::MAX, 1 << 63],
                _ => [i, state % 1000, i * 5, 0],
            });
        }
        for record in &records {
            writer.push(record).unwrap();
        }
        let file = writer.finish().unwrap();
        assert_eq!(file.records(), records.len() as u64);
        // Two readers at once keep their own positions.
        let mut first = file.reader().unwrap();
        let mut second = file.reader().unwrap();
        for record in &records {
            assert_eq!(first.next_record().unwrap().as_ref(), Some(record));
            assert_eq!(second.next_record().unwrap().as_ref(), Some(record));
        }
        assert_eq!(first.next_record().unwrap(), None);
        let mut owned = file.into_reader();
        assert_eq!(owned.next_record().unwrap(), Some(records[0]));
    }

    #[test]
    fn sorted_records_code_to_a_few_bytes_each() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = RecordWriter::<4>::new(dir.path()).unwrap();
        for i in 0..1_000_000u64 {
            writer.push(&[i / 8, 1 + i % 8, 1_000_000 + (i * 7919) % 500_000, 0]).unwrap();
        }
        let file = writer.finish().unwrap();
        // 32 bytes a record unpacked; well under 8 coded and compressed.
        assert!(file.disk_bytes().unwrap() < 8_000_000, "{} bytes", file.disk_bytes().unwrap());
    }

    #[test]
    fn byte_streams_round_trip_and_damage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = ChunkWriter::new(dir.path()).unwrap();
        let text: Vec<u8> = (0..300_000u32).flat_map(|i| format!("<http://example.org/{i}>").into_bytes()).collect();
        writer.write_all(&text).unwrap();
        let file = writer.finish().unwrap();
        assert!(file.disk_bytes().unwrap() < text.len() as u64 / 3);
        let mut back = Vec::new();
        file.reader().unwrap().read_to_end(&mut back).unwrap();
        assert_eq!(back, text);
        // A chunk cut short is an error, not a panic or a short read.
        let length = file.disk_bytes().unwrap();
        let TempFile::Disk(disk) = &file else { panic!("a stream of {} bytes stayed in memory", text.len()) };
        disk.set_len(length - 10).unwrap();
        let mut back = Vec::new();
        assert!(file.reader().unwrap().read_to_end(&mut back).is_err());
    }

    #[test]
    fn a_stream_within_one_chunk_stays_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = RecordWriter::<4>::new(dir.path()).unwrap();
        for i in 0..100u64 {
            writer.push(&[i, i + 1, u64::MAX - i, 0]).unwrap();
        }
        let records = writer.finish().unwrap();
        assert_eq!(records.disk_bytes().unwrap(), 0);
        assert!(matches!(records.file, TempFile::Memory(_)), "no file made (an O_TMPFILE file is not listed in the directory)");
        // Every reader starts at the first record, the owning one too.
        for mut reader in [records.reader().unwrap(), records.reader().unwrap()] {
            for i in 0..100u64 {
                assert_eq!(reader.next_record().unwrap(), Some([i, i + 1, u64::MAX - i, 0]));
            }
            assert_eq!(reader.next_record().unwrap(), None);
        }
        let mut owner = records.into_reader();
        assert_eq!(owner.next_record().unwrap(), Some([0, 1, u64::MAX, 0]));
        let empty = ChunkWriter::new(dir.path()).unwrap().finish().unwrap();
        assert_eq!(empty.reader().unwrap().read_to_end(&mut Vec::new()).unwrap(), 0);
    }

    #[test]
    fn a_section_stays_in_memory_up_to_its_bound_then_goes_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let block: Vec<u8> = (0..=255u8).cycle().take(100_003).collect();
        for blocks in [0, 3, SECTION_MEMORY_BYTES / block.len() + 2] {
            let mut writer = SectionWriter::new(dir.path());
            for _ in 0..blocks {
                writer.write_all(&block).unwrap();
            }
            let mut section = writer.finish().unwrap();
            assert_eq!(matches!(section, Section::Disk(_)), blocks * block.len() > SECTION_MEMORY_BYTES, "{blocks} blocks");
            for n in [0, blocks / 2, blocks.saturating_sub(1)].into_iter().filter(|&n| n < blocks) {
                let range = ByteRange { offset: (n * block.len()) as u64, length: block.len() as u64 };
                assert_eq!(section.read(range).unwrap(), &block[..], "block {n} of {blocks}");
            }
            assert!(section.read(ByteRange { offset: (blocks * block.len()) as u64, length: 1 }).is_err());
            let mut copied = Vec::new();
            section.copy_to(&mut copied).unwrap();
            assert_eq!(copied.len(), blocks * block.len());
            assert!(copied.chunks(block.len()).all(|chunk| chunk == &block[..]));
        }
    }
}
