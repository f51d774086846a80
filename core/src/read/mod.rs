//! The reader: answers quad patterns and term lookups over any
//! [`RangeSource`]. It holds the header and INDEX in memory, keeps decoded
//! blocks in a [`BlockCache`] with a byte budget, and holds the pieces of the
//! file a host gave it (the first read, sections fed since); every other byte
//! is asked of the source a block or a section at a time. A source may answer
//! [`ReadError::Missing`]: the store then records what it wanted (the one
//! record of a miss), and a host fetches all of it in one round
//! ([`Rounds::step`], or the whole loop in [`run_in_rounds`]) and runs again
//! (`docs/READ-PATH.md`).

mod cache;
mod keys;
mod pattern;
mod placed;
mod rounds;
mod terms;
mod tree;

pub use cache::{BlockCache, CacheFull};
pub use pattern::{GraphFilter, QuadIter, QuadPattern, QuadRanges};
pub use keys::{Landing, PermutationKeys, RowCursor};
pub use terms::{DictionaryTerms, TermCursor};
pub(crate) use terms::{SHORT, extend_short};
pub use tree::{Directory, Located};
pub use rounds::{DEFAULT_GAP_BYTES, DEFAULT_MAX_ROUNDS, FetchPlan, Mark, RoundOptions, RoundStats, Rounds, Step, Unfetched, checked_prefix_length, open_in_rounds, run_in_rounds};

use crate::format::axioms::{self, SchemaAxioms};
use crate::format::block;
use crate::format::card::Card;
use crate::format::header::{FEATURE_DIRECTORY, Header, Section, SectionKind};
use crate::format::summary::{self, MAX_SUMMARY_BYTES, MemberPages, Summary};
use crate::format::directory::{self, Body, MAX_NODE_SEALED_BYTES};
use crate::format::index::{Index, Sections};
use crate::format::permutation::{Key, Permutation};
use crate::format::search::{MAX_SEARCH_ROOT_RAW_BYTES, PostingBlock, SEARCH_VERSION, SearchRoot};
use crate::format::{FIRST_READ_BYTES, MAX_CARD_BYTES, MAX_INDEX_RAW_BYTES, term};
use crate::{FormatError, ReadError, ReadLimit, TermId};
use oxrdf::{Term, TermRef};
use placed::Placed;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_64;

/// A pattern over a term whose id is not known yet asks for the quad blocks
/// it would read only when they are at most this many (blocks next to each
/// other are read as one request, so the bytes below are what binds; the count
/// only bounds the requests of blocks scattered by a narrowing second component)…
pub const SPECULATE_MAX_BLOCKS: usize = 64;
/// … and this many bytes.
pub const SPECULATE_MAX_BYTES: u64 = 1 << 20;

/// An absolute byte range of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ByteRange {
    /// First byte.
    pub offset: u64,
    /// Number of bytes.
    pub length: u64,
}

impl ByteRange {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.length
    }
}

/// Where the bytes come from. The host implements it: a local file, an
/// HTTP server honouring `Range`, an R2 binding, or a recorder that answers
/// [`ReadError::Missing`] so an asynchronous host can fetch and retry.
pub trait RangeSource {
    /// Returns the bytes of each range, in order. A range reaching past the
    /// end of the file yields only the bytes that exist.
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError>;
}

impl<S: RangeSource + ?Sized> RangeSource for &S {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        (**self).read_ranges(ranges)
    }
}

/// A file held in memory (tests, small embedded datasets).
impl RangeSource for [u8] {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let length = self.len() as u64;
        Ok(ranges.iter().map(|r| self[r.offset.min(length) as usize..r.end().min(length) as usize].to_vec()).collect())
    }
}

impl RangeSource for Vec<u8> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        self.as_slice().read_ranges(ranges)
    }
}

/// A block of the file, as the cache and the prefetcher name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockKey {
    /// Dictionary block number.
    Dictionary(usize),
    /// Block number of a permutation.
    Permutation(Permutation, usize),
    /// The SEARCH section: the search index's root (FORMAT.md §12.1).
    SearchRoot,
    /// Posting block number of the search index (FORMAT.md §12.3).
    Search(usize),
    /// A directory node (FORMAT.md §4.3): its directory, its level, and the
    /// number of the first block under it.
    Node(Directory, u8, usize),
}

/// A decoded block.
#[derive(Debug, Clone)]
pub enum Block {
    /// Terms of a dictionary block (kept front-coded).
    Dictionary(Arc<DictionaryTerms>),
    /// Keys of a permutation block (kept as its columns).
    Permutation(Arc<PermutationKeys>),
    /// The search index's root.
    SearchRoot(Arc<SearchRoot>),
    /// Keys and postings of a search block.
    Search(Arc<PostingBlock>),
    /// A node of the dictionary's directory.
    DictionaryNode(Arc<Body<Vec<u8>>>),
    /// A node of a permutation's directory.
    PermutationNode(Arc<Body<Key>>),
}

/// The dictionary blocks a run of [`Store::term_in`] read lately, each with
/// where its last lookup ended: an id in one of them needs no directory
/// walk and no cache lookup, and ids in order in one block step on from the
/// last one. Several blocks, because the terms a DESCRIBE or CONSTRUCT
/// prints alternate between blocks (CLDR's 🐈 has labels in ~30 blocks, in
/// subject-predicate-object order): one block kept was a directory walk, a
/// cache lookup and a walk from a restart per printed literal (issue 14).
#[derive(Debug, Default)]
pub struct TermReader {
    /// The ids of each slot's block, searched for an id (kept apart from
    /// the slots so that the search reads only them).
    ids: Vec<std::ops::Range<TermId>>,
    slots: Vec<ReaderSlot>,
    /// The slot used last, tried first.
    last: usize,
    /// The slot the next block replaces once all are taken.
    next: usize,
    /// Heap bytes of the blocks held, bounded by [`READER_MAX_BYTES`].
    held_bytes: usize,
}

#[derive(Debug)]
struct ReaderSlot {
    located: Located,
    block: Arc<DictionaryTerms>,
    cursor: TermCursor,
}

/// Blocks a [`TermReader`] keeps at most…
const READER_BLOCKS: usize = 32;
/// … and their heap bytes at most, beyond the block in use: the reader
/// holds its blocks even when the cache evicts them, and a Worker's
/// isolate is bounded.
const READER_MAX_BYTES: usize = 8 << 20;

impl TermReader {
    /// The slot of the block holding `id`, if kept.
    fn find(&self, id: TermId) -> Option<usize> {
        if self.ids.get(self.last).is_some_and(|ids| ids.contains(&id)) {
            return Some(self.last);
        }
        self.ids.iter().position(|ids| ids.contains(&id))
    }

