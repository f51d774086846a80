//! The `.rete` store as spareval's `QueryableDataset`. Terms stay dictionary
//! ids and are decoded only when an expression or the output needs them;
//! values computed by the query get their own variant, and only for terms
//! the dictionary does not hold, so id equality is RDF term equality.
//!
//! A run may meet blocks the host has not fetched yet ([`ReadError::Missing`]).
//! It then goes on instead of stopping, so that one run lists everything it
//! can see it needs: a scan ends quietly, a term lookup gives
//! [`InternalTerm::Pending`] (and a pattern using it asks for the quad blocks
//! its id range falls in), a term decode gives a placeholder. Such a run's
//! answer is garbage; the meter remembers the miss and the answer ends with
//! the `Missing` error (`mod.rs`), see `docs/READ-PATH.md`.
//!
//! A triple term with free parts in a pattern (`?r :q <<( :s :p ?o )>>`) is
//! read as a range of ids: triple terms are stored with their parts in full
//! (`06 S 00 P 00 O`, FORMAT.md §5.1) in a dictionary sorted by bytes, so
//! those starting with the parts given are consecutive ids
//! ([`QueryableDataset::internal_triple_terms`], vendor/README.md change 9).

use super::budget::Meter;
use super::error::QueryError;
use super::memo::TermMemos;
use super::term_functions;
use crate::results::JsonRow;
use super::top_k::Restriction;
use super::value_ranges::{ObjectRange, Objects};
use crate::format::term::TRIPLE_TERM;
use crate::read::{GraphFilter, LiteralKinds, QuadIter, QuadRanges, SPECULATE_MAX_BLOCKS, SPECULATE_MAX_BYTES, TermReader};
use crate::{FormatError, Permutation, RangeSource, ReadError, Store, TermId};
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BaseDirection, Literal, NamedNode, Term, TermRef};
use spareval::{ExpressionTerm, InternalQuad, QueryableDataset, StringTest, TermFunction, TermFunctionAnswer};
use rustc_hash::FxHashMap;
use std::cell::{Cell, OnceCell, RefCell};
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

/// A term during evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InternalTerm {
    /// A term of the dictionary, by id.
    Stored(TermId),
    /// A term the dictionary does not hold (computed, or a query constant
    /// absent from the data).
    Computed(Rc<Term>),
    /// A term whose dictionary block is not fetched yet: if the dataset holds
    /// it, its id is in the range (the block's). Only a run that missed
    /// blocks makes these, and its answer is thrown away.
    Pending(Rc<Term>, Range<TermId>),
    /// The triple terms a pattern's triple term with free parts can match:
    /// only ever a bound of a quad pattern, never a value.
    TripleTerms(Rc<TripleTerms>),
}

/// The stored triple terms whose encoding starts with `prefix`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TripleTerms {
    /// `None` when a part given by id was not decoded in this run (its
    /// block is missing): the run is thrown away, it matches nothing.
    prefix: Option<Vec<u8>>,
    /// Their ids, or while `pending` the ids of the dictionary blocks that
    /// hold them (the blocks are missing).
    ids: Range<TermId>,
    pending: bool,
}

/// Returned to spareval when evaluation must stop; the real cause (a read
/// error, a budget) is in the [`Meter`], because spareval drops some errors.
#[derive(Debug, thiserror::Error)]
#[error("evaluation stopped")]
pub(crate) struct Stopped;

/// A [`Store`] seen by spareval, with the meter counting its work.
pub(crate) struct StoreDataset<'a, S> {
    store: &'a Store<S>,
    meter: Arc<Meter>,
    /// Bytes of quad blocks asked for speculatively in this run.
    speculated_bytes: Cell<u64>,
    /// The default graph is the union of every graph (FORMAT.md §2, `flags`).
    union_default_graph: bool,
    /// Terms decoded and values looked up in this run (`memo.rs`).
    memos: TermMemos,
    /// The dictionary block decoded last, and where (`Store::term_in`).
    reader: RefCell<TermReader>,
    /// Objects FILTERs allow for the only pattern with a predicate (`value_ranges.rs`).
    object_ranges: Vec<ObjectRange>,
    /// The stored terms of a lexical form, once looked up (`lexical_objects`).
    lexical_objects: RefCell<FxHashMap<String, Option<ObjectBound>>>,
    /// The objects a top-k sort reads of its predicate (`top_k.rs`).
    restriction: Option<Restriction>,
    /// Where the blank nodes, the simple literals and the kind after them
    /// start (`internal_term_rank`), looked up once a term of a ranked kind
    /// is ranked; `None` when a block they need is missing.
    rank_bounds: OnceCell<Option<[TermId; 3]>>,
    /// The box of the last finished scan, for the next lookup's: a join looks
    /// a pattern up (or checks a quad) once per row, and allocating and freeing
    /// a box per lookup costs the Worker's allocator (dlmalloc) more than
    /// native's (issue 14). Each [`Scan`] gives its box back when dropped; one
    /// box is kept, with what its `QuadIter` holds (a block's keys at most),
    /// until the next lookup reuses it.
    spare_quads: SpareQuads<'a, S>,
}

