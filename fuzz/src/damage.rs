//! Target `query_damaged`: a real file with damaged blocks and directories,
//! then queries and DESCRIBE over it. The input is a [`Damage`] (read with
//! `arbitrary`): which base file, a list of [`Mutation`]s and which queries.
//! Mutations work on the file's decoded parts (decompressed blocks, INDEX,
//! header counts, CARD/SUMMARY JSON), and the file is put back together
//! with every checksum right, so the damage reaches the decoders and the
//! query engine instead of stopping at a checksum. Each query runs both
//! ways a host runs one: in rounds (the Worker, `rete query URL`) and over
//! the whole file (`rete query FILE`).

use arbitrary::Arbitrary;
use rete_core::format::block;
use rete_core::format::header::Header;
use rete_core::format::directory::Entry;
use rete_core::format::index::{Index, Sections};
use rete_core::format::permutation::Key;
use rete_core::format::write::{ContentHasher, Counts, SectionSummary, layout, stamp_content_hash};
use rete_core::read::{BlockCache, DictionaryTerms, PermutationKeys, RoundOptions, open_in_rounds, run_in_rounds};
use rete_core::results::{ResultFormat, WriteError, write_answer};
use rete_core::sparql::{Budget, Query, QueryError, QueryOptions, evaluate, parse_query};
use rete_core::{RangeSource, ReadError, SectionKind, Store};
use std::sync::{Arc, OnceLock};
use xxhash_rust::xxh3::xxh3_64;

/// The fuzzer's input.
#[derive(Debug, Arbitrary)]
pub struct Damage {
    /// Which base file (modulo their number).
    pub base: u8,
    /// Applied in order.
    pub mutations: Vec<Mutation>,
    /// Which query runs (modulo the base's query count): the first one.
    pub queries: Vec<u8>,
}

/// One change to a file's parts.
#[derive(Debug, Arbitrary)]
pub enum Mutation {
    /// Edits a block's decompressed bytes. With `resync`, its INDEX entry
    /// (count, first term or key) and the header's counts are made to agree
    /// with the edited block when it still decodes, so the edit reaches the
    /// query engine rather than the consistency checks.
    Block { block: u16, edit: Edit, resync: bool },
    /// Edits a block's compressed bytes (its checksum trailer is recomputed).
    Sealed { block: u16, edit: Edit },
    /// Edits the decompressed INDEX (the directories).
    Index { edit: Edit },
    /// Sets one field of a block's INDEX entry.
    Entry { block: u16, field: EntryField, value: u64 },
    /// Sets one count of the header.
    Count { field: CountField, value: u64 },
    /// Edits the CARD (`false`) or SUMMARY (`true`) JSON.
    Json { summary: bool, edit: Edit },
    /// Edits the MEMBERS section's bytes.
    Members { edit: Edit },
}

/// A byte edit; positions are taken modulo the length.
#[derive(Debug, Arbitrary)]
pub enum Edit {
    /// Overwrites bytes from `at`.
    Overwrite { at: u32, bytes: Vec<u8> },
    /// Inserts bytes at `at`.
    Insert { at: u32, bytes: Vec<u8> },
    /// Removes up to `length` bytes from `at`.
    Remove { at: u32, length: u16 },
    /// Cuts everything from `at`.
    Truncate { at: u32 },
    /// Adds `delta` to the byte at `at`.
    Add { at: u32, delta: u8 },
}

/// A field of an INDEX entry.
#[derive(Debug, Arbitrary)]
pub enum EntryField {
    /// Terms or quads in the block.
    Count,
    /// Component 0–3 of a permutation block's first key (dictionary: head length).
    Key(u8),
}

/// A count of the header.
#[derive(Debug, Arbitrary)]
pub enum CountField {
    /// Distinct quads.
    Quads,
    /// Distinct terms.
    Terms,
    /// Named graphs.
    Graphs,
}

/// Limits of one query: the Worker's kinds of limit, small enough that a
/// query finishes well inside the fuzzer's one-second timeout.
fn budget() -> Budget {
    Budget { max_quads_scanned: 20_000, max_rows_produced: 1_000, max_steps: 20_000, max_computed_bytes: 1 << 20, should_stop: None }
}

/// Target `query_damaged` over raw fuzzer bytes, decoded as libfuzzer-sys
/// decodes a typed input (so a saved input replays the same on stable).
pub fn query_damaged(data: &[u8]) {
    if let Ok(damage) = Damage::arbitrary_take_rest(arbitrary::Unstructured::new(data)) {
        query(damage);
    }
}