    /// Keeps a block (replacing the oldest kept when full); its slot.
    fn keep(&mut self, located: Located, block: Arc<DictionaryTerms>) -> usize {
        let bytes = block.heap_bytes();
        let mut cursor = TermCursor::default();
        while !self.slots.is_empty() && (self.slots.len() >= READER_BLOCKS || self.held_bytes + bytes > READER_MAX_BYTES) {
            let victim = self.next % self.slots.len();
            self.ids.swap_remove(victim);
            let slot = self.slots.swap_remove(victim);
            self.held_bytes -= slot.block.heap_bytes();
            cursor = slot.cursor.reused();
            self.next = victim + 1;
        }
        self.held_bytes += bytes;
        self.ids.push(located.items());
        self.slots.push(ReaderSlot { located, block, cursor });
        self.slots.len() - 1
    }
}

/// The dictionary blocks a store has placed for [`Store::term_in`], by
/// first id ([`Placed`]): an id a run's [`TermReader`] does not hold finds
/// its block there while it is in memory (issue 14: CLDR's 🐈 has labels in
/// ~200 blocks, one label each, so every label was a directory walk and a
/// cache lookup).
type PlacedTerms = Placed<Located, DictionaryTerms>;

/// An open `.rete` file: header and INDEX in memory, blocks on demand.
pub struct Store<S> {
    source: S,
    header: Header,
    index: Index,
    /// Decoded blocks; those fed by a host for the current query are pinned
    /// there, so a re-run finds every one of them (see `docs/READ-PATH.md`).
    cache: RefCell<BlockCache>,
    /// Blocks the source answered `Missing` for, or that a run wants
    /// (speculation, read-ahead), since the last `take_missing`.
    missing: RefCell<BTreeSet<BlockKey>>,
    /// Other ranges (sections outside the held pieces) the source answered
    /// `Missing` for since the last `fetch_plan`.
    missing_ranges: RefCell<BTreeSet<ByteRange>>,
    /// How many reads the source answered `Missing` since the store opened:
    /// a run is complete when this did not move during it.
    misses: Cell<u64>,
    /// Pieces of the file in memory, read before the source is asked: the
    /// first read, and sections fed by the host (see [`Store::hold`]).
    held: RefCell<Vec<(ByteRange, Arc<[u8]>)>>,
    /// The search index's root once read: it places the posting blocks.
    search_root: RefCell<Option<Arc<SearchRoot>>>,
    /// Directory nodes, and blocks of directories with nodes, asked for, with
    /// their entries: where they are and what they must hold when fed
    /// (FORMAT.md §4.3), whether or not the node listing them is still cached.
    places: RefCell<BTreeMap<BlockKey, tree::Place>>,
    /// Dictionary blocks placed for id lookups (see [`PlacedTerms`]).
    placed_terms: RefCell<PlacedTerms>,
    /// Permutation blocks placed for pattern lookups, by permutation (see
    /// [`pattern::KeysPlace`]).
    placed_keys: [RefCell<Placed<pattern::KeysPlace, PermutationKeys>>; 6],
    /// The card's datatypes and language tags once read (see [`Store::literal_kinds`]).
    literal_kinds: RefCell<Option<Option<Arc<LiteralKinds>>>>,
}

/// Every datatype and language tag of a file's literals (FORMAT.md §7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralKinds {
    /// Datatype IRIs, `xsd:string` and `rdf:langString` included when used.
    pub datatypes: Vec<String>,
    /// Language tags as encoded (FORMAT.md §5.1: a base direction as a `--ltr`/`--rtl` suffix).
    pub languages: Vec<String>,
}

/// What the first read of a file says (FORMAT.md §1): everything needed to
/// open it, or where the rest of INDEX is.
#[derive(Debug)]
#[non_exhaustive]
pub enum Opening {
    /// Header and INDEX were in the first read.
    Ready(Header, Index),
    /// INDEX reaches past the first read: read this range and give it to
    /// [`decode_index`].
    NeedIndex(Header, ByteRange),
}

/// Decodes the first read of a file (bytes `[0, 16384)`, or fewer when the
/// file is shorter). `known_length` is the file's length when the host knows it.
pub fn open_prefix(prefix: &[u8], known_length: Option<u64>) -> Result<Opening, FormatError> {
    let header = Header::decode(prefix, known_length)?;
    let section = *header.required(SectionKind::Index)?;
    if section.end_within(prefix.len() as u64) {
        let index = decode_index(&header, &prefix[section.offset as usize..section.end() as usize])?;
        Ok(Opening::Ready(header, index))
    } else {
        Ok(Opening::NeedIndex(header, section.range()))
    }
}

impl<S: RangeSource> Store<S> {
    /// Opens a file: one read of its first 16 KiB, plus one more when INDEX
    /// does not fit there (FORMAT.md §1). `cache_bytes` bounds decoded blocks.
    /// The card, when the first read holds it, is kept ([`Store::hold`], as
    /// a host keeps the whole first read): what it says of the file's
    /// literals spares lookups ([`Store::literal_kinds_in_memory`]).
    pub fn open(source: S, cache_bytes: usize) -> Result<Self, ReadError> {
        let first = ByteRange { offset: 0, length: FIRST_READ_BYTES };
        let prefix = source.read_ranges(&[first])?.into_iter().next().unwrap_or_default();
        let (header, index) = match open_prefix(&prefix, None)? {
            Opening::Ready(header, index) => (header, index),
            Opening::NeedIndex(header, range) => {
                let bytes = source.read_ranges(&[range])?.into_iter().next().unwrap_or_default();
                let index = decode_index(&header, &bytes)?;
                (header, index)
            }
        };
        let store = Self::from_parts(source, header, index, BlockCache::new(cache_bytes));
        if let Some(card) = store.header.section(SectionKind::Card).map(|section| section.range())
            && let Some(bytes) = slice_of(first, &prefix, card)
        {
            store.hold(card, bytes.into());
        }
        Ok(store)
    }

    /// Opens from an already decoded header and index (a host that keeps them
    /// across requests, keyed by content hash). Give it the first read and
    /// other pieces the host keeps with [`Store::hold`].
    pub fn from_parts(source: S, header: Header, index: Index, cache: BlockCache) -> Self {
        Self {
            source,
            header,
            index,
            cache: RefCell::new(cache),
            missing: RefCell::default(),
            missing_ranges: RefCell::default(),
            misses: Cell::new(0),
            held: RefCell::default(),
            search_root: RefCell::default(),
            places: RefCell::default(),
            placed_terms: RefCell::default(),
            placed_keys: Default::default(),
            literal_kinds: RefCell::default(),
        }
    }

