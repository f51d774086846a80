//! Errors of the format and of reading, kept apart because hosts react
//! differently: corrupt bytes are a server fault, a failed read may be retried.

/// The bytes do not form a valid `.rete` file (or not one this build reads).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// The file does not start with the `.rete` magic number.
    #[error("not a .rete file (bad magic number)")]
    BadMagic,
    /// The major version is one this build cannot read.
    #[error("file is rete format {found}; this build reads formats 1 to {supported}")]
    UnsupportedVersion {
        /// Major version in the file.
        found: u16,
        /// Highest major version this build reads.
        supported: u16,
    },
    /// The file needs features this build does not know (FORMAT.md §2,
    /// `required_features`): a newer rete wrote it.
    #[error("file needs {} this build does not know (it knows: {known}); read it with a newer rete", unknown_features(*bits))]
    UnsupportedFeatures {
        /// The unknown bits of `required_features`.
        bits: u64,
        /// The names of the features this build knows.
        known: String,
    },
    /// A structure is inconsistent, truncated or fails its checksum.
    #[error("corrupt {section} at byte {offset}: {reason}")]
    Corrupt {
        /// The part of the file: "header", "INDEX", "dictionary block 3", …
        section: String,
        /// Absolute byte offset of that part.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// "feature bit 3", "feature bits 3, 5".
fn unknown_features(bits: u64) -> String {
    let numbers: Vec<String> = (0..64).filter(|bit| bits & (1 << bit) != 0).map(|bit: u32| bit.to_string()).collect();
    format!("required feature bit{} {}", if numbers.len() == 1 { "" } else { "s" }, numbers.join(", "))
}

impl FormatError {
    pub(crate) fn corrupt(section: impl Into<String>, offset: u64, reason: impl Into<String>) -> Self {
        Self::Corrupt { section: section.into(), offset, reason: reason.into() }
    }
}

/// Reading a file through a [`crate::RangeSource`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file's bytes are invalid.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The source could not deliver the bytes (I/O, network, changed file).
    #[error("read failed: {0}")]
    Source(String),
    /// The source has not got these bytes yet: an asynchronous host fetches
    /// them and evaluates again (see `docs/READ-PATH.md`).
    #[error("{count} byte ranges are not loaded yet", count = .0.len())]
    Missing(Vec<crate::ByteRange>),
    /// A read budget of the host would be exceeded: the decoded blocks one
    /// query needs at once (the block cache's budget), or rounds of reads.
    #[error("{}", read_budget_message(*limit, *max))]
    Budget {
        /// The limit that was reached.
        limit: ReadLimit,
        /// Its value.
        max: u64,
    },
}

/// The read budgets of [`ReadError::Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadLimit {
    /// Bytes of decoded blocks held at once for one query (the block cache).
    CacheBytes,
    /// Sequential rounds of reads for one query.
    Rounds,
}

impl ReadLimit {
    /// A short name for headers and logs: `cache-bytes`, `rounds`.
    pub fn name(self) -> &'static str {
        match self {
            Self::CacheBytes => "cache-bytes",
            Self::Rounds => "rounds",
        }
    }
}

fn read_budget_message(limit: ReadLimit, max: u64) -> String {
    match limit {
        ReadLimit::CacheBytes => format!("query needs more than the block cache's {max} bytes of decoded blocks at once; give the cache more memory or narrow the query"),
        ReadLimit::Rounds => format!("query needs more than {max} rounds of reads"),
    }
}
