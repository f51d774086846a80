//! SPARQL 1.1 queries over a [`Store`]: parsing (spargebra), evaluation
//! (spareval over the store's ids, `dataset.rs`) and budgets for untrusted
//! queries (`budget.rs`). Results stream: nothing is collected here, the
//! caller pulls solutions or triples one at a time ([`crate::results`]
//! writes them out).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rete_core::sparql::{Answer, QueryOptions, evaluate, parse_query};
//! // A whole file in memory is a `RangeSource`; hosts bring their own.
//! let store = rete_core::Store::open(std::fs::read("people.rete")?, 64 << 20)?;
//! let query = parse_query("SELECT ?name WHERE { ?person <http://xmlns.com/foaf/0.1/name> ?name }", None)?;
//! let Answer::Solutions(solutions) = evaluate(&store, &query, &QueryOptions::default())? else { unreachable!() };
//! for solution in solutions {
//!     println!("{}", solution?.get("name").map(|t| t.to_string()).unwrap_or_default());
//! }
//! # Ok(()) }
//! ```

mod algebra;
mod budget;
mod dataset;
mod error;
mod extensions;
mod graph_scope;
mod memo;
mod term_functions;
mod tokens;
mod top_k;
mod value_ranges;
#[cfg(all(test, feature = "write"))]
pub(crate) mod tests;

pub use budget::{Budget, Usage};
pub use error::{Limit, QueryError, SyntaxError, TextPosition};
pub use oxrdf::{Triple, Variable};
pub use spareval::QuerySolution;
pub use spargebra::Query;

use crate::format::term::LiteralOrder;
use crate::{RangeSource, Store};
use budget::{Meter, STEP_FUNCTION, with_step_hooks};
use dataset::StoreDataset;
use oxrdf::{GraphName, NamedNode, NamedOrBlankNode};
use spargebra::algebra::GraphPattern;
use crate::results::JsonRow;
use spareval::{InternalQueryResults, InternalSolutionIter, QueryEvaluationError, QueryEvaluator, QueryResults, QueryTripleIter};
use spargebra::SparqlParser;
use std::sync::Arc;

/// How to evaluate a query, beyond its text.
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// The protocol's `default-graph-uri`: graphs merged into the default
    /// graph. With `named_graphs`, replaces the query's `FROM`/`FROM NAMED`
    /// when either is non-empty (SPARQL 1.1 Protocol §2.1.4).
    pub default_graphs: Vec<NamedNode>,
    /// The protocol's `named-graph-uri`: the only graphs `GRAPH` can see.
    pub named_graphs: Vec<NamedNode>,
    /// Limits for untrusted queries; unlimited by default.
    pub budget: Budget,
}

/// Parses a SPARQL 1.1 query; relative IRIs resolve against `base_iri`.
pub fn parse_query(query: &str, base_iri: Option<&str>) -> Result<Query, QueryError> {
    let mut parser = SparqlParser::new();
    if let Some(base_iri) = base_iri {
        parser = parser.with_base_iri(base_iri).map_err(|e| SyntaxError::without_location(format!("invalid base IRI <{base_iri}>: {e}")))?;
    }
    let rewritten = tokens::rewrite(query);
    let parsed = parser.clone().parse_query(&rewritten.text).map_err(|e| SyntaxError::from_spargebra(&e, query, &rewritten))?;
    if let Some(probe) = &rewritten.probe {
        parser.parse_query(probe).map_err(|e| SyntaxError::from_spargebra(&e, query, &rewritten))?;
    }
    Ok(parsed)
}