    /// Gives the store a piece of the file the host already has (the first
    /// read, a section fed in a round, one kept from an earlier request):
    /// reads inside it are answered from memory, blocks in it included.
    pub fn hold(&self, range: ByteRange, bytes: Arc<[u8]>) {
        let mut held = self.held.borrow_mut();
        if !held.iter().any(|(within, _)| within.offset <= range.offset && range.end() <= within.end()) {
            held.push((range, bytes));
        }
    }

    /// The pieces held (see [`Store::hold`]), for a host that keeps them for
    /// its next store on the same file.
    pub fn held(&self) -> Vec<(ByteRange, Arc<[u8]>)> {
        self.held.borrow().clone()
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The decoded INDEX.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// Gives the cache back (to keep it for the next request), its blocks unpinned.
    pub fn into_cache(self) -> BlockCache {
        let mut cache = self.cache.into_inner();
        cache.unpin_all();
        cache
    }

    /// The block cache's budget: decoded blocks held at most.
    pub fn cache_budget_bytes(&self) -> usize {
        self.cache.borrow().budget_bytes()
    }

    /// Bytes of decoded blocks held, pinned (fed for this query) and in all.
    pub fn cache_bytes(&self) -> (usize, usize) {
        let cache = self.cache.borrow();
        (cache.pinned_bytes(), cache.used_bytes())
    }

    /// Reads and parses the CARD section: one read, none when it lies in the
    /// first 16 KiB a host already holds.
    pub fn card(&self) -> Result<Card, ReadError> {
        let section = *self.header.required(SectionKind::Card)?;
        self.json_section(section, "CARD", MAX_CARD_BYTES)
    }

    /// Every datatype and language tag of the file's literals, from the card,
    /// read once per store; `None` when the card does not list them all (a
    /// format 1.0 card has no such members; `_more` counts some left out).
    pub fn literal_kinds(&self) -> Result<Option<Arc<LiteralKinds>>, ReadError> {
        if let Some(kinds) = &*self.literal_kinds.borrow() {
            return Ok(kinds.clone());
        }
        let kinds = if (self.header.major_version, self.header.minor_version) < (1, 1) {
            None
        } else {
            let card = self.card()?;
            (card.datatypes_more == 0 && card.languages_more == 0)
                .then(|| Arc::new(LiteralKinds { datatypes: card.datatypes.into_iter().map(|d| d.iri).collect(), languages: card.languages.into_iter().map(|l| l.tag).collect() }))
        };
        *self.literal_kinds.borrow_mut() = Some(kinds.clone());
        Ok(kinds)
    }

    /// What this store knows of [`Store::literal_kinds`] without reading:
    /// `None` until they were read (or given with [`Store::know_literal_kinds`]).
    /// A host that keeps a file open across requests passes it to the next
    /// request's store: each new store would otherwise parse the card again
    /// (the Worker's, every query with a typed literal: 11% of a warm qudt
    /// 03; docs/BENCHMARK.md "Session 21: the per-request floor").
    pub fn known_literal_kinds(&self) -> Option<Option<Arc<LiteralKinds>>> {
        self.literal_kinds.borrow().clone()
    }

    /// Gives the store what an earlier store of the same file learnt with
    /// [`Store::literal_kinds`] ([`Store::known_literal_kinds`]).
    pub fn know_literal_kinds(&self, kinds: Option<Arc<LiteralKinds>>) {
        *self.literal_kinds.borrow_mut() = Some(kinds);
    }

    /// [`Store::literal_kinds`] when knowing them costs no read: known
    /// already, or the card lies in a piece held in memory (usually the
    /// first read); else `None`. For a shortcut that must not add a round
    /// in the Worker, where each request's store is new.
    pub fn literal_kinds_in_memory(&self) -> Option<Arc<LiteralKinds>> {
        if let Some(kinds) = &*self.literal_kinds.borrow() {
            return kinds.clone();
        }
        let card = self.header.section(SectionKind::Card)?.range();
        if !self.held.borrow().iter().any(|(within, _)| within.offset <= card.offset && card.end() <= within.end()) {
            return None;
        }
        self.literal_kinds().ok().flatten()
    }

    /// The CARD section's JSON text as the file holds it (checked and
    /// decompressed, not parsed), for a host that serves it as it is.
    pub fn card_json(&self) -> Result<Vec<u8>, ReadError> {
        let section = *self.header.required(SectionKind::Card)?;
        self.json_section_bytes(section, "CARD", MAX_CARD_BYTES)
    }

    /// Reads and parses the SUMMARY section (FORMAT.md §10), `None` when the
    /// file has none: one read, like the card.
    pub fn summary(&self) -> Result<Option<Summary>, ReadError> {
        match self.header.section(SectionKind::Summary) {
            Some(&section) => Ok(Some(self.json_section(section, "SUMMARY", MAX_SUMMARY_BYTES)?)),
            None => Ok(None),
        }
    }

    /// Reads the SUMMARY section for its overview (the schema, each level's
    /// counts), `None` when the file has none: the levels' nodes and edges
    /// are counted, not decoded.
    pub fn summary_overview(&self) -> Result<Option<summary::Overview>, ReadError> {
        match self.header.section(SectionKind::Summary) {
            Some(&section) => Ok(Some(self.json_section(section, "SUMMARY", MAX_SUMMARY_BYTES)?)),
            None => Ok(None),
        }
    }

    /// Reads and checks the CLASS AXIOMS section (FORMAT.md §13) and, with
    /// `properties`, the PROPERTY AXIOMS section (none read when they lie in
    /// the held pieces); `None` when one of them is absent. Both are asked
    /// for even after a miss, so that one round fetches them.
    pub fn axioms(&self, properties: bool) -> Result<Option<SchemaAxioms<String>>, ReadError> {
        let Some(sections) = axioms::sections(&self.header, properties) else { return Ok(None) };
        let reads: Vec<Result<Vec<u8>, ReadError>> = sections.iter().map(|s| self.read_one(s.range())).collect();
        let bodies = reads.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(Some(axioms::open_sections(&sections, &bodies)?))
    }

    /// Page `page` of a community's members (FORMAT.md §11): their term ids,
    /// ascending. Two reads: the node's page directory, then the page.
    pub fn member_page(&self, members: &MemberPages, page: u64) -> Result<Vec<TermId>, ReadError> {
        let section = *self.header.section(SectionKind::Members).ok_or_else(|| FormatError::corrupt("section table", 0x60, "the summary names member pages but there is no MEMBERS section"))?;
        let corrupt = |offset: u64, reason: String| FormatError::corrupt("MEMBERS", offset, reason);
        let directory_range = ByteRange { offset: section.offset.saturating_add(members.offset), length: members.directory_bytes };
        if members.offset.saturating_add(members.directory_bytes) > section.length {
            return Err(corrupt(directory_range.offset, "page directory runs past the section".into()).into());
        }
        let sealed = self.read_one(directory_range)?;
        let raw = block::open(&sealed, &|| "MEMBERS directory".into(), directory_range.offset)?;
        let pages = summary::decode_directory(&raw, directory_range.offset)?;
        let &(start, length) = pages.get(page as usize).ok_or_else(|| ReadError::from(corrupt(directory_range.offset, format!("page {page} of {}", pages.len()))))?;
        let offset = directory_range.end().saturating_add(start);
        if offset.saturating_add(length) > section.end() {
            return Err(corrupt(offset, "page runs past the section".into()).into());
        }
        let sealed = self.read_one(ByteRange { offset, length })?;
        let raw = block::open(&sealed, &|| format!("MEMBERS page {page}"), offset)?;
        Ok(summary::decode_page(&raw, offset)?)
    }

    /// A JSON section in one zstd frame, checked against its bound and checksum.
    fn json_section<T: serde::de::DeserializeOwned>(&self, section: Section, name: &str, max_bytes: u64) -> Result<T, ReadError> {
        let raw = self.json_section_bytes(section, name, max_bytes)?;
        Ok(serde_json::from_slice(&raw).map_err(|e| FormatError::corrupt(name, section.offset, format!("invalid JSON: {e}")))?)
    }

    /// A JSON section's text, checked against its checksum and decompressed.
    fn json_section_bytes(&self, section: Section, name: &str, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
        let corrupt = |reason: String| FormatError::corrupt(name, section.offset, reason);
        if section.length > max_bytes {
            return Err(corrupt(format!("{} bytes is over the {max_bytes}-byte limit", section.length)).into());
        }
        let bytes = self.read_one(section.range())?;
        if xxh3_64(&bytes) != section.checksum {
            return Err(corrupt("checksum mismatch".into()).into());
        }
        Ok(block::decompress(&bytes, max_bytes * 64).map_err(corrupt)?)
    }

    /// The search index's root (FORMAT.md §12.1), `None` when the file has
    /// no SEARCH section. Read like a block (usually from the first read);
    /// it places the posting blocks ([`BlockKey::Search`]).
    pub fn search_root(&self) -> Result<Option<Arc<SearchRoot>>, ReadError> {
        if self.header.section(SectionKind::Search).is_none() {
            return Ok(None);
        }
        let Block::SearchRoot(root) = self.block(BlockKey::SearchRoot)? else {
            return Err(ReadError::Source("cache returned the wrong block kind".into()));
        };
        *self.search_root.borrow_mut() = Some(root.clone());
        Ok(Some(root))
    }

    /// The posting block `number` of the search index (its root read first).
    pub fn search_block(&self, number: usize) -> Result<Arc<PostingBlock>, ReadError> {
        match self.block(BlockKey::Search(number))? {
            Block::Search(block) => Ok(block),
            _ => Err(ReadError::Source("cache returned the wrong block kind".into())),
        }
    }

    /// The id of a term, or `None` when the dataset does not contain it.
    pub fn term_id(&self, term: TermRef<'_>) -> Result<Option<TermId>, ReadError> {
        self.encoded_term_id(&self.encode_term(term))
    }

    /// The encoded form of a term in this file's encoding (FORMAT.md §5.1:
    /// numbers and dates by value only in files with `required_features` bit 2).
    pub fn encode_term(&self, term: TermRef<'_>) -> Vec<u8> {
        term::encode_term_as(term, self.header.literal_order())
    }

    /// The id of an encoded term (FORMAT.md §5.2, string → id).
    pub fn encoded_term_id(&self, encoded: &[u8]) -> Result<Option<TermId>, ReadError> {
        let Some(located) = self.dictionary_for_term(encoded)? else { return Ok(None) };
        let block = self.dictionary_block(located.number)?;
        Ok(block.find(encoded).map(|position| located.first_item + position as u64))
    }

    /// The term of an id.
    pub fn term(&self, id: TermId) -> Result<Term, ReadError> {
        self.term_in(id, &mut TermReader::default())
    }

    /// The term of an id, read through `reader`: ids in the block it read
    /// last need no cache lookup, and ids in order step on from the last
    /// one ([`DictionaryTerms::get_at`]).
    pub fn term_in(&self, id: TermId, reader: &mut TermReader) -> Result<Term, ReadError> {
        self.with_encoded_term_in(id, reader, term::decode_term)?.map_err(ReadError::from)
    }

    /// `read` of the encoded form of an id's term (FORMAT.md §5.1), read
    /// through `reader` as [`Store::term_in`] does, without decoding it: for
    /// what needs only part of a term (its kind, language tag, datatype).
    pub fn with_encoded_term_in<R>(&self, id: TermId, reader: &mut TermReader, read: impl FnOnce(&[u8]) -> R) -> Result<R, ReadError> {
        let at = match reader.find(id) {
            Some(at) => at,
            None => {
                let (located, block) = self.placed_dictionary_block(id)?;
                reader.keep(located, block)
            }
        };
        reader.last = at;
        let ReaderSlot { located, block, cursor } = &mut reader.slots[at];
        match block.get_at((id - located.first_item) as usize, cursor) {
            Some(encoded) => Ok(read(encoded)),
            None => Err(block_count_mismatch(located, block.len()).into()),
        }
    }

    /// The dictionary block holding an id and where it is: from the blocks
    /// placed before while still in memory ([`PlacedTerms`]), else found
    /// through the directory and read.
    fn placed_dictionary_block(&self, id: TermId) -> Result<(Located, Arc<DictionaryTerms>), ReadError> {
        let known = {
            let placed = self.placed_terms.borrow();
            let at = placed.last_where(|l| l.first_item <= id).filter(|&at| placed.places()[at].items().contains(&id));
            if let Some(at) = at
                && let Some(block) = placed.block_at(at)
            {
                return Ok((placed.places()[at], block));
            }
            at.map(|at| placed.places()[at])
        };
        let located = match known {
            Some(located) => located,
            None => self.dictionary_for_id(id)?.ok_or_else(|| not_in_dictionary(id, self.header.term_count))?,
        };
        let block = self.dictionary_block(located.number)?;
        self.placed_terms.borrow_mut().place(located, &block, |l| l.first_item.cmp(&located.first_item));
        Ok((located, block))
    }

    /// The terms of several ids, in order. Every id is decoded even after a
    /// miss, so that one round fetches all their dictionary blocks; the first
    /// error is returned.
    pub fn terms(&self, ids: &[TermId]) -> Result<Vec<Term>, ReadError> {
        let mut terms = Vec::with_capacity(ids.len());
        let mut first_error = None;
        for &id in ids {
            match self.term(id) {
                Ok(term) => terms.push(term),
                Err(error) => first_error = first_error.or(Some(error)),
            }
        }
        first_error.map_or(Ok(terms), Err)
    }

    /// The terms whose encoding starts with `prefix` (FORMAT.md §5.1), in
    /// dictionary order, at most `max`: the dictionary blocks from the one
    /// that would hold `prefix` on, read one after the other.
    pub fn terms_with_prefix(&self, prefix: &[u8], max: usize) -> Result<Vec<Term>, ReadError> {
        let mut number = self.dictionary_for_term(prefix)?.map_or(0, |located| located.number);
        let blocks = self.block_count(Directory::Dictionary);
        let mut found = Vec::new();
        while number < blocks && found.len() < max {
            let block = self.dictionary_block(number)?;
            for position in block.lower_bound(prefix)..block.len() {
                let Some(encoded) = block.get(position) else { break };
                if !encoded.starts_with(prefix) || found.len() >= max {
                    return Ok(found);
                }
                found.push(term::decode_term(&encoded)?);
            }
            number += 1;
        }
        Ok(found)
    }

    /// The ids of the terms whose encoding starts with `prefix`: consecutive,
    /// as the dictionary is sorted by encoded bytes (FORMAT.md §5.1). Reads
    /// the dictionary blocks where the range starts and ends (one when they
    /// are the same); a miss names both.
    pub fn ids_with_prefix(&self, prefix: &[u8]) -> Result<std::ops::Range<TermId>, ReadError> {
        self.ids_between(prefix, prefix_successor(prefix).as_deref())
    }

    /// The ids of the terms whose encoding is in `[low, high)` (`high`
    /// `None`: to the last term), as [`Self::ids_with_prefix`] reads them:
    /// the numbers or dates between two keys (FORMAT.md §5.1.1).
    pub fn ids_between(&self, low: &[u8], high: Option<&[u8]>) -> Result<std::ops::Range<TermId>, ReadError> {
        let start = self.first_id_at_or_after(low);
        let end = match high {
            Some(high) => self.first_id_at_or_after(high),
            None => Ok(self.end_id()),
        };
        match (start, end) {
            (Ok(start), Ok(end)) => Ok(start..end.max(start)),
            (Err(ReadError::Missing(mut first)), Err(ReadError::Missing(second))) => {
                first.extend(second);
                Err(ReadError::Missing(first))
            }
            (Err(error), _) | (_, Err(error)) => Err(error),
        }
    }

    /// The ids that hold [`Self::ids_with_prefix`]'s answer, known from what
    /// is in memory (the dictionary blocks' or nodes' ids around its ends),
    /// without reading: for speculative reads.
    pub fn ids_around_prefix(&self, prefix: &[u8]) -> std::ops::Range<TermId> {
        self.ids_around_between(prefix, prefix_successor(prefix).as_deref())
    }

    /// The ids that hold [`Self::ids_between`]'s answer, without reading.
    pub fn ids_around_between(&self, low: &[u8], high: Option<&[u8]>) -> std::ops::Range<TermId> {
        let first = self.first_id();
        let start = self.ids_around_term(low).map_or(first, |ids| ids.start);
        let end = match high {
            Some(high) => self.ids_around_term(high).map_or(first, |ids| ids.end),
            None => self.end_id(),
        };
        start..end.max(start)
    }

    /// The id of the first term whose encoding is ≥ `encoded` (one past
    /// the last id when there is none): with `[kind]`, where the terms of a
    /// kind start (FORMAT.md §5.1).
    pub fn first_id_at_or_after(&self, encoded: &[u8]) -> Result<TermId, ReadError> {
        let Some(located) = self.dictionary_for_term(encoded)? else { return Ok(self.first_id()) };
        let block = self.dictionary_block(located.number)?;
        Ok(located.first_item + block.lower_bound(encoded) as u64)
    }

    /// The first id of the dictionary.
    fn first_id(&self) -> TermId {
        self.index.dictionary.entries.first().map_or(1, |e| e.first_item)
    }

    /// One past the last id of the dictionary.
    fn end_id(&self) -> TermId {
        self.index.dictionary.entries.last().map_or(1, |e| e.item_end())
    }

    /// The encoded term of an id (FORMAT.md §5.2, id → string).
    pub fn encoded_term(&self, id: TermId) -> Result<Vec<u8>, ReadError> {
        let located = self.dictionary_for_id(id)?.ok_or_else(|| not_in_dictionary(id, self.header.term_count))?;
        let block = self.dictionary_block(located.number)?;
        block.get((id - located.first_item) as usize).ok_or_else(|| block_count_mismatch(&located, block.len()).into())
    }

    /// The quads matching a pattern, in the chosen permutation's order.
    pub fn quads(&self, pattern: QuadPattern) -> QuadIter<'_, S> {
        QuadIter::new(self, pattern.into())
    }