/// Runs the queries chosen by `input` over its damaged base file.
pub fn query(input: Damage) {
    let bases = bases();
    let base = &bases[usize::from(input.base) % bases.len()];
    let mut parts = base.parts.clone();
    for mutation in input.mutations.iter().take(8) {
        parts.apply(mutation);
    }
    let file = parts.assemble();
    let damaged = file != base.file;
    for &choice in input.queries.iter().take(1) {
        let (text, query) = &base.queries[usize::from(choice) % base.queries.len()];
        let answers = [in_rounds(&file, query), whole(&file, query)];
        if !damaged {
            for answer in &answers {
                assert!(answer.is_ok(), "undamaged {} failed {text}: {answer:?}", base.name);
            }
        }
        if let [Ok(a), Ok(b)] = &answers {
            assert!(a == b, "rounds and whole-file answers differ for {text}:\n{}\n---\n{}", String::from_utf8_lossy(a), String::from_utf8_lossy(b));
        }
    }
}

/// The answer in the format the Worker picks by default, or why there is none.
type Outcome = Result<Vec<u8>, String>;

fn write(store: &Store<impl RangeSource>, query: &Query) -> Result<Vec<u8>, QueryError> {
    let options = QueryOptions { budget: budget(), ..QueryOptions::default() };
    let answer = evaluate(store, query, &options)?;
    let format = ResultFormat::default_for(&answer);
    match write_answer(answer, format, Vec::new()) {
        Ok(bytes) => Ok(bytes),
        Err(WriteError::Query(error)) => Err(error),
        Err(other) => panic!("writing an answer to memory failed: {other}"),
    }
}

/// The Worker's way: open in rounds, then run until a run misses nothing
/// (a run that misses fails with `Missing`; only the complete run counts).
fn in_rounds(file: &[u8], query: &Query) -> Outcome {
    let fetch = |ranges: &[rete_core::ByteRange]| file.read_ranges(ranges);
    let (store, _) = open_in_rounds(fetch, BlockCache::new(crate::walk::CACHE_BYTES)).map_err(|e| checked(e.into()))?;
    let options = RoundOptions { max_rounds: 64, ..RoundOptions::default() };
    let (outcome, _) = run_in_rounds(&store, &options, fetch, |store| write(store, query)).map_err(|e| checked(e.into()))?;
    outcome.map_err(checked)
}

/// `rete query FILE`'s way: the store reads the bytes as evaluation goes.
fn whole(file: &[u8], query: &Query) -> Outcome {
    let store = Store::open(file, crate::walk::CACHE_BYTES).map_err(|e| checked(e.into()))?;
    write(&store, query).map_err(checked)
}

/// A query over damaged bytes may fail because they are corrupt, or on a
/// budget, or in evaluation; never with a failed read (the bytes are all in
/// memory) or bytes still missing after the last round.
fn checked(error: QueryError) -> String {
    match &error {
        QueryError::Read(ReadError::Source(_) | ReadError::Missing(_)) | QueryError::Syntax(_) => panic!("query over a file in memory failed with {error:?}"),
        _ => error.to_string(),
    }
}

/// A base file: its bytes, its parts, and queries about its own terms.
struct Base {
    name: &'static str,
    file: Vec<u8>,
    parts: Parts,
    /// Each query's text and parsed form.
    queries: Vec<(String, Query)>,
}

/// A file taken apart: what [`Parts::assemble`] needs to write it again.
/// Parts no mutation touched keep their compressed bytes, so a run
/// compresses only what it changed.
#[derive(Clone)]
struct Parts {
    header: Header,
    index: Index,
    /// The compressed INDEX while nothing changed it.
    index_frame: Option<Vec<u8>>,
    /// Decompressed INDEX when a mutation edited it (else encoded from `index`).
    index_raw: Option<Vec<u8>>,
    /// Sealed blocks: dictionary blocks, then each permutation's.
    blocks: Vec<Vec<u8>>,
    /// Compressed CARD and SUMMARY.
    card: Vec<u8>,
    summary: Option<Vec<u8>>,
    members: Option<Vec<u8>>,
    /// Optional sections kept as they are (not mutated): the search root,
    /// the class and property axioms, the search blocks (FORMAT.md §12, §13).
    search_root: Option<Vec<u8>>,
    axioms: [Option<Vec<u8>>; 2],
    search_blocks: Option<Vec<u8>>,
}