/// Where a finished scan leaves its `QuadIter`'s box (`StoreDataset::spare_quads`).
type SpareQuads<'a, S> = Rc<RefCell<Option<Box<QuadIter<'a, S>>>>>;

/// The term kinds whose ids are in ORDER BY's order among themselves
/// (FORMAT.md §5.1: ids follow the encoded bytes, and after the kind byte
/// an IRI, a blank node's label and a simple literal are their text, which
/// ORDER BY compares as Rust's `str` does, by bytes): IRIs, blank nodes,
/// simple literals. A language tag or a datatype comes before the text,
/// so other literals are not in text order.
const RANKED_KINDS: [u8; 3] = [0x01, 0x02, 0x03];

/// Speculation is bounded per pattern by [`SPECULATE_MAX_BLOCKS`] and
/// [`SPECULATE_MAX_BYTES`] (read/mod.rs)…
/// … and a run speculates at most this many bytes in all.
const SPECULATE_MAX_RUN_BYTES: u64 = 8 << 20;

/// The prefix of the IRIs standing for terms not decoded yet in a run that
/// missed blocks (never part of a complete answer).
const PENDING_IRI: &str = "urn:x-rete:pending:";

/// At most this many lookups answer a lexical-form filter (one per datatype
/// and language tag); past it the pattern reads every object, which costs
/// fewer dictionary blocks cold.
const MAX_LEXICAL_LOOKUPS: usize = 64;

/// What FILTERs allow a pattern's object (`object_range`).
#[derive(Debug, Clone)]
enum ObjectBound {
    Range(Bound),
    /// Each of these ids (ascending, at least one), read one after another.
    Each(Rc<[TermId]>),
}

/// How a pattern position constrains ids.
#[derive(Debug, Clone)]
enum Bound {
    Free,
    Id(TermId),
    /// The consecutive ids of the triple terms a triple term with free parts matches.
    Ids(Range<TermId>),
    /// Not known in this run (dictionary blocks missing): within these ids,
    /// one of them unless `ranged`.
    Pending { ids: Range<TermId>, ranged: bool },
    /// A term the dataset does not hold: the pattern matches nothing.
    Absent,
}

impl Bound {
    fn of(term: Option<&InternalTerm>) -> Self {
        match term {
            None => Self::Free,
            Some(InternalTerm::Stored(id)) => Self::Id(*id),
            Some(InternalTerm::Pending(_, ids)) => Self::Pending { ids: ids.clone(), ranged: false },
            Some(InternalTerm::Computed(_)) => Self::Absent,
            Some(InternalTerm::TripleTerms(terms)) => match (&terms.prefix, terms.pending) {
                (None, _) => Self::Absent,
                (Some(_), true) => Self::Pending { ids: terms.ids.clone(), ranged: true },
                (Some(_), false) if terms.ids.is_empty() => Self::Absent,
                (Some(_), false) => Self::Ids(terms.ids.clone()),
            },
        }
    }

    fn ids(&self) -> Option<Range<TermId>> {
        match self {
            Self::Free | Self::Absent => None,
            Self::Id(id) => Some(*id..id.saturating_add(1)),
            Self::Ids(ids) | Self::Pending { ids, .. } => Some(ids.clone()),
        }
    }

    fn is_ranged(&self) -> bool {
        matches!(self, Self::Ids(_) | Self::Pending { ranged: true, .. })
    }
}

impl<'a, S: RangeSource> StoreDataset<'a, S> {
    pub(crate) fn new(store: &'a Store<S>, meter: Arc<Meter>) -> Self {
        Self { store, meter, speculated_bytes: Cell::new(0), memos: TermMemos::new(), reader: RefCell::default(), union_default_graph: false, object_ranges: Vec::new(), lexical_objects: RefCell::default(), restriction: None, rank_bounds: OnceCell::new(), spare_quads: Rc::default() }
    }

    /// Makes the default graph the union of every graph: its triples are
    /// read from the indexes across graphs, each triple once.
    pub(crate) fn with_union_default_graph(mut self, union: bool) -> Self {
        self.union_default_graph = union;
        self
    }

    /// Reads only the objects in these ranges for the patterns with their
    /// predicates and free subject and object (`value_ranges.rs`).
    pub(crate) fn with_object_ranges(mut self, ranges: Vec<ObjectRange>) -> Self {
        self.object_ranges = ranges;
        self
    }

    /// Reads only these objects of the restriction's predicate, in every
    /// pattern with it, whatever else the pattern binds (`top_k.rs`).
    pub(crate) fn with_restriction(mut self, restriction: Option<Restriction>) -> Self {
        self.restriction = restriction;
        self
    }