    /// The quads whose positions are in id ranges, in the chosen
    /// permutation's order ([`QuadRanges::plan`]).
    pub fn quads_in(&self, pattern: QuadRanges) -> QuadIter<'_, S> {
        QuadIter::new(self, pattern)
    }

    /// The byte range of a block, from what is in memory: `None` for a
    /// block whose directory node is not (see [`Store::block`]).
    pub fn block_range(&self, key: BlockKey) -> Option<ByteRange> {
        match key {
            BlockKey::Dictionary(n) => match self.places.borrow().get(&key) {
                Some(place) => Some(place.range()),
                None => self.locate(Directory::Dictionary, n, tree::Walk::Peek).ok()?.map(|l| l.range),
            },
            BlockKey::Permutation(p, n) => match self.places.borrow().get(&key) {
                Some(place) => Some(place.range()),
                None => self.locate(Directory::Permutation(p), n, tree::Walk::Peek).ok()?.map(|l| l.range),
            },
            BlockKey::SearchRoot => self.header.section(SectionKind::Search).map(|s| s.range()),
            BlockKey::Search(n) => self.search_root.borrow().as_ref()?.blocks.get(n).map(|e| e.range),
            BlockKey::Node(..) => self.places.borrow().get(&key).map(tree::Place::range),
        }
    }

    /// A decoded block, from the cache or the source. When the source answers
    /// [`ReadError::Missing`], the block is recorded for [`Store::take_missing`];
    /// when the directory node that places it is not in memory, that node is.
    pub fn block(&self, key: BlockKey) -> Result<Block, ReadError> {
        let hash = self.header.content_hash;
        if let Some(block) = self.cache.borrow_mut().get(hash, &key) {
            return Ok(block);
        }
        // One walk down the directory places the block, for its range and for
        // the checks of its decoding (a walk for each was most of reading a
        // small block of a directory file).
        let place = self.place_of(key, tree::Walk::Read)?;
        let range = match key {
            BlockKey::Dictionary(_) | BlockKey::Permutation(..) => place.as_ref().map(tree::Place::range),
            _ => self.block_range(key),
        };
        let range = range.ok_or_else(|| FormatError::corrupt("INDEX", 0, format!("no block {key:?}")))?;
        let Some(bytes) = self.available(range)? else {
            self.remember_place(key);
            self.missing.borrow_mut().insert(key);
            return Err(ReadError::Missing(vec![range]));
        };
        let decoded = self.decode_placed(key, &bytes, place.as_ref())?;
        self.cache.borrow_mut().insert(hash, key, decoded.clone());
        Ok(decoded)
    }

    /// Whether a block is in memory (fed or cached), without reading it.
    pub fn has_block(&self, key: BlockKey) -> bool {
        self.cache.borrow().contains(self.header.content_hash, &key)
    }

    /// Notes that a block will be needed (speculation, read-ahead), without
    /// reading it: [`Store::take_missing`] lists it (or, when the directory
    /// node that places it is not in memory, that node). It does not make the
    /// current run incomplete.
    pub fn want(&self, key: BlockKey) {
        if self.has_block(key) {
            return;
        }
        if self.block_range(key).is_some() {
            self.remember_place(key);
            self.missing.borrow_mut().insert(key);
            return;
        }
        match key {
            BlockKey::Dictionary(n) => self.want_path(Directory::Dictionary, n),
            BlockKey::Permutation(p, n) => self.want_path(Directory::Permutation(p), n),
            _ => {}
        }
    }

    /// The blocks asked for and not available (or wanted) since the last
    /// call, clearing the list.
    pub fn take_missing(&self) -> Vec<BlockKey> {
        std::mem::take(&mut *self.missing.borrow_mut()).into_iter().collect()
    }

    /// Where a run starts: a run after which [`Rounds::step`] finds no miss
    /// since its mark read everything it needed, and its answer is complete.
    pub fn mark(&self) -> Mark {
        Mark(self.misses.get())
    }

    /// Gives the store a block's sealed bytes fetched by the host. It is
    /// pinned in the cache until [`Store::release_fed`]: fed blocks count
    /// against the cache's budget, and feeding past it fails with
    /// [`ReadError::Budget`] (`ReadLimit::CacheBytes`) rather than grow.
    pub fn feed(&self, key: BlockKey, sealed: &[u8]) -> Result<(), ReadError> {
        let block = self.decode_block(key, sealed)?;
        self.cache.borrow_mut().pin(self.header.content_hash, key, block).map_err(|full| ReadError::Budget { limit: ReadLimit::CacheBytes, max: full.budget_bytes as u64 })
    }

    /// Gives the store a block's sealed bytes that its source can give
    /// again (a host's own store of sealed blocks in memory, which its
    /// [`RangeSource`] reads): checked and decoded as [`Store::feed`] does,
    /// but cached like a block read through the source, least recently used
    /// out first, so a query may touch more decoded blocks than the cache
    /// holds; an evicted one is read from the source and decoded again.
    pub fn feed_evictable(&self, key: BlockKey, sealed: &[u8]) -> Result<(), ReadError> {
        let block = self.decode_block(key, sealed)?;
        self.cache.borrow_mut().insert(self.header.content_hash, key, block);
        Ok(())
    }

    /// Unpins the blocks fed for the query that just ended (the cache keeps
    /// what fits, least recently used out first).
    pub fn release_fed(&self) {
        self.cache.borrow_mut().unpin_all();
    }

    /// Takes what runs recorded since the last call (blocks as
    /// [`Store::take_missing`], and other ranges) and plans their reads: each
    /// one's range, and those ranges sorted and merged when closer than
    /// `gap_bytes` (one request each). Blocks already in memory are left out.
    pub fn fetch_plan(&self, gap_bytes: u64) -> FetchPlan {
        let blocks: Vec<(BlockKey, ByteRange)> =
            self.take_missing().into_iter().filter(|&key| !self.has_block(key)).filter_map(|key| Some((key, self.block_range(key)?))).collect();
        let pieces: Vec<ByteRange> = std::mem::take(&mut *self.missing_ranges.borrow_mut()).into_iter().collect();
        FetchPlan::new(blocks, pieces, gap_bytes)
    }

    /// Feeds the bytes of a plan's ranges (`bodies[i]` for `plan.ranges[i]`):
    /// its blocks to the cache, its other pieces to the held ones.
    pub fn feed_plan(&self, plan: &FetchPlan, bodies: &[Vec<u8>]) -> Result<(), ReadError> {
        for &(key, range) in &plan.blocks {
            self.feed(key, plan.bytes_of(bodies, range)?)?;
        }
        for &range in &plan.pieces {
            self.hold(range, plan.bytes_of(bodies, range)?.into());
        }
        Ok(())
    }

    /// Whether `range` is a whole section of the file (CARD, SUMMARY, INDEX…):
    /// one a host can check with [`Store::is_checked_section`].
    pub fn is_section(&self, range: ByteRange) -> bool {
        self.header.sections.iter().any(|section| section.range() == range)
    }

    /// Whether `bytes` are the whole section at `range`, its checksum in the
    /// section table verified: bytes a host may keep for other readers.
    pub fn is_checked_section(&self, range: ByteRange, bytes: &[u8]) -> bool {
        self.header.sections.iter().any(|section| section.range() == range && xxh3_64(bytes) == section.checksum)
    }

    fn dictionary_block(&self, number: usize) -> Result<Arc<DictionaryTerms>, ReadError> {
        match self.block(BlockKey::Dictionary(number))? {
            Block::Dictionary(block) => Ok(block),
            _ => Err(ReadError::Source("cache returned the wrong block kind".into())),
        }
    }

    pub(crate) fn permutation_block(&self, permutation: Permutation, number: usize) -> Result<Arc<PermutationKeys>, ReadError> {
        match self.block(BlockKey::Permutation(permutation, number))? {
            Block::Permutation(keys) => Ok(keys),
            _ => Err(ReadError::Source("cache returned the wrong block kind".into())),
        }
    }

    /// Checks, decompresses and decodes the sealed bytes of a block.
    pub fn decode_block(&self, key: BlockKey, sealed: &[u8]) -> Result<Block, FormatError> {
        let place = self.place_of(key, tree::Walk::Peek).ok().flatten();
        self.decode_placed(key, sealed, place.as_ref())
    }

    /// The entry of a dictionary or permutation block, as a place:
    /// remembered, or found by a walk down its directory (`walk` says whether
    /// a node not in memory is read); `None` for other keys, and for a block
    /// the walk does not reach.
    fn place_of(&self, key: BlockKey, walk: tree::Walk) -> Result<Option<tree::Place>, ReadError> {
        if !matches!(key, BlockKey::Dictionary(_) | BlockKey::Permutation(..)) {
            return Ok(None);
        }
        if let Some(place) = self.places.borrow().get(&key) {
            return Ok(Some(place.clone()));
        }
        Ok(match key {
            BlockKey::Dictionary(n) => match self.leaf::<Vec<u8>>(Directory::Dictionary, n, walk)? {
                tree::Descent::Block(body, i) => Some(tree::Place::Dictionary(body.entries[i].clone())),
                _ => None,
            },
            BlockKey::Permutation(p, n) => match self.leaf::<Key>(Directory::Permutation(p), n, walk)? {
                tree::Descent::Block(body, i) => Some(tree::Place::Permutation(body.entries[i].clone())),
                _ => None,
            },
            _ => None,
        })
    }

    /// [`Store::decode_block`] of a block whose entry is `place` (a dictionary
    /// or permutation block's, from [`Store::place_of`]; other keys find theirs).
    fn decode_placed(&self, key: BlockKey, sealed: &[u8], place: Option<&tree::Place>) -> Result<Block, FormatError> {
        let range = match key {
            BlockKey::Dictionary(_) | BlockKey::Permutation(..) => place.map(tree::Place::range),
            _ => self.block_range(key),
        };
        let range = range.ok_or_else(|| FormatError::corrupt("INDEX", 0, format!("no block {key:?}")))?;
        let name = || match key {
            BlockKey::Dictionary(n) => format!("dictionary block {n}"),
            BlockKey::Permutation(p, n) => format!("{} block {n}", p.name()),
            BlockKey::SearchRoot => "SEARCH".into(),
            BlockKey::Search(n) => format!("SEARCH block {n}"),
            BlockKey::Node(directory, level, n) => format!("{} directory node of level {level} from block {n}", directory.name()),
        };
        if sealed.len() as u64 != range.length {
            return Err(FormatError::corrupt(name(), range.offset, format!("read {} bytes of {}: file truncated", sealed.len(), range.length)));
        }
        if matches!(key, BlockKey::Node(..)) && range.length > MAX_NODE_SEALED_BYTES {
            return Err(FormatError::corrupt(name(), range.offset, format!("{} bytes, more than a node's {MAX_NODE_SEALED_BYTES}", range.length)));
        }
        // The root is one zstd frame under the section checksum, like INDEX; blocks are sealed.
        let raw = match key {
            BlockKey::SearchRoot => return Ok(Block::SearchRoot(Arc::new(self.decode_search_root(sealed)?))),
            _ => block::open(sealed, &name, range.offset)?,
        };
        let mismatch = || FormatError::corrupt(name(), range.offset, "does not match its INDEX entry");
        Ok(match key {
            BlockKey::SearchRoot => return Err(FormatError::corrupt("SEARCH", range.offset, "decoded twice")),
            BlockKey::Dictionary(_) => {
                let block = DictionaryTerms::decode(&raw, &name(), range.offset)?;
                let Some(tree::Place::Dictionary(entry)) = place else { return Err(mismatch()) };
                if block.len() as u64 != entry.item_count || block.get(0).as_deref() != Some(&entry.head[..]) {
                    return Err(mismatch());
                }
                Block::Dictionary(Arc::new(block))
            }
            BlockKey::Permutation(..) => {
                let keys = PermutationKeys::decode(&raw, self.header.block_layout(), &name(), range.offset)?;
                let Some(tree::Place::Permutation(entry)) = place else { return Err(mismatch()) };
                if keys.len() as u64 != entry.item_count || keys.get(0) != Some(entry.head) {
                    return Err(mismatch());
                }
                Block::Permutation(Arc::new(keys))
            }
            BlockKey::Search(n) => {
                let root = self.search_root.borrow();
                let layout = root.as_ref().map_or(SEARCH_VERSION, |root| root.layout);
                let block = PostingBlock::decode(&raw, layout, &name(), range.offset)?;
                let entry = root.as_ref().and_then(|root| root.blocks.get(n));
                if entry.is_none_or(|e| block.keys.len() as u64 != e.key_count || block.keys.first().map(|k| &k.key) != Some(&e.head)) {
                    return Err(FormatError::corrupt(name(), range.offset, "does not match its SEARCH entry"));
                }
                Block::Search(Arc::new(block))
            }
            BlockKey::Node(directory, level, _) => {
                let place = self.places.borrow().get(&key).cloned().ok_or_else(mismatch)?;
                let section = match level {
                    0 => self.header.required(directory.section())?.range(),
                    _ => self.header.required(SectionKind::Directory)?.range(),
                };
                let corrupt = |reason: String| FormatError::corrupt(name(), range.offset, reason);
                match place {
                    tree::Place::Dictionary(entry) => Block::DictionaryNode(Arc::new(directory::decode_node(&raw, level, &entry, section).map_err(corrupt)?)),
                    tree::Place::Permutation(entry) => Block::PermutationNode(Arc::new(directory::decode_node(&raw, level, &entry, section).map_err(corrupt)?)),
                }
            }
        })
    }

    /// Checks and decodes the SEARCH section's bytes (FORMAT.md §12.1).
    fn decode_search_root(&self, sealed: &[u8]) -> Result<SearchRoot, FormatError> {
        let section = self.header.required(SectionKind::Search)?;
        let corrupt = |reason: String| FormatError::corrupt("SEARCH", section.offset, reason);
        if xxh3_64(sealed) != section.checksum {
            return Err(corrupt("checksum mismatch".into()));
        }
        let raw = block::decompress(sealed, MAX_SEARCH_ROOT_RAW_BYTES).map_err(corrupt)?;
        SearchRoot::decode(&raw, self.header.required(SectionKind::SearchBlocks)?.range(), section.offset)
    }

    /// A range that is not a block (a section, a page of one): from the held
    /// pieces or the source; a miss is recorded for the next round.
    fn read_one(&self, range: ByteRange) -> Result<Vec<u8>, ReadError> {
        match self.available(range)? {
            Some(bytes) => Ok(bytes),
            None => {
                self.missing_ranges.borrow_mut().insert(range);
                Err(ReadError::Missing(vec![range]))
            }
        }
    }

    /// The bytes of a range from the held pieces or the source; `None`, a
    /// miss counted, when the source has not got them yet.
    fn available(&self, range: ByteRange) -> Result<Option<Vec<u8>>, ReadError> {
        if let Some(bytes) = self.held.borrow().iter().find_map(|(within, bytes)| slice_of(*within, bytes, range)) {
            return Ok(Some(bytes.to_vec()));
        }
        let bytes = match self.source.read_ranges(&[range]) {
            Err(ReadError::Missing(_)) => {
                self.misses.set(self.misses.get() + 1);
                return Ok(None);
            }
            other => other?.into_iter().next().unwrap_or_default(),
        };
        if (bytes.len() as u64) < range.length {
            return Err(FormatError::corrupt("file", range.offset, format!("ends {} bytes early: truncated", range.length - bytes.len() as u64)).into());
        }
        Ok(Some(bytes))
    }
}

