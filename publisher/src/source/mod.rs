//! Byte-range sources the CLI reads `.rete` files through: a local file or
//! a URL, and the open that reads them in rounds (`docs/READ-PATH.md`).

pub mod file;
pub mod http;

use anyhow::{Context, Result, bail};
use file::FileSource;
use http::HttpSource;
use rete_core::read::{BlockCache, RoundStats, Unfetched, open_in_rounds};
use rete_core::{ByteRange, FormatError, RangeSource, ReadError, Store};
use std::path::Path;

/// Where a `.rete` file is: the FILE|URL argument of `query` and `cost`.
pub enum Location {
    /// A local file.
    File(FileSource),
    /// A file on an HTTP server that honours `Range`.
    Http(HttpSource),
}

impl Location {
    /// A URL when the argument starts with `http://` or `https://`, else a path.
    pub fn open(argument: &Path) -> Result<Self> {
        match argument.to_str().filter(|text| http::is_url(text)) {
            Some(url) => Ok(Self::Http(HttpSource::new(url))),
            None => Ok(Self::File(FileSource::open(argument).with_context(|| format!("cannot open {}", argument.display()))?)),
        }
    }

    /// The file's length, when known (a URL's once a response told it).
    pub fn length(&self) -> Option<u64> {
        match self {
            Self::File(file) => Some(file.length()),
            Self::Http(http) => http.length(),
        }
    }

    /// How to name it in messages.
    pub fn name(&self) -> String {
        match self {
            Self::File(file) => file.path().display().to_string(),
            Self::Http(http) => http.url().to_owned(),
        }
    }

    /// Opens the file in rounds (one read of its first 16 KiB, rarely two)
    /// for a store that gets every block from [`rete_core::read::run_in_rounds`].
    pub fn open_in_rounds(&self, cache_bytes: usize) -> Result<(Store<Unfetched>, RoundStats)> {
        let (store, stats) = open_in_rounds(|ranges| self.read_ranges(ranges), BlockCache::new(cache_bytes)).with_context(|| format!("cannot read {}", self.name()))?;
        let declared = store.header().file_length;
        if let Some(length) = self.length().filter(|&length| length != declared) {
            bail!(FormatError::Corrupt { section: "header".into(), offset: 0x20, reason: format!("{} is {length} bytes but its header says {declared}: truncated or rewritten", self.name()) });
        }
        Ok((store, stats))
    }
}

impl RangeSource for Location {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        match self {
            Self::File(file) => file.read_ranges(ranges),
            Self::Http(http) => http.read_ranges(ranges),
        }
    }
}
