//! Datasets as `rete publish` lays them out in R2 (the `rete-layout` crate,
//! README "R2 layout"): `datasets/NAME/current.json` points at an immutable
//! `datasets/NAME/<content-hash>.rete`. A pointer carries the file's first
//! read (`head`, when `rete publish` wrote it), so a cold request opens the
//! file in the pointer's round. Pointers are reused for a few seconds
//! (`POINTER_TTL_S`), then read again only if they changed (a conditional
//! get on their etag); an opened file's header, INDEX, first read and small sections
//! stay in isolate memory keyed by its object key (decoded blocks in the
//! block-cache pool, keyed by content hash), so a warm request starts
//! reading blocks at once.

use crate::edge_cache::{self, EdgeCache};
use crate::http::Ctx;
use crate::http_error::HttpError;
use crate::usage::Usage;
use futures_util::future::join_all;
use rete_core::format::FIRST_READ_BYTES;
use rete_core::format::index::Index;
use rete_core::read::{LiteralKinds, Opening, checked_prefix_length, decode_index, open_prefix};
use rete_core::{ByteRange, Header};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

pub use rete_layout::{ROOT, VersionEntry};

/// Largest `current.json` read (they are ~200 bytes).
const MAX_POINTER_BYTES: u64 = 64 << 10;

/// Files whose header and INDEX an isolate keeps.
const MAX_OPEN_FILES: usize = 8;

/// Bytes of sections (CARD past the first read, SUMMARY, member pages) an
/// opened file keeps between requests.
const MAX_KEPT_BYTES: u64 = 256 << 10;

/// True for a name `rete publish` accepts.
pub fn is_name(name: &str) -> bool {
    rete_layout::check_name(name).is_ok()
}

/// An opened `.rete` object: what every request on it starts from.
pub struct OpenFile {
    /// The object key.
    pub key: String,
    /// R2's etag of the object when the first read came from R2 (reads are
    /// then pinned to it); `None` when it came from the Cache API.
    pub etag: Option<String>,
    /// The decoded header.
    pub header: Header,
    /// The decoded INDEX.
    pub index: Index,
    /// Pieces of the file kept for the next requests: the first read
    /// (header, INDEX, usually CARD), then small sections read since.
    kept: RefCell<Vec<(ByteRange, Arc<[u8]>)>>,
    /// What the next request on this file takes as [`Dataset::seen_here`]:
    /// `Unasked` until a request asked (the file opened from the pointer's
    /// head), then `Yes` (the first read and the blocks this isolate read are
    /// being shared).
    seen_here: std::cell::Cell<SeenHere>,
    /// What a request's store learnt of the file's literal kinds (from the
    /// card), given to the next requests' stores so that each does not parse
    /// the card again (`Store::known_literal_kinds`).
    literal_kinds: RefCell<Option<Option<Arc<LiteralKinds>>>>,
}

impl OpenFile {
    /// The pieces kept, to give a new store.
    pub fn kept(&self) -> Vec<(ByteRange, Arc<[u8]>)> {
        self.kept.borrow().clone()
    }

    /// Keeps the pieces a request's store held that are not kept yet, while
    /// they fit in [`MAX_KEPT_BYTES`] beside the first read.
    pub fn keep(&self, pieces: Vec<(ByteRange, Arc<[u8]>)>) {
        let mut kept = self.kept.borrow_mut();
        for (range, bytes) in pieces {
            let used: u64 = kept.iter().skip(1).map(|(r, _)| r.length).sum();
            if used + range.length <= MAX_KEPT_BYTES && !kept.iter().any(|(r, _)| *r == range) {
                kept.push((range, bytes));
            }
        }
    }

    /// The file's literal kinds, when a request learnt them.
    pub fn literal_kinds(&self) -> Option<Option<Arc<LiteralKinds>>> {
        self.literal_kinds.borrow().clone()
    }