impl Parts {
    fn take_apart(file: &[u8]) -> Self {
        let store = Store::open(file, 0).unwrap_or_else(|e| panic!("base file does not open: {e}"));
        let header = store.header().clone();
        let index = store.index().clone();
        let section = |kind| header.section(kind).map(|s| file[s.offset as usize..(s.offset + s.length) as usize].to_vec());
        let mut blocks: Vec<Vec<u8>> = index.dictionary.entries.iter().map(|e| file[e.range.offset as usize..e.range.end() as usize].to_vec()).collect();
        for body in &index.permutations {
            blocks.extend(body.entries.iter().map(|e| file[e.range.offset as usize..e.range.end() as usize].to_vec()));
        }
        Self {
            index_frame: section(SectionKind::Index),
            card: section(SectionKind::Card).unwrap_or_default(),
            summary: section(SectionKind::Summary),
            members: section(SectionKind::Members),
            search_root: section(SectionKind::Search),
            axioms: [section(SectionKind::ClassAxioms), section(SectionKind::PropertyAxioms)],
            search_blocks: section(SectionKind::SearchBlocks),
            header,
            index,
            index_raw: None,
            blocks,
        }
    }

    fn apply(&mut self, mutation: &Mutation) {
        match mutation {
            Mutation::Block { block, edit, resync } => {
                let n = usize::from(*block) % self.blocks.len();
                let Ok(mut raw) = block::open(&self.blocks[n], &String::new, 0) else { return };
                let before = raw.clone();
                edit.apply(&mut raw);
                // An edit that changed nothing leaves the writer's bytes: the file stays undamaged.
                if raw == before {
                    return;
                }
                self.blocks[n] = seal(&raw);
                self.index_frame = None;
                if *resync {
                    self.resync(n, &raw);
                }
            }
            Mutation::Sealed { block, edit } => {
                let n = usize::from(*block) % self.blocks.len();
                let sealed = &mut self.blocks[n];
                sealed.truncate(sealed.len().saturating_sub(4));
                edit.apply(sealed);
                let checksum = xxh3_64(sealed) as u32;
                sealed.extend_from_slice(&checksum.to_le_bytes());
                self.index_frame = None;
            }
            Mutation::Index { edit } => {
                edit.apply(self.index_raw.get_or_insert_with(|| encode_index(&self.index, &self.blocks)));
                self.index_frame = None;
            }
            Mutation::Entry { block, field, value } => {
                let n = usize::from(*block) % self.blocks.len();
                let dictionary = self.index.dictionary.entries.len();
                let before = self.index.clone();
                if let Some(entry) = Arc::make_mut(&mut self.index.dictionary).entries.get_mut(n) {
                    match field {
                        EntryField::Count => entry.item_count = *value,
                        EntryField::Key(_) => entry.head.truncate(*value as usize),
                    }
                } else if let Some(entry) = permutation_entries(&mut self.index).nth(n - dictionary) {
                    match field {
                        EntryField::Count => entry.item_count = *value,
                        EntryField::Key(k) => entry.head[usize::from(*k % 4)] = *value,
                    }
                }
                self.keep_encodable(before);
            }
            Mutation::Count { field, value } => match field {
                CountField::Quads => self.header.quad_count = *value,
                CountField::Terms => self.header.term_count = *value,
                CountField::Graphs => self.header.graph_count = *value,
            },
            Mutation::Json { summary: false, edit } => edit_frame(&mut self.card, edit),
            Mutation::Json { summary: true, edit } => {
                if let Some(summary) = &mut self.summary {
                    edit_frame(summary, edit);
                }
            }
            Mutation::Members { edit } => {
                if let Some(members) = &mut self.members {
                    edit.apply(members);
                }
            }
        }
    }

