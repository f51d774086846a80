//! The `.rete` store as spareval's `QueryableDataset`. Terms stay dictionary
//! ids and are decoded only when an expression or the output needs them;
//! values computed by the query get their own variant, and only for terms
//! the dictionary does not hold, so id equality is RDF term equality.

use super::budget::Meter;
use super::error::QueryError;
use crate::read::{GraphFilter, QuadIter, QuadPattern};
use crate::{RangeSource, Store, TermId};
use oxrdf::{Term, TermRef};
use spareval::{ExpressionTerm, InternalQuad, QueryableDataset};
use std::cell::RefCell;
use std::collections::HashMap;
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
    /// Values whose stored lexical form spareval would lose, by the form it
    /// gives them (see `externalize_expression_term`).
    reshaped: RefCell<HashMap<Term, TermId>>,
}

/// Bounds `reshaped`; past it, values get spareval's own forms.
const MAX_RESHAPED: usize = 1 << 16;

impl<'a, S: RangeSource> StoreDataset<'a, S> {
    pub(crate) fn new(store: &'a Store<S>, meter: Arc<Meter>) -> Self {
        Self { store, meter, reshaped: RefCell::default() }
    }

    fn fail(&self, error: crate::ReadError) -> Stopped {
        self.meter.stop(QueryError::Read(error));
        Stopped
    }

    fn lookup(&self, term: Term) -> Result<InternalTerm, Stopped> {
        if !self.meter.step() {
            return Err(Stopped);
        }
        match self.store.term_id(term.as_ref()) {
            Ok(Some(id)) => Ok(InternalTerm::Stored(id)),
            Ok(None) => Ok(InternalTerm::Computed(Rc::new(term))),
            Err(error) => Err(self.fail(error)),
        }
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
        // A bound term the dictionary lacks matches nothing.
        fn id(term: Option<&InternalTerm>) -> Result<Option<TermId>, ()> {
            match term {
                None => Ok(None),
                Some(InternalTerm::Stored(id)) => Ok(Some(*id)),
                Some(InternalTerm::Computed(_)) => Err(()),
            }
        }
        let graph = match graph_name {
            None => Ok(GraphFilter::AnyNamed),
            Some(None) => Ok(GraphFilter::Default),
            Some(Some(InternalTerm::Stored(id))) => Ok(GraphFilter::Named(*id)),
            Some(Some(InternalTerm::Computed(_))) => Err(()),
        };
        let quads = match (id(subject), id(predicate), id(object), graph) {
            (Ok(subject), Ok(predicate), Ok(object), Ok(graph)) if self.meter.step() => Some(self.store.quads(QuadPattern { subject, predicate, object, graph })),
            _ => None,
        };
        Scan { quads, meter: Arc::clone(&self.meter) }
    }

    fn internal_named_graphs(&self) -> impl Iterator<Item = Result<InternalTerm, Stopped>> + use<'a, S> {
        let store: &'a Store<S> = self.store;
        store.index().graphs.iter().map(|graph| Ok(InternalTerm::Stored(graph.id)))
    }

    fn contains_internal_graph_name(&self, graph_name: &InternalTerm) -> Result<bool, Stopped> {
        Ok(match graph_name {
            InternalTerm::Stored(id) => self.store.index().graphs.binary_search_by_key(id, |g| g.id).is_ok(),
            InternalTerm::Computed(_) => false,
        })
    }

    fn internalize_term(&self, term: Term) -> Result<InternalTerm, Stopped> {
        self.lookup(term)
    }

    fn externalize_term(&self, term: InternalTerm) -> Result<Term, Stopped> {
        match term {
            InternalTerm::Stored(id) => {
                if !self.meter.step() {
                    return Err(Stopped);
                }
                self.store.term(id).map_err(|e| self.fail(e))
            }
            InternalTerm::Computed(term) => Ok(Rc::unwrap_or_clone(term)),
        }
    }

    fn externalize_expression_term(&self, term: InternalTerm) -> Result<ExpressionTerm, Stopped> {
        let InternalTerm::Stored(id) = term else { return Ok(self.externalize_term(term)?.into()) };
        let stored = self.externalize_term(term)?;
        let value = ExpressionTerm::from(stored.clone());
        // spareval keeps numbers and dates as values, dropping their lexical
        // form: `"01"^^xsd:integer` comes back as `"1"`. Remember which stored
        // term a value came from, so a value that only passes through (MIN,
        // MAX, SAMPLE, COALESCE, IF, unary +) keeps its exact form.
        // Booleans are left out: a cast to xsd:boolean must give `true`/`false`.
        if matches!(&stored, Term::Literal(literal) if literal.datatype() != oxrdf::vocab::xsd::BOOLEAN) {
            let normalized = Term::from(value.clone());
            if normalized != stored {
                let mut reshaped = self.reshaped.borrow_mut();
                if reshaped.len() < MAX_RESHAPED {
                    reshaped.entry(normalized).or_insert(id);
                }
            }
        }
        Ok(value)
    }

    fn internalize_expression_term(&self, term: ExpressionTerm) -> Result<InternalTerm, Stopped> {
        // Past a limit the step hooks hand back a value to turn their row
        // into an error; refusing every computed value here does that.
        if self.meter.is_stopped() {
            return Err(Stopped);
        }
        let term = Term::from(term);
        if let Some(&id) = self.reshaped.borrow().get(&term) {
            return Ok(InternalTerm::Stored(id));
        }
        if !self.meter.compute(term_bytes(term.as_ref())) {
            return Err(Stopped);
        }
        self.lookup(term)
    }
}

fn term_bytes(term: TermRef<'_>) -> u64 {
    let bytes = match term {
        TermRef::NamedNode(node) => node.as_str().len(),
        TermRef::BlankNode(node) => node.as_str().len(),
        TermRef::Literal(literal) => literal.value().len() + literal.language().map_or(0, str::len) + literal.datatype().as_str().len(),
        #[allow(unreachable_patterns)]
        _ => 0,
    };
    bytes as u64
}

/// The quads of one pattern, counted against the budget. It ends as soon as
/// evaluation is stopped, whoever stopped it.
struct Scan<'a, S> {
    quads: Option<QuadIter<'a, S>>,
    meter: Arc<Meter>,
}

impl<S: RangeSource> Iterator for Scan<'_, S> {
    type Item = Result<InternalQuad<InternalTerm>, Stopped>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.meter.is_stopped() {
            self.quads = None;
            return None;
        }
        let item = match self.quads.as_mut()?.next()? {
            Ok([s, p, o, g]) if self.meter.scan() => {
                Ok(InternalQuad { subject: InternalTerm::Stored(s), predicate: InternalTerm::Stored(p), object: InternalTerm::Stored(o), graph_name: (g != 0).then_some(InternalTerm::Stored(g)) })
            }
            Ok(_) => Err(Stopped),
            Err(error) => {
                self.meter.stop(QueryError::Read(error));
                Err(Stopped)
            }
        };
        if item.is_err() {
            self.quads = None;
        }
        Some(item)
    }
}