/// Checks and decodes INDEX given the header and the section's bytes.
pub fn decode_index(header: &Header, sealed: &[u8]) -> Result<Index, FormatError> {
    let section = header.required(SectionKind::Index)?;
    let corrupt = |reason: String| FormatError::corrupt("INDEX", section.offset, reason);
    if (sealed.len() as u64) < section.length {
        return Err(corrupt(format!("read {} of {} bytes: file truncated", sealed.len(), section.length)));
    }
    if xxh3_64(sealed) != section.checksum {
        return Err(corrupt("checksum mismatch".into()));
    }
    let raw = block::decompress(sealed, MAX_INDEX_RAW_BYTES).map_err(corrupt)?;
    let tree = header.required_features & FEATURE_DIRECTORY != 0;
    let mut sections = Sections {
        dictionary: header.required(SectionKind::Dictionary)?.range(),
        directory: if tree { Some(header.required(SectionKind::Directory)?.range()) } else { None },
        ..Sections::default()
    };
    for p in Permutation::ALL {
        sections.permutations[usize::from(p.id())] = header.required(SectionKind::Permutation(p.id()))?.range();
    }
    let index = Index::decode(&raw, &sections, section.offset)?;
    // Counts were summed with overflow checks while decoding; they must be the header's.
    let terms = index.dictionary.entries.last().map_or(1, |e| e.item_end()) - 1;
    if terms != header.term_count {
        return Err(corrupt(format!("dictionary holds {terms} terms, header says {}", header.term_count)));
    }
    for p in Permutation::ALL {
        let root = &index.permutations[usize::from(p.id())];
        let quads = root.entries.last().map_or(0, |e| e.item_end());
        if quads != header.quad_count {
            return Err(corrupt(format!("{} holds {quads} quads, header says {}", p.name(), header.quad_count)));
        }
    }
    // FORMAT.md §4.3: a tree's blocks are numbered from its root, which must
    // agree with the section table (a flat root lists them, so it does).
    if tree {
        let blocks = |kind: SectionKind, count: usize| match header.section(kind) {
            Some(s) if s.item_count == count as u64 => Ok(()),
            _ => Err(corrupt(format!("{} directory numbers {count} blocks, the section table says otherwise", kind.name()))),
        };
        blocks(SectionKind::Dictionary, index.dictionary.block_count())?;
        for p in Permutation::ALL {
            blocks(SectionKind::Permutation(p.id()), index.permutations[usize::from(p.id())].block_count())?;
        }
    }
    Ok(index)
}