    /// The object ids a FILTER allows a pattern with this predicate
    /// (`None`: no range applies). Exact when the dictionary blocks at the
    /// range's ends are in memory; else, like a pending term, the ids of
    /// those blocks, for the quad blocks to come in the same round.
    fn object_range(&self, predicate: &InternalTerm) -> Option<ObjectBound> {
        let range = self.object_ranges.iter().find(|range| match predicate {
            InternalTerm::Stored(id) => matches!(self.store.term_id(range.predicate.as_ref().into()), Ok(Some(found)) if found == *id),
            InternalTerm::Pending(term, _) => matches!(term.as_ref(), Term::NamedNode(node) if *node == range.predicate),
            InternalTerm::Computed(_) | InternalTerm::TripleTerms(_) => false,
        })?;
        let (low, high) = match &range.objects {
            Objects::Between { low, high } => (low, high),
            Objects::Lexical(lexical) => return self.lexical_objects(lexical),
        };
        Some(ObjectBound::Range(match self.store.ids_between(low, Some(high)) {
            Ok(ids) if ids.is_empty() => Bound::Absent,
            Ok(ids) => Bound::Ids(ids),
            Err(ReadError::Missing(ranges)) => {
                self.meter.note_missing(&ranges);
                Bound::Pending { ids: self.store.ids_around_between(low, Some(high)), ranged: true }
            }
            Err(error) => {
                self.fail(error);
                Bound::Absent
            }
        }))
    }

    /// The stored terms whose lexical form (or IRI) is `lexical`, for a
    /// `FILTER(STR(?o) = "lexical")`: one lookup per datatype and language
    /// tag of the file's literals (the card lists them, FORMAT.md §7), the
    /// simple literal and the IRI. `None` (read every object) when the card
    /// does not list them all or they are more than [`MAX_LEXICAL_LOOKUPS`].
    /// In a run that misses a block, nothing: the run is thrown away.
    fn lexical_objects(&self, lexical: &str) -> Option<ObjectBound> {
        if let Some(bound) = self.lexical_objects.borrow().get(lexical) {
            return bound.clone();
        }
        let kinds = match self.store.literal_kinds() {
            Ok(kinds) => kinds,
            Err(ReadError::Missing(ranges)) => {
                self.meter.note_missing(&ranges);
                return Some(ObjectBound::Range(Bound::Absent));
            }
            Err(error) => {
                self.fail(error);
                return Some(ObjectBound::Range(Bound::Absent));
            }
        };
        let Some(candidates) = kinds.and_then(|kinds| lexical_candidates(lexical, &kinds)) else {
            self.lexical_objects.borrow_mut().insert(lexical.to_owned(), None);
            return None;
        };
        let mut ids = Vec::new();
        let mut complete = true;
        for candidate in candidates {
            if !self.meter.step() {
                return Some(ObjectBound::Range(Bound::Absent));
            }
            match self.store.encoded_term_id(&self.store.encode_term(candidate.as_ref())) {
                Ok(Some(id)) => ids.push(id),
                Ok(None) => {}
                Err(ReadError::Missing(ranges)) => {
                    self.meter.note_missing(&ranges);
                    complete = false;
                }
                Err(error) => {
                    self.fail(error);
                    return Some(ObjectBound::Range(Bound::Absent));
                }
            }
        }
        if !complete {
            return Some(ObjectBound::Range(Bound::Absent));
        }
        ids.sort_unstable();
        ids.dedup();
        let bound = if ids.is_empty() { ObjectBound::Range(Bound::Absent) } else { ObjectBound::Each(ids.into()) };
        self.lexical_objects.borrow_mut().insert(lexical.to_owned(), Some(bound.clone()));
        Some(bound)
    }

    /// The encoded form of a part of a triple term (`None`: not decoded in
    /// this run, its block is missing).
    fn encoded_part(&self, part: &InternalTerm) -> Result<Option<Vec<u8>>, Stopped> {
        match part {
            InternalTerm::Stored(id) => match self.store.encoded_term(*id) {
                Ok(encoded) => Ok(Some(encoded)),
                Err(ReadError::Missing(ranges)) => {
                    self.meter.note_missing(&ranges);
                    Ok(None)
                }
                Err(error) => Err(self.fail(error)),
            },
            InternalTerm::Computed(term) | InternalTerm::Pending(term, _) => Ok(Some(self.store.encode_term(term.as_ref().as_ref()))),
            InternalTerm::TripleTerms(terms) => Ok(terms.prefix.clone()),
        }
    }

    fn fail(&self, error: ReadError) -> Stopped {
        self.meter.stop(QueryError::Read(error));
        Stopped
    }