/// Parses and evaluates a query.
pub fn query<'a, S: RangeSource + 'a>(store: &'a Store<S>, query: &str, base_iri: Option<&str>, options: &QueryOptions) -> Result<Answer<'a>, QueryError> {
    evaluate(store, &parse_query(query, base_iri)?, options)
}

/// What a query returned. Solutions and triples are produced as they are
/// pulled; an error met on the way (a budget, a missing range) ends the
/// iteration with that error.
#[non_exhaustive]
pub enum Answer<'a> {
    /// `SELECT`.
    Solutions(Solutions<'a>),
    /// `ASK`.
    Boolean(bool),
    /// `CONSTRUCT` or `DESCRIBE`.
    Graph(Triples<'a>),
}

/// Evaluates a parsed query over a store.
pub fn evaluate<'a, S: RangeSource + 'a>(store: &'a Store<S>, query: &Query, options: &QueryOptions) -> Result<Answer<'a>, QueryError> {
    let meter = Arc::new(Meter::new(options.budget.clone()));
    let searched = crate::search::sparql::rewrite(store, query, &mut |ranges| meter.note_missing(ranges))?;
    let (mut query, unknown_functions) = adapt(searched.unwrap_or_else(|| query.clone()));
    // Range FILTERs on numbers and dates read only their range, and top-k
    // sorts on them only their top k (FORMAT.md §5.1.1), lexical-form
    // FILTERs only their terms, found before the step hooks reshape the pattern.
    let value_order = store.header().literal_order() == LiteralOrder::Value;
    let object_ranges = value_ranges::object_ranges(&mut query, value_order);
    let run = Run { store, options, meter: &meter, unknown_functions: &unknown_functions, object_ranges: &object_ranges };
    let top = if value_order { top_k::top_k(&query).filter(|top| !object_ranges.iter().any(|range| range.predicate == top.predicate)) } else { None };
    let restriction = top.and_then(|top| top_k::restriction(store, &meter, &top, &mut |restriction, limit| run.count(&query, &top.pattern, restriction, limit)));
    match run.execute(&mut query, restriction) {
        Ok(InternalQueryResults::Solutions(inner)) => Ok(Answer::Solutions(Solutions { variables: Arc::clone(inner.variables()), inner: Box::new(inner), meter, done: false })),
        Ok(InternalQueryResults::Other(QueryResults::Solutions(_))) => Err(QueryError::Evaluation("a SELECT answered as another query".into())),
        Ok(InternalQueryResults::Other(QueryResults::Boolean(_))) if meter.has_missed() => Err(meter.missing_error()),
        Ok(InternalQueryResults::Other(QueryResults::Boolean(value))) => match meter.take_cause() {
            Some(cause) => Err(cause),
            None => Ok(Answer::Boolean(value)),
        },
        Ok(InternalQueryResults::Other(QueryResults::Graph(inner))) => Ok(Answer::Graph(Triples { inner, meter, done: false })),
        Err(error) => Err(query_error(&meter, error)),
    }
}

/// The most triple patterns (and paths) a query has for spareval to plan it.
const MAX_PLANNED_PATTERNS: usize = 48;

/// What evaluating a query over a store takes besides the query: the
/// evaluator's set-up, shared by the query and the top-k check (`top_k.rs`).
struct Run<'r, 'a, S> {
    store: &'a Store<S>,
    options: &'r QueryOptions,
    meter: &'r Arc<Meter>,
    unknown_functions: &'r [NamedNode],
    object_ranges: &'r [value_ranges::ObjectRange],
}

impl<'a, S: RangeSource + 'a> Run<'_, 'a, S> {
    /// Evaluates a query (adapted, without step hooks) over the store. The
    /// query is borrowed mutably only for the walks that read it
    /// (`algebra::VisitMut`): it is left as it was, and not copied.
    fn execute(&self, query: &mut Query, restriction: Option<top_k::Restriction>) -> Result<InternalQueryResults<'a, StoreDataset<'a, S>>, QueryEvaluationError> {
        // spareval's optimizer (join order, type inference) grows with the cube of a
        // pattern's size and runs before any budget can stop it: a 170-byte query of
        // 121 reifier patterns (`?s ?p ?o ~ ~ ~ …`) planned for 1.3 s (issue 18's
        // `request` target). Past this many patterns the query runs in the order
        // written, which the budgets bound; its answers are the same. The step hooks
        // plan too (`with_step_hooks`): a MINUS of 117 reifiers took 0.9 s there.
        let planned = algebra::triple_pattern_count(query) <= MAX_PLANNED_PATTERNS;
        let hooked;
        let query = if self.options.budget.is_unlimited() {
            &*query
        } else {
            hooked = with_hooks(query, planned);
            &hooked
        };
        let evaluator = QueryEvaluator::new().with_step_marker(NamedNode::new_unchecked(STEP_FUNCTION));
        let evaluator = extensions::failing(evaluator, self.unknown_functions);
        let evaluator = if planned { evaluator } else { evaluator.without_optimizations() };
        let mut prepared = evaluator.prepare(query);
        if !self.options.default_graphs.is_empty() || !self.options.named_graphs.is_empty() {
            let dataset = prepared.dataset_mut();
            dataset.set_default_graph(self.options.default_graphs.iter().cloned().map(GraphName::from).collect());
            dataset.set_available_named_graphs(self.options.named_graphs.iter().cloned().map(NamedOrBlankNode::from).collect());
        }
        // A file built with `--default-graph union` (FORMAT.md §2): a query that
        // names no graphs of its own (no FROM, FROM NAMED or protocol graphs)
        // sees every graph as its default graph.
        let union = self.store.header().union_default_graph() && prepared.dataset().is_default_dataset();
        let dataset = StoreDataset::new(self.store, Arc::clone(self.meter)).with_union_default_graph(union).with_object_ranges(self.object_ranges.to_vec()).with_restriction(restriction);
        prepared.execute_internal(dataset)
    }

    /// How many solutions `pattern` has (up to `limit`) in `query`'s
    /// dataset, with a top-k restriction; `None` when it fails.
    fn count(&self, query: &Query, pattern: &GraphPattern, restriction: &top_k::Restriction, limit: u64) -> Option<u64> {
        let Query::Select { dataset, base_iri, .. } = query else { return None };
        let limited = GraphPattern::Slice { inner: Box::new(GraphPattern::Project { inner: Box::new(pattern.clone()), variables: Vec::new() }), start: 0, length: usize::try_from(limit).ok() };
        let mut check = Query::Select { dataset: dataset.clone(), pattern: limited, base_iri: base_iri.clone() };
        let Ok(InternalQueryResults::Solutions(solutions)) = self.execute(&mut check, Some(restriction.clone())) else { return None };
        let mut rows = 0;
        for solution in solutions {
            solution.ok()?;
            rows += 1;
        }
        Some(rows)
    }
}

/// What to tell the user about a query that runs but not quite as written:
/// calls to functions this engine does not know, each an expression error
/// (`extensions.rs`). Hosts show these once per query.
pub fn warnings(query: &Query) -> Vec<String> {
    extensions::warning(&extensions::unknown_functions(query)).into_iter().collect()
}

/// The query as spareval must see it to answer as SPARQL defines:
/// `GRAPH ?g` scoped (`graph_scope.rs`), and the extension functions it
/// does not know, to be registered as failing (`extensions.rs`).
fn adapt(mut query: Query) -> (Query, Vec<NamedNode>) {
    graph_scope::scope_graph_variables(&mut query);
    let unknown = extensions::unknown_functions(&query);
    (query, unknown)
}

/// The same query with step hooks in its pattern (see `budget.rs`); the
/// pattern is rebuilt, not copied first.
fn with_hooks(query: &Query, planned: bool) -> Query {
    match query {
        Query::Select { dataset, pattern, base_iri } => Query::Select { dataset: dataset.clone(), pattern: with_step_hooks(pattern, planned), base_iri: base_iri.clone() },
        Query::Construct { template, dataset, pattern, base_iri } => Query::Construct { template: template.clone(), dataset: dataset.clone(), pattern: with_step_hooks(pattern, planned), base_iri: base_iri.clone() },
        Query::Describe { dataset, pattern, base_iri } => Query::Describe { dataset: dataset.clone(), pattern: with_step_hooks(pattern, planned), base_iri: base_iri.clone() },
        Query::Ask { dataset, pattern, base_iri } => Query::Ask { dataset: dataset.clone(), pattern: with_step_hooks(pattern, planned), base_iri: base_iri.clone() },
    }
}

/// A run that missed reads ends with `Missing` whatever else went wrong (it
/// evaluated garbage); otherwise the cause kept by the meter wins over what
/// spareval reports: spareval only sees [`dataset::Stopped`].
fn query_error(meter: &Meter, error: QueryEvaluationError) -> QueryError {
    if meter.has_missed() {
        return meter.missing_error();
    }
    if let Some(cause) = meter.take_cause() {
        return cause;
    }
    match error {
        QueryEvaluationError::UnsupportedService(name) => QueryError::Unsupported { feature: format!("SERVICE {name}") },
        QueryEvaluationError::UnboundService | QueryEvaluationError::InvalidServiceName(_) | QueryEvaluationError::Service(_) => QueryError::Unsupported { feature: "SERVICE".into() },
        QueryEvaluationError::UnsupportedCustomFunction(name) => QueryError::Unsupported { feature: format!("function {name}") },
        other => QueryError::Evaluation(other.to_string()),
    }
}

/// Pulls the next item of a spareval iterator, checking the meter before
/// trusting it. Once a read has missed, nothing more is handed out: the rest
/// of the run is drained (so it records every block it needs) and the
/// iteration ends with the `Missing` error. Items handed out before the miss
/// came from complete reads.
fn pull<T>(meter: &Meter, done: &mut bool, mut next: impl FnMut() -> Option<Result<T, QueryEvaluationError>>) -> Option<Result<T, QueryError>> {
    if *done {
        return None;
    }
    if meter.is_stopped() && !meter.has_missed() {
        return next_checked(meter, done, None);
    }
    let item = next();
    if !meter.has_missed() {
        return next_checked(meter, done, item);
    }
    if item.is_some() {
        while next().is_some() {}
    }
    *done = true;
    Some(Err(meter.missing_error()))
}

fn next_checked<T>(meter: &Meter, done: &mut bool, next: Option<Result<T, QueryEvaluationError>>) -> Option<Result<T, QueryError>> {
    let stopped = |meter: &Meter| meter.take_cause().unwrap_or_else(|| QueryError::Evaluation("evaluation stopped".into()));
    let item = match next {
        None if meter.is_stopped() => Err(stopped(meter)),
        None => {
            *done = true;
            return None;
        }
        Some(Ok(item)) if meter.produce() => Ok(item),
        Some(Ok(_)) => Err(stopped(meter)),
        Some(Err(error)) => Err(query_error(meter, error)),
    };
    *done = item.is_err();
    Some(item)
}

/// The solutions of a `SELECT`, produced as they are pulled: as
/// [`QuerySolution`]s, or written as SPARQL JSON rows from the store's ids
/// ([`Solutions::next_json`]).
pub struct Solutions<'a> {
    variables: Arc<[Variable]>,
    inner: Box<dyn SolutionRows + 'a>,
    meter: Arc<Meter>,
    done: bool,
}

impl Solutions<'_> {
    /// The projected variables, in order.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// What evaluation has used so far.
    pub fn usage(&self) -> Usage {
        self.meter.usage()
    }

    /// Writes the next solution's bindings into `row` (its columns are
    /// [`Self::variables`]), stored terms straight from their dictionary
    /// bytes: the bytes the solution's terms would be written as, without
    /// building them. `None` at the end; on an error, `row` holds garbage.
    pub fn next_json(&mut self, row: &mut JsonRow) -> Option<Result<(), QueryError>> {
        let inner = &mut self.inner;
        pull(&self.meter, &mut self.done, || inner.next_json(row))
    }
}

impl Iterator for Solutions<'_> {
    type Item = Result<QuerySolution, QueryError>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = &mut self.inner;
        pull(&self.meter, &mut self.done, || inner.next_solution())
    }
}

