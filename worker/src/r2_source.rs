//! One `.rete` object in R2 as a range source: the ranges of a round read
//! concurrently, each pinned to the etag the first read learnt when it came
//! from R2. An object under a content-hash key never changes (README "R2
//! layout"), and every block is checked against INDEX, so an unpinned read
//! can fail but never mix two files.

use crate::http_error::HttpError;
use crate::r2::R2;
use futures_util::future::join_all;
use rete_core::ByteRange;

/// The ranges of one object.
pub struct R2Source {
    r2: R2,
    key: String,
    etag: Option<String>,
}

impl R2Source {
    /// The object `key`, as it was when its etag was `etag` if known.
    pub fn new(r2: R2, key: String, etag: Option<String>) -> Self {
        Self { r2, key, etag }
    }

    /// The bytes of each range, in order, all requested at once.
    pub async fn read(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, HttpError> {
        join_all(ranges.iter().map(|range| self.r2.get_range(&self.key, self.etag.as_deref(), *range))).await.into_iter().collect()
    }
}