    fn lookup(&self, term: Term) -> Result<InternalTerm, Stopped> {
        if !self.meter.step() {
            return Err(Stopped);
        }
        if self.datatype_absent(&term) {
            return Ok(InternalTerm::Computed(Rc::new(term)));
        }
        let encoded = self.store.encode_term(term.as_ref());
        match self.store.encoded_term_id(&encoded) {
            Ok(Some(id)) => Ok(InternalTerm::Stored(id)),
            Ok(None) => Ok(InternalTerm::Computed(Rc::new(term))),
            Err(ReadError::Missing(ranges)) => {
                self.meter.note_missing(&ranges);
                Ok(match self.store.ids_around_term(&encoded) {
                    Some(ids) => InternalTerm::Pending(Rc::new(term), ids),
                    None => InternalTerm::Computed(Rc::new(term)),
                })
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// Whether `term` is an untagged literal of a datatype no literal of the
    /// file has, by a card already in memory: it cannot be a stored term,
    /// and the dictionary need not be searched (issue 14: schema-org 05's
    /// computed `xsd:integer(…)`, one lookup per row in a file without
    /// integers). Reading the card for it would cost the Worker a round.
    fn datatype_absent(&self, term: &Term) -> bool {
        let Term::Literal(literal) = term else { return false };
        if literal.language().is_some() {
            return false;
        }
        let datatype = literal.datatype().as_str();
        self.store.literal_kinds_in_memory().is_some_and(|kinds| !kinds.datatypes.iter().any(|known| known == datatype))
    }

    /// The term of an id, and whether it was decoded (`false`: its block is
    /// missing and the term is a placeholder, see the module doc).
    fn decode(&self, id: TermId) -> Result<(Term, bool), Stopped> {
        if !self.meter.step() {
            return Err(Stopped);
        }
        match self.store.term_in(id, &mut self.reader.borrow_mut()) {
            Ok(term) => Ok((term, true)),
            Err(ReadError::Missing(ranges)) => {
                self.meter.note_missing(&ranges);
                Ok((NamedNode::new_unchecked(format!("{PENDING_IRI}{id}")).into(), false))
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// `answer` of a stored term's encoding (`term_functions`), one step of
    /// the meter; `None` for a computed term, or one whose dictionary block
    /// is missing: left to spareval, which builds its value.
    fn answer_from_encoding<T>(&self, term: &InternalTerm, answer: impl FnOnce(&[u8]) -> Result<T, FormatError>) -> Result<Option<T>, Stopped> {
        let InternalTerm::Stored(id) = term else { return Ok(None) };
        if !self.meter.step() {
            return Err(Stopped);
        }
        match self.store.with_encoded_term_in(*id, &mut self.reader.borrow_mut(), answer) {
            Ok(Ok(answer)) => Ok(Some(answer)),
            Ok(Err(error)) => Err(self.fail(error.into())),
            // The value's decode gives this run's placeholder (`decode`).
            Err(ReadError::Missing(ranges)) => {
                self.meter.note_missing(&ranges);
                Ok(None)
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// The quads of `pattern` in the spare box when there is one
    /// (`spare_quads`), its iterator aimed in place (`QuadIter::aim`: no
    /// move of a new one into it), else in a new box.
    fn boxed(&self, pattern: QuadRanges) -> Box<QuadIter<'a, S>> {
        match self.spare_quads.borrow_mut().take() {
            Some(mut spare) => {
                spare.aim(pattern);
                spare
            }
            None => Box::new(self.store.quads_in(pattern)),
        }
    }

    /// Asks for the quad blocks a pattern with pending terms would read, so
    /// they come in the same round as the terms' dictionary blocks.
    fn speculate(&self, bounds: [&Bound; 3]) {
        let (permutation, bound) = Permutation::for_ranges(bounds.map(|b| !matches!(b, Bound::Free)), bounds.map(Bound::is_ranged));
        let order = permutation.key([0, 1, 2, 3]);
        let Some(ranges) = order[..bound].iter().map(|&position| bounds.get(position as usize).and_then(|b| b.ids())).collect::<Option<Vec<_>>>() else { return };
        let left = SPECULATE_MAX_RUN_BYTES.saturating_sub(self.speculated_bytes.get());
        let bytes = self.store.speculate(permutation, &ranges, SPECULATE_MAX_BLOCKS, SPECULATE_MAX_BYTES.min(left));
        self.speculated_bytes.set(self.speculated_bytes.get() + bytes);
    }
}

impl<S: RangeSource> StoreDataset<'_, S> {
    /// Binds `column` of a SPARQL JSON row to a term of a solution: a stored
    /// one from its dictionary bytes, without building the `Term`
    /// (`externalize_term` built a `String` per IRI that the writer then
    /// copied; issue 14, LUBM q14), one step of the meter as its decode is.
    /// A term whose dictionary block is missing writes nothing: the run's
    /// answer is thrown away (`pull` in `mod.rs`).
    pub(super) fn write_json(&self, term: &InternalTerm, column: usize, row: &mut JsonRow) -> Result<(), Stopped> {
        match term {
            InternalTerm::Stored(id) => {
                if !self.meter.step() {
                    return Err(Stopped);
                }
                match self.store.with_encoded_term_in(*id, &mut self.reader.borrow_mut(), |encoded| row.encoded_term(column, encoded)) {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(error)) => Err(self.fail(error.into())),
                    Err(ReadError::Missing(ranges)) => {
                        self.meter.note_missing(&ranges);
                        Ok(())
                    }
                    Err(error) => Err(self.fail(error)),
                }
            }
            InternalTerm::Computed(term) | InternalTerm::Pending(term, _) => {
                row.term(column, term.as_ref().as_ref());
                Ok(())
            }
            InternalTerm::TripleTerms(_) => self.externalize_term(term.clone()).map(|_| ()),
        }
    }
}

impl<'a, S: RangeSource + 'a> StoreDataset<'a, S> {
    /// The quads of a pattern (`QueryableDataset::internal_quads_for_pattern`).
    fn scan(&self, subject: Option<&InternalTerm>, predicate: Option<&InternalTerm>, object: Option<&InternalTerm>, graph_name: Option<Option<&InternalTerm>>) -> Scan<'a, S> {
        let mut bounds = [Bound::of(subject), Bound::of(predicate), Bound::of(object)];
        // The objects of a lexical-form FILTER, read one after another from
        // the first (`bounds[2]`).
        let mut each = None;
        if let (None, Some(predicate), None) = (subject, predicate, object)
            && !self.object_ranges.is_empty()
            && let Some(objects) = self.object_range(predicate)
        {
            bounds[2] = match objects {
                ObjectBound::Range(bound) => bound,
                ObjectBound::Each(ids) => {
                    let first = ids.first().map_or(Bound::Absent, |&id| Bound::Id(id));
                    each = Some(ids);
                    first
                }
            };
        }
        if let (Some(restriction), Some(InternalTerm::Stored(predicate))) = (&self.restriction, predicate)
            && restriction.predicate == *predicate
        {
            bounds[2] = restricted(std::mem::replace(&mut bounds[2], Bound::Free), restriction.objects.as_ref());
        }
        // A bound term the dictionary lacks matches nothing; a pending one
        // matches nothing in this run but says which blocks the next needs.
        let graph = match graph_name {
            None => Some(GraphFilter::AnyNamed),
            Some(None) if self.union_default_graph => Some(GraphFilter::Any),
            Some(None) => Some(GraphFilter::Default),
            Some(Some(InternalTerm::Stored(id))) => Some(GraphFilter::Named(*id)),
            Some(Some(InternalTerm::Computed(_) | InternalTerm::Pending(..) | InternalTerm::TripleTerms(_))) => None,
        };
        let absent = bounds.iter().any(|b| matches!(b, Bound::Absent));
        let pending = bounds.iter().any(|b| matches!(b, Bound::Pending { .. }));
        let quads = match (graph, absent, pending) {
            (Some(_), false, true) => {
                self.speculate([&bounds[0], &bounds[1], &bounds[2]]);
                None
            }
            (Some(graph), false, false) if self.meter.step() => {
                Some(self.boxed(QuadRanges { subject: bounds[0].ids(), predicate: bounds[1].ids(), object: bounds[2].ids(), graph }))
            }
            _ => None,
        };
        let each = match (&quads, each, graph) {
            (Some(_), Some(objects), Some(graph)) => Some(Box::new(EachObject { ranges: QuadRanges { subject: bounds[0].ids(), predicate: bounds[1].ids(), object: None, graph }, objects, next: 1 })),
            _ => None,
        };
        let merged = self.union_default_graph && graph_name == Some(None);
        Scan { store: self.store, quads, each, meter: Arc::clone(&self.meter), merge_graphs: merged.then_some(None), spare: Rc::clone(&self.spare_quads) }
    }
}

impl<'a, S: RangeSource + 'a> QueryableDataset<'a> for StoreDataset<'a, S> {
    type InternalTerm = InternalTerm;
    type Error = Stopped;

    fn internal_quads_for_pattern(
        &self,
        subject: Option<&InternalTerm>,
        predicate: Option<&InternalTerm>,
        object: Option<&InternalTerm>,
        graph_name: Option<Option<&InternalTerm>>,
    ) -> impl Iterator<Item = Result<InternalQuad<InternalTerm>, Stopped>> + use<'a, S> {
        self.scan(subject, predicate, object, graph_name)
    }

    /// The first quad of the pattern's scan, as spareval would take it (the
    /// scan's box goes back to `spare_quads` for the next lookup).
    fn internal_contains_quad(&self, subject: &InternalTerm, predicate: &InternalTerm, object: &InternalTerm, graph_name: Option<&InternalTerm>) -> Result<bool, Stopped> {
        let mut scan = self.scan(Some(subject), Some(predicate), Some(object), Some(graph_name));
        Ok(scan.next().transpose()?.is_some())
    }

    fn internal_named_graphs(&self) -> impl Iterator<Item = Result<InternalTerm, Stopped>> + use<'a, S> {
        let store: &'a Store<S> = self.store;
        store.index().graphs.iter().map(|graph| Ok(InternalTerm::Stored(graph.id)))
    }

    fn contains_internal_graph_name(&self, graph_name: &InternalTerm) -> Result<bool, Stopped> {
        Ok(match graph_name {
            InternalTerm::Stored(id) => self.store.index().graphs.binary_search_by_key(id, |g| g.id).is_ok(),
            InternalTerm::Computed(_) | InternalTerm::Pending(..) | InternalTerm::TripleTerms(_) => false,
        })
    }

    fn internalize_term(&self, term: Term) -> Result<InternalTerm, Stopped> {
        self.lookup(term)
    }

    fn externalize_term(&self, term: InternalTerm) -> Result<Term, Stopped> {
        match term {
            InternalTerm::Stored(id) => {
                if let Some(term) = self.memos.terms.get(id) {
                    return if self.meter.step() { Ok(term) } else { Err(Stopped) };
                }
                let (term, complete) = self.decode(id)?;
                if complete {
                    self.memos.terms.offer(id, &term, term_bytes(term.as_ref()));
                }
                Ok(term)
            }
            InternalTerm::Computed(term) | InternalTerm::Pending(term, _) => Ok(Rc::unwrap_or_clone(term)),
            InternalTerm::TripleTerms(_) => {
                // spareval only hands these back to `internal_quads_for_pattern`.
                self.meter.stop(QueryError::Evaluation("a triple pattern's range of triple terms was used as a value".into()));
                Err(Stopped)
            }
        }
    }

    fn externalize_expression_term(&self, term: InternalTerm) -> Result<ExpressionTerm, Stopped> {
        let InternalTerm::Stored(id) = term else { return Ok(self.externalize_term(term)?.into()) };
        if let Some(value) = self.memos.values.get(id) {
            return if self.meter.step() { Ok(value) } else { Err(Stopped) };
        }
        // A value drops a number's lexical form (`"01"^^xsd:integer` is the
        // value 1); a term that only passes through (a variable bound again,
        // MIN/MAX/SAMPLE, COALESCE/IF, a triple term's parts) stays an internal
        // term in spareval (vendor/README.md change 15), so its form is kept.
        let (stored, complete) = self.decode(id)?;
        let bytes = term_bytes(stored.as_ref());
        let value = ExpressionTerm::from(stored);
        if complete {
            self.memos.values.offer(id, &value, bytes);
        }
        Ok(value)
    }

    /// ORDER BY of stored IRIs, blank nodes or simple literals by id, without
    /// decoding them: within one kind ids are in ORDER BY's order
    /// ([`RANKED_KINDS`]; vendor/README.md change 17). The kinds' bounds
    /// (three dictionary lookups) are looked up for the first term of a
    /// ranked kind; until then a term's kind is read from its encoding, so
    /// that an ORDER BY of numbers pays one read, not the lookups.
    fn internal_term_rank(&self, term: &InternalTerm) -> Result<Option<(u8, u64)>, Stopped> {
        let InternalTerm::Stored(id) = term else { return Ok(None) };
        let bounds = match self.rank_bounds.get() {
            Some(bounds) => bounds,
            None => {
                let kind = self.store.with_encoded_term_in(*id, &mut self.reader.borrow_mut(), |encoded| encoded.first().copied());
                if !matches!(kind, Ok(Some(kind)) if RANKED_KINDS.contains(&kind)) {
                    return Ok(None);
                }
                self.rank_bounds.get_or_init(|| {
                    let [blank_nodes, strings, after] = [0x02, 0x03, 0x04].map(|kind| self.store.first_id_at_or_after(&[kind]).ok());
                    Some([blank_nodes?, strings?, after?])
                })
            }
        };
        let Some([blank_nodes, strings, after]) = *bounds else { return Ok(None) };
        let kind = match *id {
            id if id < blank_nodes => RANKED_KINDS[0],
            id if id < strings => RANKED_KINDS[1],
            id if id < after => RANKED_KINDS[2],
            _ => return Ok(None),
        };
        Ok(Some((kind, *id)))
    }

    /// LANG, DATATYPE, isIRI, isBlank, isLiteral, STRLEN, STR of a stored term
    /// from its encoded form, without decoding it (`term_functions.rs`).
    fn internal_term_function(&self, function: TermFunction, term: &InternalTerm) -> Result<TermFunctionAnswer, Stopped> {
        Ok(self.answer_from_encoding(term, |encoded| term_functions::answer(function, encoded))?.unwrap_or(TermFunctionAnswer::Unanswered))
    }

    fn internal_string_test(&self, term: &InternalTerm, test: &StringTest<'_>) -> Result<TermFunctionAnswer, Stopped> {
        Ok(self.answer_from_encoding(term, |encoded| term_functions::string_test(encoded, test))?.unwrap_or(TermFunctionAnswer::Unanswered))
    }

    /// LANG or DATATYPE of a stored literal as the term its tag or datatype
    /// IRI internalizes to, kept per tag or IRI (`memos.languages`,
    /// `memos.datatypes`): `GROUP BY (LANG(?l))` over every label, or
    /// `BIND(DATATYPE(?o) AS ?d)` over every literal, built the tag's or the
    /// IRI's string and looked it up in the computed memo per row.
    fn internal_function_term(&self, function: TermFunction, term: &InternalTerm) -> Result<Option<InternalTerm>, Stopped> {
        // Past a limit computed values are refused (`internalize_expression_term`).
        if self.meter.is_stopped() {
            return Err(Stopped);
        }
        let (memo, read): (_, fn(&[u8]) -> Result<Option<&str>, FormatError>) = match function {
            TermFunction::Lang => (&self.memos.languages, term_functions::language),
            TermFunction::Datatype => (&self.memos.datatypes, term_functions::datatype_as_value),
            _ => return Ok(None),
        };
        let Some(found) = self.answer_from_encoding(term, |encoded| Ok(read(encoded)?.map(|text| memo.get(text).ok_or_else(|| text.to_owned()))))? else {
            return Ok(None);
        };
        match found {
            Some(Ok(internal)) => Ok(Some(internal)),
            Some(Err(text)) => {
                let value = match function {
                    TermFunction::Lang => ExpressionTerm::StringLiteral(text.clone()),
                    _ => ExpressionTerm::NamedNode(NamedNode::new_unchecked(text.clone())),
                };
                let internal = self.internalize_expression_term(value)?;
                let bytes = text.len() as u64;
                memo.insert(text.into_boxed_str(), internal.clone(), bytes);
                Ok(Some(internal))
            }
            // Not a literal (the function is an error), or a datatype whose
            // values may have another: spareval answers from the value.
            None => Ok(None),
        }
    }

    /// FORMAT.md §5.1: a triple term is `06 S 00 P 00 O` with its parts in
    /// full, so the parts given, up to the first free one, are a prefix of
    /// the encoding of every triple term that matches, and those triple terms
    /// are consecutive ids. An inner triple term with free parts extends the
    /// prefix by its own (triple terms nest in object position); `<<( ?s :p :o )>>`
    /// narrows to every triple term, spareval checks the rest.
    fn internal_triple_terms(&self, subject: Option<&InternalTerm>, predicate: Option<&InternalTerm>, object: Option<&InternalTerm>) -> Result<Option<InternalTerm>, Stopped> {
        if !self.meter.step() {
            return Err(Stopped);
        }
        let none = |prefix| Ok(Some(InternalTerm::TripleTerms(Rc::new(TripleTerms { prefix, ids: 0..0, pending: false }))));
        if !self.store.header().has_triple_terms() {
            return none(Some(vec![TRIPLE_TERM]));
        }
        let mut prefix = vec![TRIPLE_TERM];
        for (part, last) in [(subject, false), (predicate, false), (object, true)] {
            let Some(part) = part else { break };
            let Some(encoded) = self.encoded_part(part)? else { return none(None) };
            prefix.extend_from_slice(&encoded);
            if last || matches!(part, InternalTerm::TripleTerms(_)) {
                break;
            }
            prefix.push(0x00);
        }
        let (ids, pending) = match self.store.ids_with_prefix(&prefix) {
            Ok(ids) => (ids, false),
            Err(ReadError::Missing(ranges)) => {
                self.meter.note_missing(&ranges);
                (self.store.ids_around_prefix(&prefix), true)
            }
            Err(error) => return Err(self.fail(error)),
        };
        Ok(Some(InternalTerm::TripleTerms(Rc::new(TripleTerms { prefix: Some(prefix), ids, pending }))))
    }

    /// One step of the step hooks (`budget.rs`): a join's row, past a limit
    /// its error.
    #[inline]
    fn internal_step(&self) -> Result<(), Stopped> {
        if self.meter.step() { Ok(()) } else { Err(Stopped) }
    }

    fn internalize_expression_term(&self, term: ExpressionTerm) -> Result<InternalTerm, Stopped> {
        // Past a limit no computed value is taken in: its row becomes an
        // error and stops multiplying.
        if self.meter.is_stopped() {
            return Err(Stopped);
        }
        // A computed value is a term in its canonical form: equal to a stored
        // term only when that term is written the same way.
        let term = Term::from(term);
        // `max_computed_bytes` bounds the memory of the values built: a
        // value the memo already holds is shared (`Rc`), not held again, so
        // only a value new to the memo counts (`LANG(?l)` = "en" over a
        // million labels counts its 41 bytes once, not once per row; a value
        // the bounded memo forgot counts again when it comes back).
        if let Some(internal) = self.memos.computed.get(&term) {
            return Ok(internal);
        }
        let bytes = term_bytes(term.as_ref());
        if !self.meter.compute(bytes) {
            return Err(Stopped);
        }
        // A pending value is kept too: its block stays missing for the rest
        // of this run (blocks are fed between runs; the memos are the run's).
        let internal = self.lookup(term.clone())?;
        self.memos.computed.insert(term, internal.clone(), bytes);
        Ok(internal)
    }
}

/// The terms whose `STR` is `lexical`: the simple literal, the literal of each
/// other datatype and each language tag of the file, the IRI if `lexical` is
/// one; `None` when they are more than [`MAX_LEXICAL_LOOKUPS`].
fn lexical_candidates(lexical: &str, kinds: &LiteralKinds) -> Option<Vec<Term>> {
    let typed: Vec<&String> = kinds.datatypes.iter().filter(|datatype| ![xsd::STRING.as_str(), rdf::LANG_STRING.as_str(), rdf::DIR_LANG_STRING.as_str()].contains(&datatype.as_str())).collect();
    // Counted before any is built: CLDR's card lists 724 language tags.
    if 2 + typed.len() + kinds.languages.len() > MAX_LEXICAL_LOOKUPS {
        return None;
    }
    let mut terms: Vec<Term> = vec![Literal::new_simple_literal(lexical).into()];
    terms.extend(NamedNode::new(lexical).ok().map(Term::from));
    for datatype in typed {
        terms.push(Literal::new_typed_literal(lexical, NamedNode::new_unchecked(datatype.as_str())).into());
    }
    for tag in &kinds.languages {
        terms.push(match tag.split_once("--") {
            Some((language, "ltr")) => Literal::new_directional_language_tagged_literal_unchecked(lexical, language, BaseDirection::Ltr),
            Some((language, "rtl")) => Literal::new_directional_language_tagged_literal_unchecked(lexical, language, BaseDirection::Rtl),
            _ => Literal::new_language_tagged_literal_unchecked(lexical, tag.as_str()),
        }
        .into());
    }
    Some(terms)
}

/// An object bound narrowed to a top-k restriction's ids (`None`: nothing).
fn restricted(bound: Bound, objects: Option<&Range<TermId>>) -> Bound {
    let Some(objects) = objects else { return Bound::Absent };
    match bound {
        Bound::Free if objects.is_empty() => Bound::Absent,
        Bound::Free => Bound::Ids(objects.clone()),
        Bound::Id(id) if objects.contains(&id) => Bound::Id(id),
        Bound::Id(_) => Bound::Absent,
        // Triple terms are never numbers or dates; a pending term matches
        // nothing in this run.
        other => other,
    }
}

fn term_bytes(term: TermRef<'_>) -> u64 {
    let bytes = match term {
        TermRef::NamedNode(node) => node.as_str().len(),
        TermRef::BlankNode(node) => node.as_str().len(),
        TermRef::Literal(literal) => literal.value().len() + literal.language().map_or(0, str::len) + literal.datatype().as_str().len(),
        TermRef::Triple(triple) => return term_bytes(triple.subject.as_ref().into()) + term_bytes(triple.predicate.as_ref().into()) + term_bytes(triple.object.as_ref()),
    };
    bytes as u64
}

/// The quads of one pattern, counted against the budget. It ends as soon as
/// evaluation is stopped, whoever stopped it, and at a missing block.
struct Scan<'a, S> {
    store: &'a Store<S>,
    /// Boxed apart from the scan: spareval boxes each lookup's iterator,
    /// scan included, and with the `QuadIter` inline that box was 328 bytes
    /// in the Worker's wasm, past the 256 where dlmalloc leaves its small
    /// bins for its slower tree of large chunks; two boxes of 96 and 232
    /// bytes take 10 % off the Worker's CPU on LUBM q02 and q09 (issue 14,
    /// docs/BENCHMARK.md "Session 22: the joins in wasm").
    quads: Option<Box<QuadIter<'a, S>>>,
    /// The objects still to read after `quads` ends, for a lexical-form
    /// FILTER (boxed: every scan is moved around by value, few have one).
    each: Option<Box<EachObject>>,
    meter: Arc<Meter>,
    /// Reading the union default graph: every quad goes to the default
    /// graph, and a triple held in several graphs counts once. Keys end with
    /// the graph (FORMAT.md §6), so copies of a triple come one after
    /// another; this holds the last triple handed out.
    merge_graphs: Option<Option<[TermId; 3]>>,
    /// Where `quads`' box goes when the scan is dropped (`StoreDataset::spare_quads`).
    spare: SpareQuads<'a, S>,
}

impl<S> Drop for Scan<'_, S> {
    /// Gives the `QuadIter`'s box to the next lookup.
    fn drop(&mut self) {
        if let Some(quads) = self.quads.take()
            && let Ok(mut spare) = self.spare.try_borrow_mut()
        {
            *spare = Some(quads);
        }
    }
}