/// spareval's solutions over a store, their store type hidden.
trait SolutionRows {
    fn next_solution(&mut self) -> Option<Result<QuerySolution, QueryEvaluationError>>;
    fn next_json(&mut self, row: &mut JsonRow) -> Option<Result<(), QueryEvaluationError>>;
}

impl<'a, S: RangeSource + 'a> SolutionRows for InternalSolutionIter<'a, StoreDataset<'a, S>> {
    fn next_solution(&mut self) -> Option<Result<QuerySolution, QueryEvaluationError>> {
        InternalSolutionIter::next_solution(self)
    }

    fn next_json(&mut self, row: &mut JsonRow) -> Option<Result<(), QueryEvaluationError>> {
        let tuple = match self.next()? {
            Ok(tuple) => tuple,
            Err(error) => return Some(Err(error)),
        };
        let dataset = self.dataset();
        for column in 0..self.variables().len() {
            if let Some(term) = tuple.get(column)
                && let Err(stopped) = dataset.write_json(term, column, row)
            {
                return Some(Err(QueryEvaluationError::Dataset(Box::new(stopped))));
            }
        }
        Some(Ok(()))
    }
}

/// The triples of a `CONSTRUCT` or `DESCRIBE`, produced as they are pulled.
pub struct Triples<'a> {
    inner: QueryTripleIter<'a>,
    meter: Arc<Meter>,
    done: bool,
}

impl Triples<'_> {
    /// What evaluation has used so far.
    pub fn usage(&self) -> Usage {
        self.meter.usage()
    }
}

impl Iterator for Triples<'_> {
    type Item = Result<Triple, QueryError>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = &mut self.inner;
        pull(&self.meter, &mut self.done, || inner.next())
    }
}