    /// Keeps what a request's store learnt of the file's literal kinds.
    pub fn keep_literal_kinds(&self, kinds: Option<Option<Arc<LiteralKinds>>>) {
        if kinds.is_some() {
            *self.literal_kinds.borrow_mut() = kinds;
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
    pub file: std::rc::Rc<OpenFile>,
    /// Whether the location's Cache API holds the file's pieces, for this request.
    pub seen_here: SeenHere,
}

/// Whether a location has seen a file: its Cache API holds the file's first
/// read, written by the first isolate there that read blocks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeenHere {
    /// Seen (or not asked, no subrequest being left to ask): blocks are looked up there.
    Yes,
    /// Not seen: blocks are read from R2 without a lookup (each would miss
    /// and take a subrequest the cache writes need), then shared.
    No,
    /// Not asked yet: the file opened from the pointer's head, and no round
    /// has needed the Cache API. The first that does looks its bundle up,
    /// which answers when found ([`seen`]), else asks ([`ask_seen_here`]); a
    /// request that reads nothing past the first read (the card) never does.
    Unasked,
}

struct Pointer {
    /// The entry, without `head` (requests clone it).
    entry: VersionEntry,
    /// `head` decoded once: the file's first read, when the entry carries it.
    first_read: Option<Arc<[u8]>>,
    /// R2's etag of `current.json`: a pointer past its TTL is read again
    /// only if it changed (it carries the file's first read, ~22 KB).
    etag: String,
    read_at_ms: f64,
}

thread_local! {
    static POINTERS: RefCell<HashMap<String, Pointer>> = RefCell::new(HashMap::new());
    /// Opened files by object key, most recently used last.
    static FILES: RefCell<Vec<(String, std::rc::Rc<OpenFile>)>> = const { RefCell::new(Vec::new()) };
}

/// Forgets what the isolate knows of a dataset (after it changed under a request).
pub fn forget(name: &str, key: &str) {
    POINTERS.with(|p| p.borrow_mut().remove(name));
    FILES.with(|f| f.borrow_mut().retain(|(k, _)| k != key));
}

/// The current version of a dataset; 404 when there is none.
pub async fn pointer(ctx: &Ctx, name: &str) -> Result<VersionEntry, HttpError> {
    pointers(ctx, &[name.to_owned()]).await.pop().unwrap_or_else(|| Err(HttpError::Internal("no pointer read".into())))
}

/// The current version of each dataset (404 for one that has none), those
/// the isolate does not hold read together in one round.
pub async fn pointers(ctx: &Ctx, names: &[String]) -> Vec<Result<VersionEntry, HttpError>> {
    let ttl_ms = ctx.config.pointer_ttl_s as f64 * 1000.0;
    let cached = |name: &str| POINTERS.with(|p| p.borrow().get(name).filter(|c| ctx.clock.now_ms() - c.read_at_ms < ttl_ms).map(|c| c.entry.clone()));
    if names.iter().any(|name| is_name(name) && cached(name).is_none()) {
        ctx.usage.count_open_round();
    }
    join_all(names.iter().map(|name| async move {
        if !is_name(name) {
            return Err(HttpError::NotFound(format!("no dataset named {name:?}")));
        }
        match cached(name) {
            Some(entry) => Ok(entry),
            None => read_pointer(ctx, name).await,
        }
    }))
    .await
}

async fn read_pointer(ctx: &Ctx, name: &str) -> Result<VersionEntry, HttpError> {
    let key = rete_layout::pointer_key(name);
    let known = POINTERS.with(|p| p.borrow().get(name).map(|c| (c.entry.clone(), c.first_read.clone(), c.etag.clone())));
    let small = ctx.r2.get_small(&key, MAX_POINTER_BYTES, known.as_ref().map(|(_, _, etag)| etag.as_str())).await?;
    let Some(small) = small else {
        POINTERS.with(|p| p.borrow_mut().remove(name));
        return Err(HttpError::NotFound(format!("no dataset named {name:?}")));
    };
    let (entry, first_read) = match (small.bytes, known) {
        (Some(bytes), _) => {
            let (mut entry, first_read) = VersionEntry::from_json_with_first_read(&bytes, name).map_err(|e| HttpError::Storage(format!("{key}: {e}")))?;
            entry.head = None;
            (entry, first_read.map(Arc::from))
        }
        (None, Some((entry, first_read, _))) => (entry, first_read),
        (None, None) => return Err(HttpError::Internal(format!("{key}: R2 left out a body nobody asked it to"))),
    };
    POINTERS.with(|p| p.borrow_mut().insert(name.to_owned(), Pointer { entry: entry.clone(), first_read, etag: small.etag, read_at_ms: ctx.clock.now_ms() }));
    Ok(entry)
}

/// The first read the pointer of `entry`'s dataset carried, when the isolate
/// holds that pointer (its version) and it carried one.
fn pointer_first_read(entry: &VersionEntry) -> Option<Arc<[u8]>> {
    POINTERS.with(|p| p.borrow().get(&entry.name).filter(|c| c.entry.version == entry.version).and_then(|c| c.first_read.clone()))
}

/// Opens the file a pointer names: nothing to read when the isolate has it,
/// else one round for its first 16 KiB (plus one when INDEX is longer).
pub async fn open(ctx: &Ctx, entry: VersionEntry) -> Result<Dataset, HttpError> {
    let cached = FILES.with(|files| {
        let mut files = files.borrow_mut();
        let position = files.iter().position(|(key, _)| *key == entry.key)?;
        let hit = files.remove(position);
        files.push(hit.clone());
        Some(hit.1)
    });
    let mut seen_here = cached.as_ref().map_or(SeenHere::Yes, |file| file.seen_here.get());
    let file = match cached {
        Some(file) => file,
        None => {
            let (file, seen) = open_file(ctx, &entry).await?;
            seen_here = seen;
            let file = std::rc::Rc::new(file);
            FILES.with(|files| {
                let mut files = files.borrow_mut();
                files.retain(|(key, _)| *key != entry.key);
                if files.len() >= MAX_OPEN_FILES {
                    files.remove(0);
                }
                files.push((entry.key.clone(), std::rc::Rc::clone(&file)));
            });
            file
        }
    };
    Ok(Dataset { name: entry.name.clone(), entry, file, seen_here })
}

/// Records that the location has seen a dataset's file (a round's bundle was
/// there): the isolate's next requests on it look blocks up without asking.
pub fn seen(dataset: &Dataset) -> SeenHere {
    dataset.file.seen_here.set(SeenHere::Yes);
    SeenHere::Yes
}

/// The Cache API key of a file's first read.
fn first_read_key(entry: &VersionEntry) -> String {
    edge_cache::key(&entry.version, ByteRange { offset: 0, length: FIRST_READ_BYTES.min(entry.bytes.max(1)) })
}

/// Asks the Cache API whether the location has seen a file opened from the
/// pointer's head (one lookup of its first read, no R2 round), when a
/// subrequest is left for it beside the round's `reads` from R2. An isolate
/// that finds it has not stores the first read as the sign for the next ones.
pub async fn ask_seen_here(cache: &EdgeCache, usage: &Usage, dataset: &Dataset, reads: u64) -> SeenHere {
    dataset.file.seen_here.set(SeenHere::Yes);
    if usage.subrequests_left() <= reads {
        return SeenHere::Yes;
    }
    let key = first_read_key(&dataset.entry);
    if cache.get(&key).await.is_some() {
        return SeenHere::Yes;
    }
    share_first_read(cache, key, &dataset.file);
    SeenHere::No
}

/// The first read the pointer carries (`head`, written by `rete publish`):
/// no round of its own, the pointer's round holds it; whether the location
/// has seen the file is asked later, if ever ([`SeenHere::Unasked`]). Else
/// one round: the first read from the Cache API when it holds it for this
/// version, else from R2 (then shared: the header and the whole, checked
/// sections after it). One more for INDEX when it ends past the first read.
async fn open_file(ctx: &Ctx, entry: &VersionEntry) -> Result<(OpenFile, SeenHere), HttpError> {
    let key = &entry.key;
    let cache_key = first_read_key(entry);
    // A lookup is made only when a read from R2 is left besides.
    let looked = ctx.usage.subrequests_left() >= 2;
    // The head is checked as R2's bytes would be (checksums, the content hash
    // against the version); a head that fails is left for the file's own bytes.
    if let Some(head) = pointer_first_read(entry) {
        match open_first_read(ctx, entry, head, None, Some(entry.bytes)).await {
            Ok(file) => {
                file.seen_here.set(SeenHere::Unasked);
                return Ok((file, SeenHere::Unasked));
            }
            Err(error) => ctx.host.log_error(&format!("{key}: the pointer's head does not open the file, reading it instead: {error:?}")),
        }
    }
    ctx.usage.count_open_round();
    // An entry that does not open as this version is left for R2's bytes.
    let cached = if looked { ctx.cache.get(&cache_key).await } else { None };
    if let Some(bytes) = cached {
        if let Ok(file) = open_first_read(ctx, entry, bytes.into(), None, None).await {
            return Ok((file, SeenHere::Yes));
        }
    }
    let length = FIRST_READ_BYTES.min(entry.bytes.max(1));
    let prefix = ctx.r2.get_prefix(key, length).await?.ok_or_else(|| {
        HttpError::Changed(format!("{key}, named by the dataset's current.json, does not exist (replaced or collected); retry"))
    })?;
    let file = open_first_read(ctx, entry, prefix.bytes.into(), Some(prefix.etag), Some(prefix.size)).await?;
    share_first_read(&ctx.cache, cache_key, &file);
    Ok((file, if looked { SeenHere::No } else { SeenHere::Yes }))
}

/// Stores an opened file's first read in the Cache API: the header and the
/// whole, checked sections after it.
fn share_first_read(cache: &EdgeCache, cache_key: String, file: &OpenFile) {
    if let Some((_, bytes)) = file.kept.borrow().first() {
        cache.put_later(cache_key, bytes[..checked_prefix_length(&file.header, bytes)].to_vec());
    }
}

/// Decodes a first read (reading INDEX when it ends past it) and checks it
/// is the version the pointer names.
async fn open_first_read(ctx: &Ctx, entry: &VersionEntry, prefix: Arc<[u8]>, etag: Option<String>, size: Option<u64>) -> Result<OpenFile, HttpError> {
    let key = &entry.key;
    let corrupt = |e: rete_core::FormatError| HttpError::Corrupt(format!("{key}: {e}"));
    let (header, index) = match open_prefix(&prefix, size).map_err(corrupt)? {
        Opening::Ready(header, index) => (header, index),
        Opening::NeedIndex(header, range) => {
            // INDEX past the first read: a whole section, shared like a block.
            ctx.usage.count_open_round();
            let index_key = edge_cache::key(&entry.version, range);
            let cached = if ctx.usage.subrequests_left() >= 2 { ctx.cache.get(&index_key).await } else { None };
            let index = match cached.and_then(|bytes| decode_index(&header, &bytes).ok()) {
                Some(index) => index,
                None => {
                    let bytes = ctx.r2.get_range(key, etag.as_deref(), range).await?;
                    let index = decode_index(&header, &bytes).map_err(corrupt)?;
                    ctx.cache.put_later(index_key, bytes);
                    index
                }
            };
            (header, index)
        }
        _ => return Err(HttpError::Internal(format!("{key}: an opening this Worker does not know"))),
    };
    if header.content_hash_hex() != entry.version {
        return Err(HttpError::Corrupt(format!("{key}: header content hash {} differs from the pointer's version {}", header.content_hash_hex(), entry.version)));
    }
    let held = ByteRange { offset: 0, length: prefix.len() as u64 };
    Ok(OpenFile { key: key.clone(), etag, header, index, kept: RefCell::new(vec![(held, prefix)]), seen_here: std::cell::Cell::new(SeenHere::Yes), literal_kinds: RefCell::default() })
}
