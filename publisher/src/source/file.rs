//! A local file as a [`RangeSource`], counting requests and bytes so that
//! `rete cost` and the tests can see what a query read.

use rete_core::{ByteRange, RangeSource, ReadError};
use std::cell::Cell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Positional reads from a local file.
pub struct FileSource {
    file: File,
    path: PathBuf,
    length: u64,
    requests: Cell<u64>,
    bytes: Cell<u64>,
}

impl FileSource {
    /// Opens a file.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = File::open(path)?;
        let length = file.metadata()?.len();
        Ok(Self { file, path: path.to_owned(), length, requests: Cell::new(0), bytes: Cell::new(0) })
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// File length.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// Ranges read so far.
    pub fn requests(&self) -> u64 {
        self.requests.get()
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.get()
    }
}

impl RangeSource for FileSource {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        ranges
            .iter()
            .map(|range| {
                let end = range.end().min(self.length);
                let mut buffer = vec![0u8; end.saturating_sub(range.offset) as usize];
                self.file.read_exact_at(&mut buffer, range.offset).map_err(|e| ReadError::Source(e.to_string()))?;
                self.requests.set(self.requests.get() + 1);
                self.bytes.set(self.bytes.get() + buffer.len() as u64);
                Ok(buffer)
            })
            .collect()
    }
}