/// A pattern read for each of several objects ([`ObjectBound::Each`]).
struct EachObject {
    /// The pattern's ranges but the object's.
    ranges: QuadRanges,
    objects: Rc<[TermId]>,
    /// The next object to read.
    next: usize,
}

impl<S: RangeSource> Scan<'_, S> {
    /// Starts reading the next object of an [`EachObject`]; `false` (and
    /// nothing left to read) when there is none.
    #[cold]
    fn next_object(&mut self) -> bool {
        self.quads = None;
        let Some(each) = self.each.as_deref_mut() else { return false };
        let Some(&id) = each.objects.get(each.next) else { return false };
        each.next += 1;
        self.quads = Some(Box::new(self.store.quads_in(QuadRanges { object: Some(id..id.saturating_add(1)), ..each.ranges.clone() })));
        true
    }

    fn next_quad(&mut self) -> Option<Result<[TermId; 4], ReadError>> {
        loop {
            if let Some(next) = self.quads.as_mut()?.next() {
                return Some(next);
            }
            if self.each.is_none() || !self.next_object() {
                return None;
            }
        }
    }
}

impl<S: RangeSource> Iterator for Scan<'_, S> {
    type Item = Result<InternalQuad<InternalTerm>, Stopped>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.meter.is_stopped() {
            self.quads = None;
            self.each = None;
            return None;
        }
        let mut next = self.next_quad()?;
        if self.merge_graphs.is_some() {
            while let Ok([s, p, o, g]) = &mut next {
                if self.merge_graphs != Some(Some([*s, *p, *o])) {
                    self.merge_graphs = Some(Some([*s, *p, *o]));
                    *g = 0;
                    break;
                }
                next = self.next_quad()?;
            }
        }
        let item = match next {
            Ok([s, p, o, g]) if self.meter.scan() => {
                Ok(InternalQuad { subject: InternalTerm::Stored(s), predicate: InternalTerm::Stored(p), object: InternalTerm::Stored(o), graph_name: (g != 0).then_some(InternalTerm::Stored(g)) })
            }
            Ok(_) => Err(Stopped),
            Err(ReadError::Missing(ranges)) => {
                // The scan of this range ends here in this run (the store
                // recorded the block); the next object of an `EachObject`
                // is still read, so its blocks come in the same round.
                self.meter.note_missing(&ranges);
                self.quads = None;
                return if self.each.is_some() && self.next_object() { self.next() } else { None };
            }
            Err(error) => {
                self.meter.stop(QueryError::Read(error));
                Err(Stopped)
            }
        };
        if item.is_err() {
            self.quads = None;
            self.each = None;
        }
        Some(item)
    }
}
