//! Target `query_damaged`: a real file with damaged blocks and directories,
//! then queries and DESCRIBE over it. The input is a [`Damage`] (read with
//! `arbitrary`): which base file, a list of [`Mutation`]s and which queries.
//! Mutations work on the file's decoded parts (decompressed blocks, INDEX,
//! directory nodes, header counts, CARD/SUMMARY JSON), and the file is put
//! back together with every checksum right and every length and offset in
//! the directories following the parts' new sizes, so the damage reaches
//! the decoders and the query engine instead of stopping at a checksum.
//! Half the base files have a directory of depth 1–3 (FORMAT.md §4.3):
//! there the mutations that number blocks number the nodes after them
//! (keeping the input format, so that the corpus and the regression inputs
//! of flat files still decode to the same damage). Each query runs both
//! ways a host runs one: in rounds (the Worker, `rete query URL`) and over
//! the whole file (`rete query FILE`).

use arbitrary::Arbitrary;
use rete_core::format::block;
use rete_core::format::header::Header;
use rete_core::format::permutation::BlockLayout;
use rete_core::format::directory::{Body, Entry, Head, Layout, MAX_NODE_ENTRIES, Place as DirectoryPlace, decode_node, encode_node};
use rete_core::format::index::{GraphEntry, Index, Sections};
use rete_core::format::varint::Cursor;
use rete_core::format::permutation::Key;
use rete_core::format::write::{ContentHasher, Counts, SectionSummary, layout_with_directory, stamp_content_hash};
use rete_core::read::{BlockCache, DictionaryTerms, PermutationKeys, RoundOptions, open_in_rounds, run_in_rounds};
use rete_core::results::{ResultFormat, WriteError, write_answer};
use rete_core::sparql::{Budget, Query, QueryError, QueryOptions, evaluate, parse_query};
use rete_core::{ByteRange, RangeSource, ReadError, SectionKind, Store};
use std::sync::{Arc, OnceLock};
use xxhash_rust::xxh3::xxh3_64;

/// The fuzzer's input.
#[derive(Debug, Arbitrary)]
pub struct Damage {
    /// Which base file (modulo their number, 6: the three datasets with a
    /// directory, then flat; `bases.rs`).
    pub base: u8,
    /// Applied in order.
    pub mutations: Vec<Mutation>,
    /// Which query runs (modulo the base's query count): the first one.
    pub queries: Vec<u8>,
}

/// One change to a file's parts.
#[derive(Debug, Arbitrary)]
pub enum Mutation {
    /// Edits a block's decompressed bytes. With `resync`, its entry (count,
    /// first term or key; in INDEX, or in a node and then every entry above
    /// it) and the header's counts are made to agree with the edited block
    /// when it still decodes, so the edit reaches the query engine rather
    /// than the consistency checks. Past the last block, `block` numbers
    /// directory nodes (DIRECTORY order): the edit hits the node's level,
    /// entry count, first child offset, lengths, counts, block counts and
    /// heads, and `resync` makes the entries above agree with what it lists.
    Block { block: u16, edit: Edit, resync: bool },
    /// Edits a block's (or past the blocks, a node's) compressed bytes (its
    /// checksum trailer is recomputed).
    Sealed { block: u16, edit: Edit },
    /// Edits the decompressed INDEX (the directories' roots).
    Index { edit: Edit },
    /// Sets one field of the entry listing a block (in INDEX or a node) or,
    /// past the blocks, a node (in its parent node or the root).
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

/// A field of a directory entry.
#[derive(Debug, Arbitrary)]
pub enum EntryField {
    /// Terms or quads under it.
    Count,
    /// Component 0–3 of a permutation entry's first key (dictionary: head length).
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
        let _ = query(damage);
    }
}

/// Runs the queries chosen by `input` over its damaged base file, checks
/// their outcomes, and returns them (in rounds, over the whole file).
pub fn query(input: Damage) -> Vec<[Outcome; 2]> {
    let bases = bases();
    let base = &bases[usize::from(input.base) % bases.len()];
    let mut parts = base.parts.clone();
    for mutation in input.mutations.iter().take(8) {
        parts.apply(mutation);
    }
    let file = parts.assemble();
    let damaged = file != base.file;
    let mut outcomes = Vec::new();
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
        outcomes.push(answers);
    }
    outcomes
}

