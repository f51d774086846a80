//! Sealed blocks (FORMAT.md §5.3): a zstd frame plus a 4-byte checksum.
//! Opening checks the checksum and the declared size before decompressing,
//! so a corrupt block costs an error, never a huge allocation.

use super::MAX_BLOCK_RAW_BYTES;
use crate::FormatError;
use xxhash_rust::xxh3::xxh3_64;

/// Compresses `raw` and appends the checksum trailer.
#[cfg(feature = "write")]
pub fn seal(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut sealed = compress(raw)?;
    let checksum = xxh3_64(&sealed) as u32;
    sealed.extend_from_slice(&checksum.to_le_bytes());
    Ok(sealed)
}

/// Like [`seal`], with zstd's block splitter on (FORMAT.md §12.6: the
/// search index's posting blocks). zstd turns the splitter on by itself only
/// from level 16 and for windows of 128 KiB and more, while a frame of known
/// size gets a window fitted to it; on a block of columns (keys, ids, small
/// weights) it cuts where the statistics change: 9 % smaller at level 9, as
/// small as level 19 for a tenth of its time (docs/BENCHMARK.md, "Label search").
#[cfg(feature = "write")]
pub fn seal_split(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    use zstd::zstd_safe::{CParameter, ParamSwitch};
    let mut compressor = zstd::bulk::Compressor::new(super::ZSTD_LEVEL)?;
    compressor.set_parameter(CParameter::UseBlockSplitter(ParamSwitch::Enable))?;
    let mut sealed = compressor.compress(raw)?;
    let checksum = xxh3_64(&sealed) as u32;
    sealed.extend_from_slice(&checksum.to_le_bytes());
    Ok(sealed)
}

/// A zstd frame declaring its content size, at the format's fixed level.
#[cfg(feature = "write")]
pub fn compress(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    // One compression context per thread, reused: creating one per block costs
    // megabytes of fresh pages each time. The output is the same as a new one's.
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    COMPRESSOR.with_borrow_mut(|compressor| {
        let compressor = match compressor {
            Some(compressor) => compressor,
            None => compressor.insert(zstd::bulk::Compressor::new(super::ZSTD_LEVEL)?),
        };
        // bulk compression writes the content size into the frame header (FORMAT.md §5.3).
        let mut frame = compressor.compress(raw)?;
        frame.shrink_to_fit();
        Ok(frame)
    })
}

/// Like [`compress`] at zstd's level 19, for what must fit the open's 16 KiB
/// (INDEX and CARD, FORMAT.md §1): a few kilobytes compressed once per file,
/// ~5 % smaller than at the blocks' level (LUBM(10)'s INDEX 9,761 → 9,212
/// bytes) for a few milliseconds.
#[cfg(feature = "write")]
pub fn compress_first_read(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    zstd::bulk::Compressor::new(FIRST_READ_ZSTD_LEVEL)?.compress(raw)
}

#[cfg(feature = "write")]
const FIRST_READ_ZSTD_LEVEL: i32 = 19;

/// Verifies the trailer and decompresses; `what` and `offset` name the block in errors.
pub fn open(sealed: &[u8], what: &dyn Fn() -> String, offset: u64) -> Result<Vec<u8>, FormatError> {
    let corrupt = |reason: String| FormatError::corrupt(what(), offset, reason);
    if sealed.len() < 4 {
        return Err(corrupt(format!("{} bytes is too short for a block", sealed.len())));
    }
    let (frame, trailer) = sealed.split_at(sealed.len() - 4);
    let expected = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    if xxh3_64(frame) as u32 != expected {
        return Err(corrupt("checksum mismatch".into()));
    }
    decompress(frame, MAX_BLOCK_RAW_BYTES).map_err(corrupt)
}

/// Decompresses one zstd frame whose declared size must be at most `limit`.
pub fn decompress(frame: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) => size,
        Ok(None) => return Err("zstd frame does not declare its size".into()),
        Err(_) => return Err("not a zstd frame".into()),
    };
    if size > limit {
        return Err(format!("declares {size} bytes, more than the {limit}-byte limit"));
    }
    // One decompression context per thread, reused: a new one costs a large
    // allocation and its initialisation, a fifth of the time of reading a
    // small file's blocks (measured by the query_damaged fuzz target).
    thread_local! {
        static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    let raw = DECOMPRESSOR.with_borrow_mut(|decompressor| {
        let decompressor = match decompressor {
            Some(decompressor) => decompressor,
            None => decompressor.insert(zstd::bulk::Decompressor::new()?),
        };
        decompressor.decompress(frame, size as usize)
    });
    let raw = raw.map_err(|e| format!("zstd: {e}"))?;
    if raw.len() as u64 != size {
        return Err(format!("decompressed to {} bytes, frame declared {size}", raw.len()));
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> String {
        "test block".into()
    }

    #[test]
    fn round_trip() {
        let raw = b"hello hello hello hello".repeat(10);
        assert_eq!(open(&seal(&raw).unwrap(), &name, 0).unwrap(), raw);
        assert_eq!(open(&seal(&[]).unwrap(), &name, 0).unwrap(), b"");
    }

    #[test]
    fn sealed_split_declares_its_size() {
        for raw in [b"posting columns ".repeat(3000), Vec::new()] {
            let sealed = seal_split(&raw).unwrap();
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&sealed[..sealed.len() - 4]).ok(), Some(Some(raw.len() as u64)));
            assert_eq!(open(&sealed, &name, 0).unwrap(), raw);
        }
    }

    #[test]
    fn detects_corruption() {
        let mut sealed = seal(b"some bytes to compress").unwrap();
        sealed[3] ^= 1;
        let error = open(&sealed, &name, 7).unwrap_err();
        assert_eq!(error.to_string(), "corrupt test block at byte 7: checksum mismatch");
        assert!(open(&[1, 2], &name, 0).is_err());
    }
}