    /// Makes block `n`'s INDEX entry and the header's counts agree with its
    /// edited contents, when they decode.
    fn resync(&mut self, n: usize, raw: &[u8]) {
        let dictionary = self.index.dictionary.entries.len();
        let before = self.index.clone();
        if let Some(entry) = Arc::make_mut(&mut self.index.dictionary).entries.get_mut(n) {
            let Ok(terms) = DictionaryTerms::decode(raw, "", 0) else { return };
            let Some(head) = terms.get(0) else { return };
            (entry.item_count, entry.head) = (terms.len() as u64, head);
            // An earlier raw INDEX edit may have left counts whose sum overflows: the header then
            // keeps its count, and the reader's checked sum must call the file corrupt.
            if let Some(total) = self.index.dictionary.entries.iter().try_fold(0u64, |sum, e| sum.checked_add(e.item_count)) {
                self.header.term_count = total;
            }
        } else if let Some(entry) = permutation_entries(&mut self.index).nth(n - dictionary) {
            let Ok(keys) = PermutationKeys::decode(raw, "", 0) else { return };
            let Some(first_key) = keys.get(0) else { return };
            (entry.item_count, entry.head) = (keys.len() as u64, first_key);
        }
        self.keep_encodable(before);
    }

    /// Undoes an entry change the reference INDEX encoder cannot write
    /// (first keys whose first component goes down: it encodes their
    /// differences); raw INDEX edits reach such directories instead.
    fn keep_encodable(&mut self, before: Index) {
        let descending = self.index.permutations.iter().any(|body| body.entries.windows(2).any(|pair| pair[1].head[0] < pair[0].head[0]));
        if descending {
            self.index = before;
        }
        self.index_frame = None;
    }

    /// The item count the base file's header gives a section kept as it is.
    fn kept_items(&self, kind: SectionKind) -> usize {
        self.header.section(kind).map_or(0, |s| s.item_count as usize)
    }

    /// Writes the file: sections in the reference writer's order (FORMAT.md
    /// §1), every checksum and the content hash computed.
    fn assemble(&self) -> Vec<u8> {
        let index = match (&self.index_frame, &self.index_raw) {
            (Some(frame), None) => frame.clone(),
            (_, Some(raw)) => compress(raw),
            (None, None) => compress(&encode_index(&self.index, &self.blocks)),
        };
        let (card, summary) = (&self.card, self.summary.as_ref());
        let dictionary_blocks = self.index.dictionary.entries.len();
        let mut permutation_blocks = Vec::new();
        let mut next = dictionary_blocks;
        for body in &self.index.permutations {
            permutation_blocks.push(&self.blocks[next..next + body.entries.len()]);
            next += body.entries.len();
        }
        let summarize = |bytes: &[u8], items: usize| SectionSummary { length: bytes.len() as u64, item_count: items as u64, checksum: xxh3_64(bytes) };
        let dictionary_bytes = self.blocks[..dictionary_blocks].concat();
        let permutation_bytes: Vec<Vec<u8>> = permutation_blocks.iter().map(|blocks| blocks.concat()).collect();
        let mut permutation_summaries = [SectionSummary::default(); 6];
        for (p, bytes) in permutation_bytes.iter().enumerate() {
            permutation_summaries[p] = summarize(bytes, permutation_blocks[p].len());
        }
        let counts = Counts { quads: self.header.quad_count, terms: self.header.term_count, graphs: self.header.graph_count };
        let mut header = layout(
            counts,
            summarize(&index, 0),
            summarize(card, 0),
            self.axioms.each_ref().map(|a| a.as_deref().map(|a| summarize(a, 0))),
            summary.map(|s| summarize(s, 0)),
            summarize(&dictionary_bytes, dictionary_blocks),
            permutation_summaries,
            self.members.as_deref().map(|m| summarize(m, 0)),
            self.search_root.as_deref().zip(self.search_blocks.as_deref()).map(|(root, blocks)| [summarize(root, 0), summarize(blocks, self.kept_items(SectionKind::SearchBlocks))]),
        );
        // The header's choices and required features (FORMAT.md §2), as the file had them.
        header.flags = self.header.flags;
        header.require(self.header.required_features);
        let mut file = header.encode();
        let header_length = file.len();
        let [class_axioms, property_axioms] = &self.axioms;
        for part in [Some(&index), Some(card), self.search_root.as_ref(), class_axioms.as_ref(), property_axioms.as_ref(), summary, Some(&dictionary_bytes)] {
            file.extend_from_slice(part.map_or(&[][..], Vec::as_slice));
        }
        for bytes in &permutation_bytes {
            file.extend_from_slice(bytes);
        }
        file.extend_from_slice(self.members.as_deref().unwrap_or_default());
        file.extend_from_slice(self.search_blocks.as_deref().unwrap_or_default());
        let mut hasher = ContentHasher::default();
        hasher.update(&file);
        stamp_content_hash(&mut file[..header_length], hasher.finish());
        file
    }
}