/// The error for an id no dictionary block holds.
fn not_in_dictionary(id: TermId, term_count: u64) -> ReadError {
    FormatError::corrupt("dictionary", 0, format!("term id {id} is not in the dictionary ({term_count} terms)")).into()
}

/// The error for a dictionary block holding fewer terms than its entry says.
fn block_count_mismatch(located: &Located, found: usize) -> FormatError {
    FormatError::corrupt(format!("dictionary block {}", located.number), located.range.offset, format!("holds {found} terms, INDEX says {}", located.item_count))
}

/// Sorted byte ranges with neighbours closer than `gap_bytes` merged: one
/// request each. Each merged range lists which input ranges it covers.
pub fn coalesce(mut ranges: Vec<ByteRange>, gap_bytes: u64) -> Vec<ByteRange> {
    ranges.sort_unstable();
    ranges.dedup();
    let mut merged: Vec<ByteRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.offset <= last.end().saturating_add(gap_bytes) => {
                let end = last.end().max(range.end());
                last.length = end - last.offset;
            }
            _ => merged.push(range),
        }
    }
    merged
}

/// The bytes of `wanted` inside the bytes of a merged range `within` that starts earlier.
pub fn slice_of(within: ByteRange, bytes: &[u8], wanted: ByteRange) -> Option<&[u8]> {
    let start = usize::try_from(wanted.offset.checked_sub(within.offset)?).ok()?;
    bytes.get(start..start.checked_add(usize::try_from(wanted.length).ok()?)?)
}