/// How many blocks and directory nodes base file `base` has: the parts a
/// `Block` mutation numbers (for tests that damage each node).
pub fn parts_of(base: u8) -> (usize, usize) {
    let bases = bases();
    let parts = &bases[usize::from(base) % bases.len()].parts;
    (parts.blocks.len(), parts.part_count() - parts.blocks.len())
}

/// The answer in the format the Worker picks by default, or why there is none.
pub type Outcome = Result<Vec<u8>, String>;

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
    /// The dataset, and "with a directory" or "flat".
    name: String,
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
    /// The seven directories: the dictionary's, then each permutation's.
    dictionary: Tree<Vec<u8>>,
    permutations: [Tree<Key>; 6],
    graphs: Vec<GraphEntry>,
    /// Written with a DIRECTORY section (required feature bit 1, FORMAT.md §4.3).
    with_directory: bool,
    /// The compressed INDEX while nothing changed it.
    index_frame: Option<Vec<u8>>,
    /// Decompressed INDEX when a mutation edited it (else encoded from the trees).
    index_raw: Option<Vec<u8>>,
    /// Sealed blocks: dictionary blocks, then each permutation's (shared
    /// with the base file until a mutation changes one: a file with a
    /// directory has a thousand small ones).
    blocks: Vec<Arc<Vec<u8>>>,
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

/// Runs `$body` with `$tree` the directory numbered `$t` (0 the dictionary's,
/// 1–6 the permutations'): the two kinds of head are two types.
macro_rules! on_tree {
    ($parts:expr, $t:expr, |$tree:ident| $body:expr) => {
        match $t {
            0 => {
                let $tree = &mut $parts.dictionary;
                $body
            }
            t => {
                let $tree = &mut $parts.permutations[t - 1];
                $body
            }
        }
    };
}

impl Parts {
    fn take_apart(file: &[u8]) -> Self {
        let store = Store::open(file, 0).unwrap_or_else(|e| panic!("base file does not open: {e}"));
        let header = store.header().clone();
        let index = store.index().clone();
        let range = |kind| header.section(kind).map(|s| ByteRange { offset: s.offset, length: s.length });
        let section = |kind| range(kind).map(|r| file[r.offset as usize..r.end() as usize].to_vec());
        let directory = range(SectionKind::Directory);
        let mut blocks = Vec::new();
        let dictionary = Tree::take_apart(&index.dictionary, file, directory, range(SectionKind::Dictionary).unwrap_or_default(), &mut blocks);
        let permutations = std::array::from_fn(|p| Tree::take_apart(&index.permutations[p], file, directory, range(SectionKind::Permutation(p as u8)).unwrap_or_default(), &mut blocks));
        Self {
            index_frame: section(SectionKind::Index),
            card: section(SectionKind::Card).unwrap_or_default(),
            summary: section(SectionKind::Summary),
            members: section(SectionKind::Members),
            search_root: section(SectionKind::Search),
            axioms: [section(SectionKind::ClassAxioms), section(SectionKind::PropertyAxioms)],
            search_blocks: section(SectionKind::SearchBlocks),
            with_directory: directory.is_some(),
            header,
            dictionary,
            permutations,
            graphs: index.graphs.clone(),
            index_raw: None,
            blocks,
        }
    }

    /// Blocks, then (with a directory) nodes: what `Block`, `Sealed` and
    /// `Entry` mutations number.
    fn part_count(&self) -> usize {
        self.blocks.len() + self.dictionary.node_count() + self.permutations.iter().map(Tree::node_count).sum::<usize>()
    }

    /// The directory (numbered as in [`on_tree!`]) and position in it of
    /// block `n`, or of node `n` in DIRECTORY order.
    fn find(&self, mut n: usize, count: impl Fn(&dyn TreeShape) -> usize) -> Option<(usize, usize)> {
        let trees = std::iter::once(&self.dictionary as &dyn TreeShape).chain(self.permutations.iter().map(|t| t as &dyn TreeShape));
        for (t, tree) in trees.enumerate() {
            if n < count(tree) {
                return Some((t, n));
            }
            n -= count(tree);
        }
        None
    }