/// Edits the JSON inside a compressed CARD or SUMMARY frame.
fn edit_frame(frame: &mut Vec<u8>, edit: &Edit) {
    let Ok(mut raw) = block::decompress(frame, 64 << 20) else { return };
    let before = raw.clone();
    edit.apply(&mut raw);
    if raw != before {
        *frame = compress(&raw);
    }
}

/// INDEX with each entry's length taken from the (possibly re-sealed) blocks.
fn encode_index(index: &Index, blocks: &[Vec<u8>]) -> Vec<u8> {
    let mut index = index.clone();
    let dictionary = Arc::make_mut(&mut index.dictionary).entries.iter_mut().map(|e| &mut e.range);
    let mut permutations = index.permutations.clone();
    let entries = dictionary.chain(permutations.iter_mut().flat_map(|body| Arc::make_mut(body).entries.iter_mut()).map(|e| &mut e.range));
    for (range, block) in entries.zip(blocks) {
        range.length = block.len() as u64;
    }
    index.permutations = permutations;
    index.encode(&Sections::default())
}

/// The entries of every permutation's (flat) directory, in order.
fn permutation_entries(index: &mut Index) -> impl Iterator<Item = &mut Entry<Key>> {
    index.permutations.iter_mut().flat_map(|body| Arc::make_mut(body).entries.iter_mut())
}

/// A zstd frame declaring its content size (FORMAT.md §5.3), as the
/// writer's, but at level 1 rather than the format's: a reader cannot tell
/// the level, and at level 9 recompressing what a mutation changed took a
/// fifth of an input's time (docs/RELIABILITY.md "Throughput").
fn compress(raw: &[u8]) -> Vec<u8> {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    COMPRESSOR.with_borrow_mut(|compressor| {
        let compressor = match compressor {
            Some(compressor) => compressor,
            None => compressor.insert(zstd::bulk::Compressor::new(1).unwrap_or_else(|e| panic!("zstd: {e}"))),
        };
        compressor.compress(raw).unwrap_or_else(|e| panic!("zstd: {e}"))
    })
}

/// A sealed block (FORMAT.md §5.3): the frame, then its checksum.
fn seal(raw: &[u8]) -> Vec<u8> {
    let mut sealed = compress(raw);
    let checksum = xxh3_64(&sealed) as u32;
    sealed.extend_from_slice(&checksum.to_le_bytes());
    sealed
}

impl Edit {
    fn apply(&self, bytes: &mut Vec<u8>) {
        let at = |position: u32, length: usize| if length == 0 { 0 } else { position as usize % (length + 1) };
        match self {
            Self::Overwrite { at: position, bytes: new } => {
                let start = at(*position, bytes.len());
                let end = (start + new.len()).min(bytes.len());
                bytes[start..end].copy_from_slice(&new[..end - start]);
            }
            Self::Insert { at: position, bytes: new } => {
                let start = at(*position, bytes.len());
                bytes.splice(start..start, new.iter().copied());
            }
            Self::Remove { at: position, length } => {
                let start = at(*position, bytes.len());
                let end = (start + usize::from(*length)).min(bytes.len());
                bytes.drain(start..end);
            }
            Self::Truncate { at: position } => bytes.truncate(at(*position, bytes.len())),
            Self::Add { at: position, delta } => {
                let position = at(*position, bytes.len().saturating_sub(1));
                if let Some(byte) = bytes.get_mut(position) {
                    *byte = byte.wrapping_add(*delta);
                }
            }
        }
    }
}

/// Builds the base files now (a second or more): the fuzz target calls it
/// before libFuzzer starts timing runs.
pub fn init() {
    let _ = bases();
}

/// The base files, built once per process (`bases.rs`).
fn bases() -> &'static [Base] {
    static BASES: OnceLock<Vec<Base>> = OnceLock::new();
    BASES.get_or_init(|| crate::bases::base_files().into_iter().map(|b| {
            let queries = b.queries.into_iter().map(|text| {
                let query = parse_query(&text, None).unwrap_or_else(|e| panic!("a query of {} does not parse: {e}\n{text}", b.name));
                (text, query)
            });
            let parts = Parts::take_apart(&b.file);
            assert!(parts.assemble() == b.file, "{} does not go back together byte for byte: Parts::assemble no longer writes what rete build writes", b.name);
            Base { name: b.name, parts, queries: queries.collect(), file: b.file }
        }).collect())
}
