//! One `.rete` object in R2 as a range source: the ranges of a round read
//! concurrently, each pinned to the etag the first read learnt, so bytes of
//! two versions are never mixed.

use crate::http_error::HttpError;
use crate::r2::R2;
use futures_util::future::join_all;
use rete_core::ByteRange;

/// The ranges of one object.
pub struct R2Source {
    r2: R2,
    key: String,
    etag: String,
}

impl R2Source {
    /// The object `key` as it was when its etag was `etag`.
    pub fn new(r2: R2, key: String, etag: String) -> Self {
        Self { r2, key, etag }
    }

    /// The bytes of each range, in order, all requested at once.
    pub async fn read(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, HttpError> {
        join_all(ranges.iter().map(|range| self.r2.get_range(&self.key, &self.etag, *range))).await.into_iter().collect()
    }
}