impl crate::format::header::Section {
    fn end(&self) -> u64 {
        self.offset + self.length
    }

    fn end_within(&self, available: u64) -> bool {
        self.end() <= available
    }
}

/// The least byte string greater than every string starting with `prefix`
/// (`None`: there is none, the prefix is all 0xFF).
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut after = prefix.to_vec();
    while let Some(last) = after.pop() {
        if last < u8::MAX {
            after.push(last + 1);
            return Some(after);
        }
    }
    None
}

#[cfg(all(test, feature = "write"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::format::index::PermutationEntry;
    use crate::format::write::{Counts, SectionSummary, layout};

    /// A header and sealed INDEX for `index`, whose blocks are 1 byte each
    /// (decode_index only checks that they tile their sections).
    fn header_and_index(index: &Index, quads: u64) -> (Header, Vec<u8>) {
        let sealed = block::compress(&index.encode(&Sections::default())).unwrap();
        let summary = |blocks: usize| SectionSummary { length: blocks as u64, item_count: blocks as u64, checksum: 0 };
        let permutations = std::array::from_fn(|p| summary(index.permutations[p].entries.len()));
        let index_summary = SectionSummary { length: sealed.len() as u64, item_count: 0, checksum: xxh3_64(&sealed) };
        let header = layout(Counts { quads, terms: 0, graphs: 0 }, index_summary, summary(0), [None, None], None, summary(0), permutations, None, None);
        (header, sealed)
    }

    /// Found by the query_damaged fuzz target: quad counts of INDEX entries
    /// were summed without a check, so a count near 2^64 panicked in debug
    /// builds and wrapped round to the header's count in release builds.
    #[test]
    fn issue_18_index_counts_that_overflow_are_corrupt() {
        let entry = |quad_count, a| PermutationEntry { range: ByteRange { offset: 0, length: 1 }, quad_count, first_key: [a, 0, 0, 0] };
        let permutations = std::array::from_fn(|p| if p == 0 { vec![entry(u64::MAX, 1), entry(2, 2)] } else { vec![entry(1, 1)] });
        let index = Index::flat(Vec::new(), Vec::new(), permutations);
        let (header, sealed) = header_and_index(&index, 1);
        let error = decode_index(&header, &sealed).unwrap_err();
        assert_eq!(error.to_string(), format!("corrupt INDEX at byte {}: SPO directory: counts add up to more than 2^64 at entry 1", header.sections[0].offset));
    }
}

