//! Datasets as `rete publish` lays them out in R2 (the `rete-layout` crate,
//! README "R2 layout"): `datasets/NAME/current.json` points at an immutable
//! `datasets/NAME/<content-hash>.rete`. Pointers are reused for a few
//! seconds; an opened file's header, INDEX and first 16 KiB stay in isolate
//! memory keyed by its object key (decoded blocks in the driver's cache
//! pool, keyed by content hash), so a warm request starts reading blocks at
//! once.

use crate::config::Config;
use crate::http_error::HttpError;
use crate::r2_source::R2;
use rete_core::format::FIRST_READ_BYTES;
use rete_core::format::index::Index;
use rete_core::read::decode_index;
use rete_core::{ByteRange, Header, SectionKind};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

pub use rete_layout::{ROOT, VersionEntry};

/// Largest `current.json` read (they are ~200 bytes).
const MAX_POINTER_BYTES: u64 = 64 << 10;

/// Files whose header and INDEX an isolate keeps.
const MAX_OPEN_FILES: usize = 8;

/// True for a name `rete publish` accepts.
pub fn is_name(name: &str) -> bool {
    rete_layout::check_name(name).is_ok()
}

/// An opened `.rete` object: what every request on it starts from.
pub struct OpenFile {
    /// The object key.
    pub key: String,
    /// R2's etag of the object (reads are pinned to it).
    pub etag: String,
    /// The decoded header.
    pub header: Header,
    /// The decoded INDEX.
    pub index: Index,
    /// Bytes `[0, 16 KiB)`: header, INDEX and usually CARD.
    pub prefix: Rc<Vec<u8>>,
    /// Other small ranges read since (CARD past the first 16 KiB…), kept
    /// up to [`MAX_KEPT_RANGE_BYTES`] in all.
    pub kept: RefCell<Vec<(ByteRange, Rc<Vec<u8>>)>>,
}

/// Bytes of non-block ranges an opened file keeps between requests.
pub const MAX_KEPT_RANGE_BYTES: u64 = 256 << 10;

impl OpenFile {
    /// Keeps a small range read by a request for the next ones.
    pub fn keep(&self, range: ByteRange, bytes: &Rc<Vec<u8>>) {
        let mut kept = self.kept.borrow_mut();
        let used: u64 = kept.iter().map(|(r, _)| r.length).sum();
        if used + range.length <= MAX_KEPT_RANGE_BYTES && !kept.iter().any(|(r, _)| *r == range) {
            kept.push((range, Rc::clone(bytes)));
        }
    }
}

/// A dataset resolved for one request.
#[derive(Clone)]
pub struct Dataset {
    /// Its name.
    pub name: String,
    /// The pointer read.
    pub entry: VersionEntry,
    /// The file it points at.
    pub file: Rc<OpenFile>,
}

struct Pointer {
    entry: VersionEntry,
    read_at_ms: f64,
}

thread_local! {
    static POINTERS: RefCell<HashMap<String, Pointer>> = RefCell::new(HashMap::new());
    /// Opened files by object key, most recently used last.
    static FILES: RefCell<Vec<(String, Rc<OpenFile>)>> = const { RefCell::new(Vec::new()) };
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Forgets what the isolate knows of a dataset (after it changed under a request).
pub fn forget(name: &str, key: &str) {
    POINTERS.with(|p| p.borrow_mut().remove(name));
    FILES.with(|f| f.borrow_mut().retain(|(k, _)| k != key));
}

/// The current version of a dataset; 404 when there is none.
pub async fn pointer(r2: &R2, config: &Config, name: &str) -> Result<VersionEntry, HttpError> {
    let unknown = || HttpError::NotFound(format!("no dataset named {name:?}"));
    if !is_name(name) {
        return Err(unknown());
    }
    let ttl_ms = config.pointer_ttl_s as f64 * 1000.0;
    let cached = POINTERS.with(|p| p.borrow().get(name).filter(|c| now_ms() - c.read_at_ms < ttl_ms).map(|c| c.entry.clone()));
    if let Some(entry) = cached {
        return Ok(entry);
    }
    let key = format!("{ROOT}{name}/current.json");
    r2.round();
    let bytes = r2.get_small(&key, MAX_POINTER_BYTES).await?.ok_or_else(unknown)?;
    let entry = VersionEntry::from_json(&bytes, name).map_err(|e| HttpError::Storage(format!("{key}: {e}")))?;
    POINTERS.with(|p| p.borrow_mut().insert(name.to_owned(), Pointer { entry: entry.clone(), read_at_ms: now_ms() }));
    Ok(entry)
}

/// Opens the file a pointer names (one read of 16 KiB when the isolate has
/// not seen this version, plus one when INDEX is longer).
pub async fn open(r2: &R2, entry: VersionEntry) -> Result<Dataset, HttpError> {
    let file = open_file(r2, &entry).await?;
    Ok(Dataset { name: entry.name.clone(), entry, file })
}

async fn open_file(r2: &R2, entry: &VersionEntry) -> Result<Rc<OpenFile>, HttpError> {
    let cached = FILES.with(|files| {
        let mut files = files.borrow_mut();
        let position = files.iter().position(|(key, _)| *key == entry.key)?;
        let hit = files.remove(position);
        files.push(hit.clone());
        Some(hit.1)
    });
    if let Some(file) = cached {
        return Ok(file);
    }
    let key = &entry.key;
    let gone = || HttpError::Changed(format!("{key}, named by the dataset's current.json, does not exist (replaced or collected); retry"));
    r2.round();
    let prefix = r2.get_prefix(key, FIRST_READ_BYTES.min(entry.bytes.max(1))).await?.ok_or_else(gone)?;
    let header = Header::decode(&prefix.bytes, Some(prefix.size)).map_err(|e| HttpError::Corrupt(format!("{key}: {e}")))?;
    if header.content_hash_hex() != entry.version {
        return Err(HttpError::Corrupt(format!("{key}: header content hash {} differs from the pointer's version {}", header.content_hash_hex(), entry.version)));
    }
    let section = *header.required(SectionKind::Index).map_err(|e| HttpError::Corrupt(format!("{key}: {e}")))?;
    let index_bytes = if section.offset + section.length <= prefix.bytes.len() as u64 {
        prefix.bytes[section.offset as usize..(section.offset + section.length) as usize].to_vec()
    } else {
        r2.round();
        r2.get_ranges(key, &prefix.etag, &[section.range()]).await?.pop().unwrap_or_default()
    };
    let index = decode_index(&header, &index_bytes).map_err(|e| HttpError::Corrupt(format!("{key}: {e}")))?;
    let file = Rc::new(OpenFile { key: key.clone(), etag: prefix.etag, header, index, prefix: Rc::new(prefix.bytes), kept: RefCell::default() });
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        files.retain(|(key, _)| *key != entry.key);
        if files.len() >= MAX_OPEN_FILES {
            files.remove(0);
        }
        files.push((entry.key.clone(), Rc::clone(&file)));
    });
    Ok(file)
}