    fn apply(&mut self, mutation: &Mutation) {
        match mutation {
            Mutation::Block { block, edit, resync } => {
                let n = usize::from(*block) % self.part_count();
                if n >= self.blocks.len() {
                    let Some((t, m)) = self.find(n - self.blocks.len(), |t| t.node_count()) else { return };
                    let before = self.permutations.clone();
                    if on_tree!(self, t, |tree| tree.edit_node(m, edit, *resync)) {
                        self.keep_encodable(before);
                        self.after_tree_change(t);
                    }
                    return;
                }
                let Ok(mut raw) = block::open(&self.blocks[n], &String::new, 0) else { return };
                let before = raw.clone();
                edit.apply(&mut raw);
                // An edit that changed nothing leaves the writer's bytes: the file stays undamaged.
                if raw == before {
                    return;
                }
                self.blocks[n] = Arc::new(seal(&raw));
                self.index_frame = None;
                if *resync {
                    let Some((t, leaf)) = self.find(n, |t| t.leaves()) else { return };
                    let before = self.permutations.clone();
                    let layout = self.header.block_layout();
                    on_tree!(self, t, |tree| tree.resync_leaf(leaf, &raw, layout));
                    self.keep_encodable(before);
                    self.after_tree_change(t);
                }
            }
            Mutation::Sealed { block, edit } => {
                let n = usize::from(*block) % self.part_count();
                if n >= self.blocks.len() {
                    let Some((t, m)) = self.find(n - self.blocks.len(), |t| t.node_count()) else { return };
                    on_tree!(self, t, |tree| tree.edit_sealed_node(m, edit));
                } else {
                    edit_sealed(Arc::make_mut(&mut self.blocks[n]), edit);
                }
                self.index_frame = None;
            }
            Mutation::Index { edit } => {
                if self.index_raw.is_none() {
                    let roots = self.lay_out(&mut Vec::new(), &mut 0);
                    self.index_raw = Some(roots.encode(&self.sections(0)));
                }
                if let Some(raw) = &mut self.index_raw {
                    edit.apply(raw);
                }
                self.index_frame = None;
            }
            Mutation::Entry { block, field, value } => {
                let n = usize::from(*block) % self.part_count();
                let before = self.permutations.clone();
                if n < self.blocks.len() {
                    let Some((t, leaf)) = self.find(n, |t| t.leaves()) else { return };
                    on_tree!(self, t, |tree| tree.set_leaf(leaf, field, *value));
                } else {
                    let Some((t, m)) = self.find(n - self.blocks.len(), |t| t.node_count()) else { return };
                    on_tree!(self, t, |tree| tree.set_above(m, field, *value));
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

    /// After a resync changed directory `t`'s entries: INDEX is written
    /// again, and the header's term count follows the dictionary's.
    fn after_tree_change(&mut self, t: usize) {
        self.index_frame = None;
        // An earlier raw INDEX edit may have left counts whose sum overflows: the header then
        // keeps its count, and the reader's checked sum must call the file corrupt.
        if t == 0 && let Some(total) = self.dictionary.root.entries.iter().try_fold(0u64, |sum, e| sum.checked_add(e.item_count)) {
            self.header.term_count = total;
        }
    }

    /// Undoes an entry change the reference encoder cannot write (first
    /// keys whose first component goes down in a body: it encodes their
    /// differences); raw INDEX and node edits reach such directories instead.
    fn keep_encodable(&mut self, before: [Tree<Key>; 6]) {
        if self.permutations.iter().any(Tree::descending) {
            self.permutations = before;
        }
        self.index_frame = None;
    }

    /// The item count the base file's header gives a section kept as it is.
    fn kept_items(&self, kind: SectionKind) -> usize {
        self.header.section(kind).map_or(0, |s| s.item_count as usize)
    }

    /// Where INDEX's roots point, relative to their sections (whose offsets
    /// are 0 here, as the writer encodes them): a DIRECTORY of
    /// `directory_bytes` with one.
    fn sections(&self, directory_bytes: usize) -> Sections {
        Sections { directory: self.with_directory.then_some(ByteRange { offset: 0, length: directory_bytes as u64 }), ..Sections::default() }
    }

    /// Lays out every directory over the (possibly re-sealed) blocks:
    /// appends the nodes to `directory` in the writer's order (each
    /// directory's, level by level from 0), counts them in `nodes`, and
    /// returns the roots.
    fn lay_out(&self, directory: &mut Vec<u8>, nodes: &mut usize) -> Index {
        let (dictionary_blocks, mut rest) = self.blocks.split_at(self.dictionary.leaves().min(self.blocks.len()));
        let dictionary = self.dictionary.lay_out(dictionary_blocks, directory, nodes);
        let permutations = std::array::from_fn(|p| {
            let (mine, after) = rest.split_at(self.permutations[p].leaves().min(rest.len()));
            rest = after;
            Arc::new(self.permutations[p].lay_out(mine, directory, nodes))
        });
        Index { dictionary: Arc::new(dictionary), graphs: self.graphs.clone(), permutations }
    }

    /// Writes the file: sections in the reference writer's order (FORMAT.md
    /// §1), every checksum and the content hash computed.
    fn assemble(&self) -> Vec<u8> {
        let mut directory = Vec::new();
        let mut nodes = 0;
        let roots = self.lay_out(&mut directory, &mut nodes);
        let index = match (&self.index_frame, &self.index_raw) {
            (Some(frame), None) => frame.clone(),
            (_, Some(raw)) => compress(raw),
            (None, None) => compress(&roots.encode(&self.sections(directory.len()))),
        };
        let (card, summary) = (&self.card, self.summary.as_ref());
        let dictionary_blocks = self.dictionary.leaves().min(self.blocks.len());
        let mut permutation_blocks = Vec::new();
        let mut next = dictionary_blocks;
        for tree in &self.permutations {
            let end = (next + tree.leaves()).min(self.blocks.len());
            permutation_blocks.push(&self.blocks[next..end]);
            next = end;
        }
        let summarize = |bytes: &[u8], items: usize| SectionSummary { length: bytes.len() as u64, item_count: items as u64, checksum: xxh3_64(bytes) };
        let dictionary_bytes = concat(&self.blocks[..dictionary_blocks]);
        let permutation_bytes: Vec<Vec<u8>> = permutation_blocks.iter().map(|blocks| concat(blocks)).collect();
        let mut permutation_summaries = [SectionSummary::default(); 6];
        for (p, bytes) in permutation_bytes.iter().enumerate() {
            permutation_summaries[p] = summarize(bytes, permutation_blocks[p].len());
        }
        let counts = Counts { quads: self.header.quad_count, terms: self.header.term_count, graphs: self.header.graph_count };
        let mut header = layout_with_directory(
            counts,
            summarize(&index, 0),
            summarize(card, 0),
            self.axioms.each_ref().map(|a| a.as_deref().map(|a| summarize(a, 0))),
            summary.map(|s| summarize(s, 0)),
            self.with_directory.then(|| summarize(&directory, nodes)),
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
        let directory = self.with_directory.then_some(directory);
        for part in [Some(&index), Some(card), self.search_root.as_ref(), class_axioms.as_ref(), property_axioms.as_ref(), summary, directory.as_ref(), Some(&dictionary_bytes)] {
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

/// One directory taken apart (FORMAT.md §4.1, §4.3): its root, and its
/// nodes level by level (`nodes[0]` list blocks); a flat directory is its
/// root alone.
#[derive(Clone)]
struct Tree<H> {
    /// Shared with the base file until a mutation changes one.
    nodes: Arc<Vec<Vec<Node<H>>>>,
    root: Body<H>,
}

/// A node of a directory.
#[derive(Clone)]
struct Node<H> {
    /// Decoded (ranges are rewritten when it is laid out).
    body: Body<H>,
    /// How many children it had in the base file: where its children are
    /// among those of its level, whatever an edit made of it.
    children: usize,
    /// Where its children are in `raw` (relative to their section).
    ranges: Vec<ByteRange>,
    /// The decompressed bytes `sealed` holds.
    raw: Vec<u8>,
    sealed: Vec<u8>,
    /// Edited as bytes: written as it is, not encoded again from `body`.
    edited: bool,
    /// `body` changed since `raw` was encoded.
    changed: bool,
}

/// What [`Parts`] numbers in a directory, whatever its heads.
trait TreeShape {
    fn leaves(&self) -> usize;
    fn node_count(&self) -> usize;
}

impl<H> TreeShape for Tree<H> {
    /// Blocks under the directory.
    fn leaves(&self) -> usize {
        match self.nodes.first() {
            Some(level) => level.iter().map(|n| n.children).sum(),
            None => self.root.entries.len(),
        }
    }

    /// Nodes in DIRECTORY.
    fn node_count(&self) -> usize {
        self.nodes.iter().map(Vec::len).sum()
    }
}

/// What a mutation does to a head, and how a block gives its entry's count and head.
trait Damageable: Head {
    /// `EntryField::Key(k)` set to `value`.
    fn set(&mut self, k: u8, value: u64);
    /// The count and first head of a decompressed block of a file whose
    /// permutation blocks are laid out as `layout`, if it decodes.
    fn of_block(raw: &[u8], layout: BlockLayout) -> Option<(u64, Self)>;
}

impl Damageable for Vec<u8> {
    fn set(&mut self, _: u8, value: u64) {
        self.truncate(usize::try_from(value).unwrap_or(usize::MAX));
    }

    fn of_block(raw: &[u8], _: BlockLayout) -> Option<(u64, Self)> {
        let terms = DictionaryTerms::decode(raw, "", 0).ok()?;
        Some((terms.len() as u64, terms.get(0)?))
    }
}

impl Damageable for Key {
    fn set(&mut self, k: u8, value: u64) {
        self[usize::from(k % 4)] = value;
    }

    fn of_block(raw: &[u8], layout: BlockLayout) -> Option<(u64, Self)> {
        let keys = PermutationKeys::decode(raw, layout, "", 0).ok()?;
        Some((keys.len() as u64, keys.get(0)?))
    }
}

impl<H: Damageable> Tree<H> {
    /// Reads the nodes under `root` from `file` and appends the sealed
    /// blocks under it to `blocks`.
    fn take_apart(root: &Body<H>, file: &[u8], directory: Option<ByteRange>, section: ByteRange, blocks: &mut Vec<Arc<Vec<u8>>>) -> Self {
        let bytes = |range: ByteRange| file[range.offset as usize..range.end() as usize].to_vec();
        let mut levels = Vec::new();
        let mut above = root.entries.clone();
        for level in (0..root.level).rev() {
            let children = if level == 0 { section } else { directory.unwrap_or_else(|| panic!("a tree without DIRECTORY")) };
            let relative = |e: &Entry<H>| ByteRange { offset: e.range.offset - children.offset, length: e.range.length };
            let nodes: Vec<Node<H>> = above
                .iter()
                .map(|entry| {
                    let sealed = bytes(entry.range);
                    let raw = block::open(&sealed, &String::new, 0).unwrap_or_else(|e| panic!("base file node: {e}"));
                    let body = decode_node(&raw, level, entry, children).unwrap_or_else(|e| panic!("base file node: {e}"));
                    Node { children: body.entries.len(), ranges: body.entries.iter().map(relative).collect(), body, raw, sealed, edited: false, changed: false }
                })
                .collect();
            above = nodes.iter().flat_map(|n| n.body.entries.iter().cloned()).collect();
            levels.push(nodes);
        }
        levels.reverse();
        blocks.extend(above.iter().map(|e| Arc::new(bytes(e.range))));
        Self { nodes: Arc::new(levels), root: root.clone() }
    }

    fn depth(&self) -> usize {
        self.nodes.len()
    }

    fn body(&self, level: usize, k: usize) -> Option<&Body<H>> {
        if level == self.depth() {
            return (k == 0).then_some(&self.root);
        }
        self.nodes.get(level)?.get(k).map(|n| &n.body)
    }

    /// A body to change (a node's is then encoded again).
    fn body_mut(&mut self, level: usize, k: usize) -> Option<&mut Body<H>> {
        if level == self.depth() {
            return (k == 0).then_some(&mut self.root);
        }
        let node = Arc::make_mut(&mut self.nodes).get_mut(level)?.get_mut(k)?;
        node.changed = true;
        Some(&mut node.body)
    }

    /// Which body of `level` lists child `c` of the level below (a block
    /// at level 0), and at which entry: by the children the bodies had.
    fn parent_of(&self, level: usize, mut c: usize) -> Option<(usize, usize)> {
        let counts: Vec<usize> = if level == self.depth() { vec![self.root.entries.len()] } else { self.nodes.get(level)?.iter().map(|n| n.children).collect() };
        for (k, count) in counts.into_iter().enumerate() {
            if c < count {
                return Some((k, c));
            }
            c -= count;
        }
        None
    }

    /// Level and position of node `m` (DIRECTORY order).
    fn position(&self, mut m: usize) -> Option<(usize, usize)> {
        for (level, nodes) in self.nodes.iter().enumerate() {
            if m < nodes.len() {
                return Some((level, m));
            }
            m -= nodes.len();
        }
        None
    }

    /// Makes the entries above body (`level`, `k`) give its counts and
    /// first head, up to the root, so that each node still agrees with its
    /// parent (FORMAT.md §4.3).
    fn propagate(&mut self, mut level: usize, mut k: usize) {
        while level < self.depth() {
            let Some(body) = self.body(level, k) else { return };
            let Some(items) = body.entries.iter().try_fold(0u64, |sum, e| sum.checked_add(e.item_count)) else { return };
            let Some(blocks) = body.entries.iter().try_fold(0usize, |sum, e| sum.checked_add(e.block_count)) else { return };
            let Some(head) = body.entries.first().map(|e| e.head.clone()) else { return };
            let Some((parent, i)) = self.parent_of(level + 1, k) else { return };
            let Some(entry) = self.body_mut(level + 1, parent).and_then(|b| b.entries.get_mut(i)) else { return };
            (entry.item_count, entry.block_count, entry.head) = (items, blocks, head);
            (level, k) = (level + 1, parent);
        }
    }

    /// Block `n`'s entry and those above it follow its edited contents, when they decode.
    fn resync_leaf(&mut self, n: usize, raw: &[u8], layout: BlockLayout) {
        let Some((count, head)) = H::of_block(raw, layout) else { return };
        let Some((k, i)) = self.parent_of(0, n) else { return };
        let Some(entry) = self.body_mut(0, k).and_then(|b| b.entries.get_mut(i)) else { return };
        (entry.item_count, entry.head) = (count, head);
        self.propagate(0, k);
    }

    /// Sets a field of block `n`'s entry, alone.
    fn set_leaf(&mut self, n: usize, field: &EntryField, value: u64) {
        let Some((k, i)) = self.parent_of(0, n) else { return };
        if let Some(entry) = self.body_mut(0, k).and_then(|b| b.entries.get_mut(i)) {
            set_field(entry, field, value);
        }
    }

    /// Sets a field of the entry listing node `m` (in its parent node or the root), alone.
    fn set_above(&mut self, m: usize, field: &EntryField, value: u64) {
        let Some((level, k)) = self.position(m) else { return };
        let Some((parent, i)) = self.parent_of(level + 1, k) else { return };
        if let Some(entry) = self.body_mut(level + 1, parent).and_then(|b| b.entries.get_mut(i)) {
            set_field(entry, field, value);
        }
    }

    /// Edits node `m`'s decompressed bytes; with `resync`, when they still
    /// decode as a body of its level, the entries above follow them.
    /// Whether anything changed.
    fn edit_node(&mut self, m: usize, edit: &Edit, resync: bool) -> bool {
        let Some((level, k)) = self.position(m) else { return false };
        let node = &mut Arc::make_mut(&mut self.nodes)[level][k];
        let mut raw = node.raw.clone();
        edit.apply(&mut raw);
        if raw == node.raw {
            return false;
        }
        node.sealed = seal(&raw);
        node.edited = true;
        let decoded = resync.then(|| decode_any_node(&raw, level)).flatten();
        node.raw = raw;
        if let Some(body) = decoded {
            node.body = body;
            self.propagate(level, k);
        }
        true
    }

    /// Edits node `m`'s compressed bytes (its checksum trailer recomputed).
    fn edit_sealed_node(&mut self, m: usize, edit: &Edit) {
        let Some((level, k)) = self.position(m) else { return };
        let node = &mut Arc::make_mut(&mut self.nodes)[level][k];
        edit_sealed(&mut node.sealed, edit);
        node.edited = true;
    }

    /// Each body's entries in order of their heads' first component, as the
    /// encoder of keys needs (bodies written as edited bytes aside).
    fn descending(&self) -> bool
    where
        H: AsKey,
    {
        let nodes = self.nodes.iter().flatten().filter(|n| !n.edited).map(|n| &n.body);
        std::iter::once(&self.root).chain(nodes).any(|body| body.entries.windows(2).any(|pair| pair[1].head.first() < pair[0].head.first()))
    }

    /// Writes the nodes over `blocks` (this directory's, sealed) into
    /// `directory`, each level's after the one below, with ranges from the
    /// children's actual lengths, and returns the root. A node no edit
    /// changed keeps its writer's bytes.
    fn lay_out(&self, blocks: &[Arc<Vec<u8>>], directory: &mut Vec<u8>, nodes: &mut usize) -> Body<H> {
        let mut offset = 0;
        let mut children: Vec<ByteRange> = blocks
            .iter()
            .map(|b| {
                let range = ByteRange { offset, length: b.len() as u64 };
                offset += range.length;
                range
            })
            .collect();
        for level in self.nodes.iter() {
            let mut placed = Vec::with_capacity(level.len());
            let mut first = 0;
            for node in level {
                let mine = children.get(first..first + node.children).unwrap_or_default();
                first += node.children;
                let fresh;
                let sealed = if node.edited || (!node.changed && mine == node.ranges) {
                    &node.sealed
                } else {
                    let raw = encode_node(&place(&node.body, mine), 0);
                    if raw == node.raw {
                        &node.sealed
                    } else {
                        fresh = seal(&raw);
                        &fresh
                    }
                };
                placed.push(ByteRange { offset: directory.len() as u64, length: sealed.len() as u64 });
                directory.extend_from_slice(sealed);
                *nodes += 1;
            }
            children = placed;
        }
        place(&self.root, &children)
    }
}

/// The first component of a key (the dictionary's heads have none to order).
trait AsKey {
    fn first(&self) -> u64;
}

impl AsKey for Key {
    fn first(&self) -> u64 {
        self[0]
    }
}

/// `body` with its children at `ranges` (relative to their section).
fn place<H: Clone>(body: &Body<H>, ranges: &[ByteRange]) -> Body<H> {
    let mut body = body.clone();
    for (entry, range) in body.entries.iter_mut().zip(ranges) {
        entry.range = *range;
    }
    body
}

fn set_field<H: Damageable>(entry: &mut Entry<H>, field: &EntryField, value: u64) {
    match field {
        EntryField::Count => entry.item_count = value,
        EntryField::Key(k) => entry.head.set(*k, value),
    }
}

/// Decodes an edited node's bytes as a node of `level`, without its
/// parent's checks (they are what a resync makes true).
fn decode_any_node<H: Head>(raw: &[u8], level: usize) -> Option<Body<H>> {
    let mut cursor = Cursor::new(raw);
    if cursor.varint().ok()? != level as u64 {
        return None;
    }
    let place = DirectoryPlace { section: ByteRange { offset: 0, length: u64::MAX }, first_item: 0, first_block: 0 };
    let body = Body::decode(&mut cursor, level as u8, place, Layout::Tree, MAX_NODE_ENTRIES, &mut 0, u64::MAX).ok()?;
    (!body.entries.is_empty()).then_some(body)
}

/// The sealed blocks of a section, one after the other.
fn concat(blocks: &[Arc<Vec<u8>>]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(blocks.iter().map(|b| b.len()).sum());
    for block in blocks {
        bytes.extend_from_slice(block);
    }
    bytes
}

/// Edits a sealed block's or node's compressed bytes and recomputes its checksum trailer.
fn edit_sealed(sealed: &mut Vec<u8>, edit: &Edit) {
    sealed.truncate(sealed.len().saturating_sub(4));
    edit.apply(sealed);
    let checksum = xxh3_64(sealed) as u32;
    sealed.extend_from_slice(&checksum.to_le_bytes());
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
            let name = format!("{} ({})", b.name, if b.directory { "with a directory" } else { "flat" });
            let queries = b.queries.into_iter().map(|text| {
                let query = parse_query(&text, None).unwrap_or_else(|e| panic!("a query of {name} does not parse: {e}\n{text}"));
                (text, query)
            });
            let parts = Parts::take_apart(&b.file);
            assert!(parts.assemble() == b.file, "{name} does not go back together byte for byte: Parts::assemble no longer writes what rete build writes");
            let queries = queries.collect();
            Base { name, parts, queries, file: b.file }
        }).collect())
}
