#[cfg(feature = "sparql-12")]
use crate::dataset::ExpressionTriple;
use crate::dataset::{
    ExpressionTerm, InternalQuad, QueryableDataset, StringTest, TermFunction,
    TermFunctionAnswer,
};
use crate::error::QueryEvaluationError;
use crate::expression::{
    CustomFunctionRegistry, ExpressionEvaluator, ExpressionEvaluatorContext, NumericBinaryOperands,
    build_expression_evaluator, partial_cmp_literals, try_build_internal_expression_evaluator,
};
use crate::model::{QuerySolution, QuerySolutionIter, QueryTripleIter};
use crate::service::ServiceHandlerRegistry;
use crate::{
    AggregateFunctionAccumulator, CustomAggregateFunctionRegistry, QueryDatasetSpecification,
};
use json_event_parser::{JsonEvent, WriterJsonSerializer};
use rand::random;
use oxiri::Iri;
#[cfg(feature = "sparql-12")]
use oxrdf::NamedOrBlankNode;
use oxrdf::{BlankNode, GraphName, Literal, NamedNode, Term, Triple, Variable};
use oxsdatatypes::{DateTime, DayTimeDuration, Decimal, Double, Float, Integer};
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet, FxHasher};
use spargebra::algebra::{AggregateFunction, PropertyPathExpression};
#[cfg(feature = "sparql-12")]
use spargebra::term::GroundTriple;
use spargebra::term::{
    GroundTerm, GroundTermPattern, NamedNodePattern, TermPattern, TriplePattern,
};
use sparopt::algebra::{
    AggregateExpression, Expression, GraphPattern, JoinAlgorithm, LeftJoinAlgorithm,
    MinusAlgorithm, OrderExpression,
};
use std::cell::{Cell, OnceCell, RefCell};
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::iter::{Peekable, empty, once};
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, atomic};
use std::{fmt, io};
// TODO: make expression raise error when relevant (storage I/O)

type InternalTupleEvaluator<'a, T> =
    Rc<dyn Fn(InternalTuple<T>) -> InternalTuplesIterator<'a, T> + 'a>;

/// rete: what [`EvalDataset::internal_quads_for_pattern`] returns, the dataset's
/// iterator held inline for the common cases (change 22).
enum PatternQuads<'a, I, T> {
    /// One graph's quads, as the dataset gives them.
    Graph(I),
    /// Quads read for the default graph: they are put in it.
    InDefaultGraph(I),
    /// Quads of every graph, read for the named graphs: those of the default graph are left out.
    NamedGraphs(I),
    /// Several graphs' quads (upstream's boxed iterators).
    Boxed(Box<dyn Iterator<Item = Result<InternalQuad<T>, QueryEvaluationError>> + 'a>),
    Empty,
}

impl<I: Iterator<Item = Result<InternalQuad<T>, QueryEvaluationError>>, T> Iterator
    for PatternQuads<'_, I, T>
{
    type Item = Result<InternalQuad<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::Graph(quads) => quads.next(),
            Self::InDefaultGraph(quads) => Some(quads.next()?.map(|mut quad| {
                quad.graph_name = None;
                quad
            })),
            Self::NamedGraphs(quads) => {
                quads.find(|quad| !quad.as_ref().is_ok_and(|quad| quad.graph_name.is_none()))
            }
            Self::Boxed(quads) => quads.next(),
            Self::Empty => None,
        }
    }
}

/// Wrapper on top of [`QueryableDataset`]
struct EvalDataset<'a, D: QueryableDataset<'a>> {
    dataset: Rc<D>,
    /// rete: shared (change 22): the evaluator clones this per pattern lookup.
    specification: Rc<EncodedDatasetSpec<D::InternalTerm>>,
    cancellation_token: CancellationToken,
    _lifetime: PhantomData<&'a ()>,
}

impl<'a, D: QueryableDataset<'a>> EvalDataset<'a, D> {
    fn new(
        dataset: D,
        specification: QueryDatasetSpecification,
        cancellation_token: CancellationToken,
    ) -> Result<Self, QueryEvaluationError> {
        let specification = EncodedDatasetSpec {
            default: specification
                .default
                .map(|graph_names| {
                    graph_names
                        .into_iter()
                        .map(|graph_name| {
                            Ok(match graph_name {
                                GraphName::NamedNode(n) => {
                                    Some(dataset.internalize_term(n.into())?)
                                }
                                GraphName::BlankNode(n) => {
                                    Some(dataset.internalize_term(n.into())?)
                                }
                                GraphName::DefaultGraph => None,
                            })
                        })
                        .collect()
                })
                .transpose()
                .map_err(|e: D::Error| QueryEvaluationError::Dataset(Box::new(e)))?,
            named: specification
                .named
                .map(|graph_names| {
                    graph_names
                        .into_iter()
                        .map(|graph_name| dataset.internalize_term(graph_name.into()))
                        .collect()
                })
                .transpose()
                .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))?,
        };
        Ok(Self {
            dataset: Rc::new(dataset),
            specification: Rc::new(specification),
            cancellation_token,
            _lifetime: PhantomData,
        })
    }

    fn underlying_internal_quads_for_pattern(
        &self,
        subject: Option<&D::InternalTerm>,
        predicate: Option<&D::InternalTerm>,
        object: Option<&D::InternalTerm>,
        graph_name: Option<Option<&D::InternalTerm>>,
    ) -> impl Iterator<Item = Result<InternalQuad<D::InternalTerm>, QueryEvaluationError>> + use<'a, D>
    {
        let cancellation_token = self.cancellation_token.clone();
        self.dataset
            .internal_quads_for_pattern(subject, predicate, object, graph_name)
            .map(move |r| {
                cancellation_token.ensure_alive()?;
                r.map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
            })
    }

    /// rete: the quads of one pattern lookup, unboxed (change 22): a join
    /// looks a pattern up once per row, and each lookup allocated this box and
    /// the box around it.
    fn internal_quads_for_pattern(
        &self,
        subject: Option<&D::InternalTerm>,
        predicate: Option<&D::InternalTerm>,
        object: Option<&D::InternalTerm>,
        graph_name: Option<Option<&D::InternalTerm>>,
    ) -> PatternQuads<
        'a,
        impl Iterator<Item = Result<InternalQuad<D::InternalTerm>, QueryEvaluationError>> + use<'a, D>,
        D::InternalTerm,
    > {
        if let Some(graph_name) = graph_name {
            // A graph (named or default), has been specified, we only query it
            if let Some(graph_name) = graph_name {
                // We query a specific named graph of data (possibly including the global default graph)
                if self
                    .specification
                    .named
                    .as_ref()
                    .is_none_or(|d| d.contains(graph_name))
                {
                    // It is in the set of allowed named graphs (if this set exists), we query it
                    PatternQuads::Graph(self.underlying_internal_quads_for_pattern(
                        subject,
                        predicate,
                        object,
                        Some(Some(graph_name)),
                    ))
                } else {
                    PatternQuads::Empty
                }
            } else if let Some(default_graph_graphs) = &self.specification.default {
                // The default graph is queried, and it is set to something and not the union of all graphs
                if default_graph_graphs.len() == 1 {
                    // There is a single graph in the default graph, we return it directly
                    PatternQuads::InDefaultGraph(self.underlying_internal_quads_for_pattern(
                        subject,
                        predicate,
                        object,
                        Some(default_graph_graphs[0].as_ref()),
                    ))
                } else {
                    let iters = default_graph_graphs
                        .iter()
                        .map(|graph_name| {
                            self.underlying_internal_quads_for_pattern(
                                subject,
                                predicate,
                                object,
                                Some(graph_name.as_ref()),
                            )
                        })
                        .collect::<Vec<_>>();
                    PatternQuads::Boxed(Box::new(iters.into_iter().flatten().map(|quad| {
                        let mut quad = quad?;
                        quad.graph_name = None;
                        Ok(quad)
                    })))
                }
            } else {
                // The default graph has not been set, it is the union of all graphs, we query all graphs
                PatternQuads::InDefaultGraph(self.underlying_internal_quads_for_pattern(
                    subject, predicate, object, None,
                ))
            }
        } else if let Some(named_graphs) = &self.specification.named {
            // The list of possible named graphs has been set, we only query these named graphs
            let iters = named_graphs
                .iter()
                .map(|graph_name| {
                    self.underlying_internal_quads_for_pattern(
                        subject,
                        predicate,
                        object,
                        Some(Some(graph_name)),
                    )
                })
                .collect::<Vec<_>>();
            PatternQuads::Boxed(Box::new(iters.into_iter().flatten()))
        } else {
            // We query all named graphs because the list of named graphs has not been set
            PatternQuads::NamedGraphs(self.underlying_internal_quads_for_pattern(
                subject, predicate, object, None,
            ))
        }
    }

    /// rete (change 31): whether the quad is in the graphs [`Self::internal_quads_for_pattern`]
    /// reads for `graph_name` (`Some(None)`: the query's default graph), when those are one
    /// graph, which holds the quad at most once; `None` when they are several (each graph
    /// holding the quad gives a solution) or any named graph (`graph_name` `None`).
    fn contains_quad(
        &self,
        subject: &D::InternalTerm,
        predicate: &D::InternalTerm,
        object: &D::InternalTerm,
        graph_name: Option<Option<&D::InternalTerm>>,
    ) -> Option<Result<bool, QueryEvaluationError>> {
        let graph = match graph_name? {
            Some(graph_name) => {
                if !self
                    .specification
                    .named
                    .as_ref()
                    .is_none_or(|d| d.contains(graph_name))
                {
                    return Some(Ok(false));
                }
                Some(graph_name)
            }
            None => match self.specification.default.as_deref() {
                Some([graph]) => graph.as_ref(),
                _ => return None,
            },
        };
        Some(
            match self
                .dataset
                .internal_contains_quad(subject, predicate, object, graph)
            {
                // As the lazy lookup's cancellation `Map` checks each quad it hands on.
                Ok(true) => self.cancellation_token.ensure_alive().map(|()| true),
                Ok(false) => Ok(false),
                Err(e) => Err(QueryEvaluationError::Dataset(Box::new(e))),
            },
        )
    }

    fn internal_named_graphs(
        &self,
    ) -> Box<dyn Iterator<Item = Result<D::InternalTerm, QueryEvaluationError>> + 'a> {
        if let Some(named_graphs) = &self.specification.named {
            Box::new(
                named_graphs
                    .iter()
                    .cloned()
                    .map(Ok)
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        } else {
            let cancellation_token = self.cancellation_token.clone();
            Box::new(self.dataset.internal_named_graphs().map(move |r| {
                cancellation_token.ensure_alive()?;
                r.map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
            }))
        }
    }

    fn contains_internal_graph_name(
        &self,
        graph_name: &D::InternalTerm,
    ) -> Result<bool, QueryEvaluationError> {
        if let Some(named_graphs) = &self.specification.named {
            Ok(named_graphs.contains(graph_name))
        } else {
            self.dataset
                .contains_internal_graph_name(graph_name)
                .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
        }
    }

    fn internalize_term(&self, term: Term) -> Result<D::InternalTerm, QueryEvaluationError> {
        self.cancellation_token.ensure_alive()?;
        self.dataset
            .internalize_term(term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    fn externalize_term(&self, term: D::InternalTerm) -> Result<Term, QueryEvaluationError> {
        self.dataset
            .externalize_term(term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    fn externalize_expression_term(
        &self,
        term: D::InternalTerm,
    ) -> Result<ExpressionTerm, QueryEvaluationError> {
        self.dataset
            .externalize_expression_term(term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    fn internalize_expression_term(
        &self,
        term: ExpressionTerm,
    ) -> Result<D::InternalTerm, QueryEvaluationError> {
        self.dataset
            .internalize_expression_term(term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    /// rete: counts one row under a step marker (change 29).
    #[inline]
    fn step(&self) -> Result<(), QueryEvaluationError> {
        self.dataset
            .internal_step()
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    fn internal_term_effective_boolean_value(
        &self,
        term: D::InternalTerm,
    ) -> Result<Option<bool>, QueryEvaluationError> {
        self.dataset
            .internal_term_effective_boolean_value(term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    /// rete: see `QueryableDataset::internal_triple_terms`.
    #[cfg(feature = "sparql-12")]
    fn internal_triple_terms(
        &self,
        subject: Option<&D::InternalTerm>,
        predicate: Option<&D::InternalTerm>,
        object: Option<&D::InternalTerm>,
    ) -> Result<Option<D::InternalTerm>, QueryEvaluationError> {
        self.dataset
            .internal_triple_terms(subject, predicate, object)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    /// rete: see `QueryableDataset::internal_term_rank`; a dataset error is no rank.
    fn internal_term_rank(&self, term: &D::InternalTerm) -> Option<(u8, u64)> {
        self.dataset.internal_term_rank(term).ok().flatten()
    }

    /// rete: see `QueryableDataset::internal_term_function`.
    fn internal_term_function(
        &self,
        function: TermFunction,
        term: &D::InternalTerm,
    ) -> Result<TermFunctionAnswer, QueryEvaluationError> {
        self.dataset
            .internal_term_function(function, term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    /// rete: see `QueryableDataset::internal_function_term`.
    fn internal_function_term(
        &self,
        function: TermFunction,
        term: &D::InternalTerm,
    ) -> Result<Option<D::InternalTerm>, QueryEvaluationError> {
        self.dataset
            .internal_function_term(function, term)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }

    /// rete: see `QueryableDataset::internal_string_test`.
    fn internal_string_test(
        &self,
        term: &D::InternalTerm,
        test: &StringTest<'_>,
    ) -> Result<TermFunctionAnswer, QueryEvaluationError> {
        self.dataset
            .internal_string_test(term, test)
            .map_err(|e| QueryEvaluationError::Dataset(Box::new(e)))
    }
}

impl<'a, D: QueryableDataset<'a>> Clone for EvalDataset<'a, D> {
    #[inline]
    fn clone(&self) -> Self {
        Self {
            dataset: Rc::clone(&self.dataset),
            specification: Rc::clone(&self.specification),
            cancellation_token: self.cancellation_token.clone(),
            _lifetime: self._lifetime,
        }
    }
}

#[derive(Clone)]
struct EncodedDatasetSpec<T> {
    default: Option<Vec<Option<T>>>,
    named: Option<Vec<T>>,
}

/// A solution as the dataset's internal terms, by variable position (rete: public
/// since change 25, for [`InternalSolutionIter`]).
pub struct InternalTuple<T> {
    inner: Vec<Option<T>>,
}

impl<T> InternalTuple<T> {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            inner: Vec::with_capacity(capacity),
        }
    }

    pub fn capacity(&self) -> usize {
        self.inner.capacity()
    }

    pub fn contains(&self, index: usize) -> bool {
        self.inner.get(index).is_some_and(Option::is_some)
    }

    pub fn get(&self, index: usize) -> Option<&T> {
        self.inner.get(index).unwrap_or(&None).as_ref()
    }

    /// rete (change 26): no position is set, as the tuple a query starts from without
    /// substitutions.
    fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// rete (change 26): the tuple as `Project` writes it when its mapping keeps each position:
    /// only the first `width` positions, without trailing unset ones (`Eq` and `Hash` compare
    /// the positions as stored, so `DISTINCT` needs the form `set` gives).
    fn keep_first(&mut self, width: usize) {
        self.inner.truncate(width);
        while let Some(None) = self.inner.last() {
            self.inner.pop();
        }
    }
}

impl<T: Clone> InternalTuple<T> {
    pub fn iter(&self) -> impl Iterator<Item = Option<T>> + '_ {
        self.inner.iter().cloned()
    }

    /// rete (changes 26, 27): a copy with room for `capacity` positions (a quad pattern's
    /// width), and at least the room this tuple has (change 28), so that setting a position
    /// below either does not allocate again.
    fn clone_with_capacity(&self, capacity: usize) -> Self {
        Self {
            inner: copy_with_capacity(&self.inner, capacity.max(self.inner.capacity())),
        }
    }

    pub fn set(&mut self, index: usize, value: T) {
        if self.inner.len() <= index {
            self.inner.resize(index + 1, None);
        }
        self.inner[index] = Some(value);
    }
}

impl<T: Clone + Eq> InternalTuple<T> {
    pub fn combine_with(&self, other: &Self) -> Option<Self> {
        if self.inner.len() < other.inner.len() {
            let mut result = copy_with_capacity(&other.inner, self.capacity().max(other.capacity()));
            for (key, self_value) in self.inner.iter().enumerate() {
                if let Some(self_value) = self_value {
                    match &other.inner[key] {
                        Some(other_value) => {
                            if self_value != other_value {
                                return None;
                            }
                        }
                        None => result[key] = Some(self_value.clone()),
                    }
                }
            }
            Some(Self { inner: result })
        } else {
            let mut result = copy_with_capacity(&self.inner, self.capacity().max(other.capacity()));
            for (key, other_value) in other.inner.iter().enumerate() {
                if let Some(other_value) = other_value {
                    match &self.inner[key] {
                        Some(self_value) => {
                            if self_value != other_value {
                                return None;
                            }
                        }
                        None => result[key] = Some(other_value.clone()),
                    }
                }
            }
            Some(Self { inner: result })
        }
    }
}

impl<T: Clone> Clone for InternalTuple<T> {
    // rete: a clone keeps the capacity (change 28). A pattern binds its variables into a
    // clone of its input tuple (`from.clone()`), whose capacity is the query's variable
    // count; upstream's clone (and `combine_with`'s) had the input's length, so each row's
    // tuple was allocated at its first binding and reallocated at a later one.
    fn clone(&self) -> Self {
        Self {
            inner: copy_with_capacity(&self.inner, self.inner.capacity()),
        }
    }
}

/// rete: `values` copied into a `Vec` of at least `capacity` (change 28).
fn copy_with_capacity<T: Clone>(values: &[T], capacity: usize) -> Vec<T> {
    let mut copy = Vec::with_capacity(capacity.max(values.len()));
    copy.extend_from_slice(values);
    copy
}

impl<T: Eq> PartialEq for InternalTuple<T> {
    #[inline]
    fn eq(&self, other: &InternalTuple<T>) -> bool {
        self.inner == other.inner
    }
}

impl<T: Eq> Eq for InternalTuple<T> {}

impl<T: Hash> Hash for InternalTuple<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.hash(state)
    }
}

impl<T> IntoIterator for InternalTuple<T> {
    type Item = Option<T>;
    type IntoIter = std::vec::IntoIter<Option<T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.inner.into_iter()
    }
}

type InternalTuplesIterator<'a, T> =
    Box<dyn Iterator<Item = Result<InternalTuple<T>, QueryEvaluationError>> + 'a>;

pub struct SimpleEvaluator<'a, D: QueryableDataset<'a>> {
    dataset: EvalDataset<'a, D>,
    base_iri: Option<Arc<Iri<String>>>,
    /// rete: read when the query first asks for `NOW()`, then the same for the whole query.
    now: Rc<OnceCell<DateTime>>,
    service_handler: Rc<ServiceHandlerRegistry>,
    custom_functions: Rc<CustomFunctionRegistry>,
    custom_aggregate_functions: Rc<CustomAggregateFunctionRegistry>,
    run_stats: bool,
    explain: bool,
    /// rete: drawn once per query, so `BNODE(str)` differs between queries; drawn
    /// when the query first builds `BNODE(str)`, not for every query.
    bnode_salt: Rc<OnceCell<u128>>,
    /// rete: while an Extend's expression is built, the tuple positions its chain of
    /// Extends binds: they are left out of the solution key of `BNODE(str)`, so that
    /// `SELECT (BNODE(?x) AS ?a) (BNODE(?x) AS ?b)` gives one node per solution.
    extend_chain: Rc<RefCell<Rc<[usize]>>>,
    /// rete: the custom function whose `BIND`s mark steps (change 29), and while the
    /// pattern under such a mark is built, whether the join there counts its rows.
    step_marker: Option<Rc<NamedNode>>,
    count_rows: Rc<Cell<bool>>,
}

impl<'a, D: QueryableDataset<'a>> SimpleEvaluator<'a, D> {
    pub fn new(
        dataset: D,
        base_iri: Option<Arc<Iri<String>>>,
        service_handler: Rc<ServiceHandlerRegistry>,
        custom_functions: Rc<CustomFunctionRegistry>,
        custom_aggregate_functions: Rc<CustomAggregateFunctionRegistry>,
        cancellation_token: CancellationToken,
        dataset_spec: QueryDatasetSpecification,
        run_stats: bool,
        explain: bool,
        step_marker: Option<NamedNode>,
    ) -> Result<Self, QueryEvaluationError> {
        Ok(Self {
            dataset: EvalDataset::new(dataset, dataset_spec, cancellation_token)?,
            base_iri,
            now: Rc::default(),
            service_handler,
            custom_functions,
            custom_aggregate_functions,
            run_stats,
            explain,
            bnode_salt: Rc::default(),
            extend_chain: Rc::default(),
            step_marker: step_marker.map(Rc::new),
            count_rows: Rc::default(),
        })
    }

    pub fn evaluate_select(
        &self,
        pattern: &GraphPattern,
        substitutions: impl IntoIterator<Item = (Variable, Term)>,
    ) -> (
        Result<QuerySolutionIter<'a>, QueryEvaluationError>,
        Rc<EvalNodeWithStats>,
    ) {
        let (solutions, stats) = self.evaluate_select_internal(pattern, substitutions);
        (solutions.map(InternalSolutionIter::into_solutions), stats)
    }

    /// rete: a SELECT's solutions as the dataset's internal terms (change 25).
    pub fn evaluate_select_internal(
        &self,
        pattern: &GraphPattern,
        substitutions: impl IntoIterator<Item = (Variable, Term)>,
    ) -> (
        Result<InternalSolutionIter<'a, D>, QueryEvaluationError>,
        Rc<EvalNodeWithStats>,
    ) {
        let mut variables = Vec::new();
        let (eval, stats) = self.graph_pattern_evaluator(pattern, &mut variables);
        let eval = match eval {
            Ok(e) => e,
            Err(e) => return (Err(e), stats),
        };
        let from = match encode_initial_bindings(&self.dataset, &variables, substitutions) {
            Ok(from) => from,
            Err(e) => return (Err(e), stats),
        };
        (
            Ok(InternalSolutionIter {
                dataset: self.dataset.clone(),
                iter: eval(from),
                variables: Arc::from(variables),
            }),
            stats,
        )
    }

    pub fn evaluate_ask(
        &self,
        pattern: &GraphPattern,
        substitutions: impl IntoIterator<Item = (Variable, Term)>,
    ) -> (Result<bool, QueryEvaluationError>, Rc<EvalNodeWithStats>) {
        let mut variables = Vec::new();
        let (eval, stats) = self.graph_pattern_evaluator(pattern, &mut variables);
        let eval = match eval {
            Ok(e) => e,
            Err(e) => return (Err(e), stats),
        };
        let from = match encode_initial_bindings(&self.dataset, &variables, substitutions) {
            Ok(from) => from,
            Err(e) => return (Err(e), stats),
        };
        // We apply the same table as the or operation:
        // we return true if we get any valid tuple, an error if we get an error and false otherwise
        let mut error = None;
        for solution in eval(from) {
            if let Err(e) = solution {
                // We keep the first error
                error.get_or_insert(e);
            } else {
                // We have found a valid tuple
                return (Ok(true), stats);
            }
        }
        (
            if let Some(e) = error {
                Err(e)
            } else {
                Ok(false)
            },
            stats,
        )
    }

    pub fn evaluate_construct(
        &self,
        pattern: &GraphPattern,
        template: &[TriplePattern],
        substitutions: impl IntoIterator<Item = (Variable, Term)>,
    ) -> (
        Result<QueryTripleIter<'a>, QueryEvaluationError>,
        Rc<EvalNodeWithStats>,
    ) {
        let mut variables = Vec::new();
        let (eval, stats) = self.graph_pattern_evaluator(pattern, &mut variables);
        let eval = match eval {
            Ok(e) => e,
            Err(e) => return (Err(e), stats),
        };
        let mut bnodes = Vec::new();
        let template = template
            .iter()
            .filter_map(|t| {
                Some(TripleTemplate {
                    subject: TripleTemplateValue::from_term_or_variable(
                        &t.subject,
                        &mut variables,
                        &mut bnodes,
                    )?,
                    predicate: TripleTemplateValue::from_named_node_or_variable(
                        &t.predicate,
                        &mut variables,
                    ),
                    object: TripleTemplateValue::from_term_or_variable(
                        &t.object,
                        &mut variables,
                        &mut bnodes,
                    )?,
                })
            })
            .collect::<Vec<_>>();
        // rete: how each template's triples are known in the duplicate
        // check (vendor/README.md change 13).
        let mut keys = Vec::with_capacity(template.len());
        for (i, t) in template.iter().enumerate() {
            let alone = template
                .iter()
                .enumerate()
                .all(|(j, other)| j == i || constants_differ(t, other));
            let mut constants = [None, None, None];
            if !alone {
                for (slot, value) in constants.iter_mut().zip([&t.subject, &t.predicate, &t.object]) {
                    if let TripleTemplateValue::Constant(term) = value {
                        match self.dataset.internalize_term(term.clone()) {
                            Ok(term) => *slot = Some(term),
                            Err(e) => return (Err(e), stats),
                        }
                    }
                }
            }
            keys.push(ConstructKey {
                group: if alone { i } else { usize::MAX },
                constants,
            });
        }
        let from = match encode_initial_bindings(&self.dataset, &variables, substitutions) {
            Ok(from) => from,
            Err(e) => return (Err(e), stats),
        };
        (
            Ok(QueryTripleIter::new(ConstructIterator {
                eval: self.clone(),
                iter: eval(from),
                last_uses: last_uses(&template),
                template,
                keys,
                buffered_results: Vec::default(),
                already_emitted_results: FxHashMap::default(),
                bnodes: Vec::default(),
                solution_terms: Vec::default(),
            })),
            stats,
        )
    }

    pub fn evaluate_describe(
        &self,
        pattern: &GraphPattern,
        substitutions: impl IntoIterator<Item = (Variable, Term)>,
    ) -> (
        Result<QueryTripleIter<'a>, QueryEvaluationError>,
        Rc<EvalNodeWithStats>,
    ) {
        let mut variables = Vec::new();
        let (eval, stats) = self.graph_pattern_evaluator(pattern, &mut variables);
        let eval = match eval {
            Ok(e) => e,
            Err(e) => return (Err(e), stats),
        };
        let from = match encode_initial_bindings(&self.dataset, &variables, substitutions) {
            Ok(from) => from,
            Err(e) => return (Err(e), stats),
        };
        (
            Ok(QueryTripleIter::new(DescribeIterator {
                eval: self.clone(),
                tuples_to_describe: eval(from),
                nodes_described: FxHashSet::default(),
                nodes_to_describe: Vec::default(),
                quads: Box::new(empty()),
            })),
            stats,
        )
    }

    pub fn graph_pattern_evaluator(
        &self,
        pattern: &GraphPattern,
        encoded_variables: &mut Vec<Variable>,
    ) -> (
        Result<InternalTupleEvaluator<'a, D::InternalTerm>, QueryEvaluationError>,
        Rc<EvalNodeWithStats>,
    ) {
        let mut stat_children = Vec::new();
        let evaluator =
            self.build_graph_pattern_evaluator(pattern, encoded_variables, &mut stat_children);
        let stats = self.stats_node(pattern, stat_children);
        let mut evaluator = match evaluator {
            Ok(e) => e,
            Err(e) => return (Err(e), stats),
        };
        if self.run_stats {
            let stats = Rc::clone(&stats);
            evaluator = Rc::new(move |tuple| {
                let start = Timer::now();
                let inner = evaluator(tuple);
                let duration = start.elapsed();
                stats.exec_duration.set(
                    stats
                        .exec_duration
                        .get()
                        .and_then(|d| d.checked_add(duration?)),
                );
                Box::new(StatsIterator {
                    inner,
                    stats: Rc::clone(&stats),
                })
            })
        }
        (Ok(evaluator), stats)
    }

    /// rete (change 32): the statistics node of `pattern`, also made for a quad pattern that a
    /// for-loop join looks up itself (`pattern_join`), which has no evaluator of its own.
    fn stats_node(
        &self,
        pattern: &GraphPattern,
        children: Vec<Rc<EvalNodeWithStats>>,
    ) -> Rc<EvalNodeWithStats> {
        Rc::new(EvalNodeWithStats {
            // Formatting recurses per IN item, so only when explaining.
            label: if self.explain {
                eval_node_label(pattern)
            } else {
                String::new()
            },
            children,
            exec_count: Cell::new(0),
            exec_duration: Cell::new(self.run_stats.then(DayTimeDuration::default)),
        })
    }

    fn build_graph_pattern_evaluator(
        &self,
        pattern: &GraphPattern,
        encoded_variables: &mut Vec<Variable>,
        stat_children: &mut Vec<Rc<EvalNodeWithStats>>,
    ) -> Result<InternalTupleEvaluator<'a, D::InternalTerm>, QueryEvaluationError> {
        Ok(match pattern {
            GraphPattern::Values {
                variables,
                bindings,
            } => {
                let encoding = variables
                    .iter()
                    .map(|v| encode_variable(encoded_variables, v))
                    .collect::<Vec<_>>();
                let encoded_tuples = bindings
                    .iter()
                    .map(|row| {
                        let mut result = InternalTuple::with_capacity(variables.len());
                        for (key, value) in row.iter().enumerate() {
                            if let Some(term) = value {
                                result.set(
                                    encoding[key],
                                    match term {
                                        GroundTerm::NamedNode(node) => {
                                            self.encode_term(node.clone())
                                        }
                                        GroundTerm::Literal(literal) => {
                                            self.encode_term(literal.clone())
                                        }
                                        #[cfg(feature = "sparql-12")]
                                        GroundTerm::Triple(triple) => self.encode_triple(triple),
                                    }?,
                                );
                            }
                        }
                        Ok(result)
                    })
                    .collect::<Result<Vec<_>, QueryEvaluationError>>()?;
                Rc::new(move |from| {
                    Box::new(
                        encoded_tuples
                            .iter()
                            .filter_map(move |t| t.combine_with(&from))
                            .map(Ok)
                            .collect::<Vec<_>>()
                            .into_iter(),
                    )
                })
            }
            GraphPattern::QuadPattern {
                subject,
                predicate,
                object,
                graph_name,
            } => {
                // rete (change 32): the lookup in a `PatternLookup`, as a for-loop join makes it.
                let lookup = Rc::new(self.pattern_lookup(
                    subject,
                    predicate,
                    object,
                    graph_name.as_ref(),
                    encoded_variables,
                )?);
                Rc::new(move |from| match lookup.start(from) {
                    Lookup::Quads(from, quads) => {
                        let lookup = Rc::clone(&lookup);
                        Box::new(
                            quads.filter_map(move |quad| lookup.solution(&from, quad).transpose()),
                        )
                    }
                    Lookup::One(row) => Box::new(once(row)),
                    Lookup::Nothing => Box::new(empty()),
                })
            }
            GraphPattern::Path {
                subject,
                path,
                object,
                graph_name,
            } => {
                let subject_selector = TupleSelector::from_ground_term_pattern(
                    subject,
                    encoded_variables,
                    &self.dataset,
                )?;
                let path = self.encode_property_path(path)?;
                let object_selector = TupleSelector::from_ground_term_pattern(
                    object,
                    encoded_variables,
                    &self.dataset,
                )?;
                let graph_name_selector = if let Some(graph_name) = graph_name.as_ref() {
                    Some(TupleSelector::from_named_node_pattern(
                        graph_name,
                        encoded_variables,
                        &self.dataset,
                    )?)
                } else {
                    None
                };
                let query_terms: Rc<[D::InternalTerm]> = [&subject_selector, &object_selector]
                    .into_iter()
                    .filter_map(|selector| match selector {
                        TupleSelector::Constant(term) => Some(term.clone()),
                        _ => None,
                    })
                    .collect();
                let dataset = self.dataset.clone();
                Rc::new(move |from| {
                    let input_subject = match subject_selector.get_pattern_value(
                        &from,
                        #[cfg(feature = "sparql-12")]
                        &dataset,
                    ) {
                        Ok(value) => value,
                        Err(e) => return Box::new(once(Err(e))),
                    };
                    let path_eval = PathEvaluator {
                        dataset: dataset.clone(),
                        query_terms: Rc::clone(&query_terms),
                    };
                    let input_object = match object_selector.get_pattern_value(
                        &from,
                        #[cfg(feature = "sparql-12")]
                        &dataset,
                    ) {
                        Ok(value) => value,
                        Err(e) => return Box::new(once(Err(e))),
                    };
                    let input_graph_name = if let Some(graph_name_selector) = &graph_name_selector {
                        match graph_name_selector.get_pattern_value(
                            &from,
                            #[cfg(feature = "sparql-12")]
                            &dataset,
                        ) {
                            Ok(value) => value,
                            Err(e) => return Box::new(once(Err(e))),
                        }
                        .map(Some)
                    } else {
                        Some(None) // default graph
                    };
                    match (input_subject, input_object, input_graph_name) {
                        (Some(input_subject), Some(input_object), Some(input_graph_name)) => {
                            match path_eval.eval_closed_in_graph(
                                &path,
                                &input_subject,
                                &input_object,
                                input_graph_name.as_ref(),
                            ) {
                                Ok(true) => Box::new(once(Ok(from))),
                                Ok(false) => Box::new(empty()),
                                Err(e) => Box::new(once(Err(e))),
                            }
                        }
                        (Some(input_subject), None, Some(input_graph_name)) => {
                            let object_selector = object_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_from_in_graph(
                                        &path,
                                        &input_subject,
                                        input_graph_name.as_ref(),
                                    )
                                    .map(move |o| {
                                        let o = o?;
                                        let mut new_tuple = from.clone();
                                        if !put_pattern_value::<D>(
                                            &object_selector,
                                            o,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                        (None, Some(input_object), Some(input_graph_name)) => {
                            let subject_selector = subject_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_to_in_graph(
                                        &path,
                                        &input_object,
                                        input_graph_name.as_ref(),
                                    )
                                    .map(move |s| {
                                        let s = s?;
                                        let mut new_tuple = from.clone();
                                        if !put_pattern_value::<D>(
                                            &subject_selector,
                                            s,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                        (None, None, Some(input_graph_name)) => {
                            let subject_selector = subject_selector.clone();
                            let object_selector = object_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_open_in_graph(&path, input_graph_name.as_ref())
                                    .map(move |t| {
                                        let (s, o) = t?;
                                        let mut new_tuple = from.clone();
                                        if !put_pattern_value::<D>(
                                            &subject_selector,
                                            s,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        if !put_pattern_value::<D>(
                                            &object_selector,
                                            o,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                        (Some(input_subject), Some(input_object), None) => {
                            let graph_name_selector = graph_name_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_closed_in_unknown_graph(
                                        &path,
                                        &input_subject,
                                        &input_object,
                                    )
                                    .map(move |g| {
                                        let g = g?;
                                        let mut new_tuple = from.clone();
                                        if let Some(graph_name_selector) = &graph_name_selector {
                                            let Some(g) = g else {
                                                return Err(
                                                    QueryEvaluationError::UnexpectedDefaultGraph,
                                                );
                                            };
                                            if !put_pattern_value::<D>(
                                                graph_name_selector,
                                                g,
                                                &mut new_tuple,
                                                #[cfg(feature = "sparql-12")]
                                                &dataset,
                                            )? {
                                                return Ok(None);
                                            }
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                        (Some(input_subject), None, None) => {
                            let object_selector = object_selector.clone();
                            let graph_name_selector = graph_name_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_from_in_unknown_graph(&path, &input_subject)
                                    .map(move |t| {
                                        let (o, g) = t?;
                                        let mut new_tuple = from.clone();
                                        if !put_pattern_value::<D>(
                                            &object_selector,
                                            o,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        if let Some(graph_name_selector) = &graph_name_selector {
                                            let Some(g) = g else {
                                                return Err(
                                                    QueryEvaluationError::UnexpectedDefaultGraph,
                                                );
                                            };
                                            if !put_pattern_value::<D>(
                                                graph_name_selector,
                                                g,
                                                &mut new_tuple,
                                                #[cfg(feature = "sparql-12")]
                                                &dataset,
                                            )? {
                                                return Ok(None);
                                            }
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                        (None, Some(input_object), None) => {
                            let subject_selector = subject_selector.clone();
                            let graph_name_selector = graph_name_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_to_in_unknown_graph(&path, &input_object)
                                    .map(move |t| {
                                        let (s, g) = t?;
                                        let mut new_tuple = from.clone();
                                        if !put_pattern_value::<D>(
                                            &subject_selector,
                                            s,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        if let Some(graph_name_selector) = &graph_name_selector {
                                            let Some(g) = g else {
                                                return Err(
                                                    QueryEvaluationError::UnexpectedDefaultGraph,
                                                );
                                            };
                                            if !put_pattern_value::<D>(
                                                graph_name_selector,
                                                g,
                                                &mut new_tuple,
                                                #[cfg(feature = "sparql-12")]
                                                &dataset,
                                            )? {
                                                return Ok(None);
                                            }
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                        (None, None, None) => {
                            let subject_selector = subject_selector.clone();
                            let object_selector = object_selector.clone();
                            let graph_name_selector = graph_name_selector.clone();
                            #[cfg(feature = "sparql-12")]
                            let dataset = dataset.clone();
                            Box::new(
                                path_eval
                                    .eval_open_in_unknown_graph(&path)
                                    .map(move |t| {
                                        let (s, o, g) = t?;
                                        let mut new_tuple = from.clone();
                                        if !put_pattern_value::<D>(
                                            &subject_selector,
                                            s,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        if !put_pattern_value::<D>(
                                            &object_selector,
                                            o,
                                            &mut new_tuple,
                                            #[cfg(feature = "sparql-12")]
                                            &dataset,
                                        )? {
                                            return Ok(None);
                                        }
                                        if let Some(graph_name_selector) = &graph_name_selector {
                                            let Some(g) = g else {
                                                return Err(
                                                    QueryEvaluationError::UnexpectedDefaultGraph,
                                                );
                                            };
                                            if !put_pattern_value::<D>(
                                                graph_name_selector,
                                                g,
                                                &mut new_tuple,
                                                #[cfg(feature = "sparql-12")]
                                                &dataset,
                                            )? {
                                                return Ok(None);
                                            }
                                        }
                                        Ok(Some(new_tuple))
                                    })
                                    .filter_map(Result::transpose),
                            )
                        }
                    }
                })
            }
            GraphPattern::Graph { graph_name } => {
                let graph_name_selector = TupleSelector::from_named_node_pattern(
                    graph_name,
                    encoded_variables,
                    &self.dataset,
                )?;
                let dataset = self.dataset.clone();
                Rc::new(move |from| {
                    let input_graph_name = match graph_name_selector.get_pattern_value(
                        &from,
                        #[cfg(feature = "sparql-12")]
                        &dataset,
                    ) {
                        Ok(value) => value,
                        Err(e) => return Box::new(once(Err(e))),
                    };
                    if let Some(input_graph_name) = input_graph_name {
                        match dataset.contains_internal_graph_name(&input_graph_name) {
                            Ok(true) => Box::new(once(Ok(from))),
                            Ok(false) => Box::new(empty()),
                            Err(e) => Box::new(once(Err(e))),
                        }
                    } else {
                        let graph_name_selector = graph_name_selector.clone();
                        #[cfg(feature = "sparql-12")]
                        let dataset = dataset.clone();
                        Box::new(
                            dataset
                                .internal_named_graphs()
                                .map(move |graph_name| {
                                    let graph_name = graph_name?;
                                    let mut new_tuple = from.clone();
                                    if !put_pattern_value::<D>(
                                        &graph_name_selector,
                                        graph_name,
                                        &mut new_tuple,
                                        #[cfg(feature = "sparql-12")]
                                        &dataset,
                                    )? {
                                        return Ok(None);
                                    }
                                    Ok(Some(new_tuple))
                                })
                                .filter_map(Result::transpose),
                        )
                    }
                })
            }
            GraphPattern::Join {
                left,
                right,
                algorithm,
            } => {
                let steps = self.rows_counted_here();
                let (left, left_stats) = self.graph_pattern_evaluator(left, encoded_variables);
                stat_children.push(left_stats);
                let (right, right_stats) = self.graph_pattern_evaluator(right, encoded_variables);
                stat_children.push(right_stats);
                let left = left?;
                let right = right?;

                match algorithm {
                    JoinAlgorithm::HashBuildLeftProbeRight { keys } => {
                        let build = left;
                        let probe = right;
                        if keys.is_empty() {
                            // Cartesian product
                            Rc::new(move |from| {
                                let mut errors = Vec::default();
                                let built_values = build(from.clone())
                                    .filter_map(|result| match result {
                                        Ok(result) => Some(result),
                                        Err(error) => {
                                            errors.push(Err(error));
                                            None
                                        }
                                    })
                                    .collect::<Vec<_>>();
                                if built_values.is_empty() && errors.is_empty() {
                                    // We don't bother to execute the other side
                                    return Box::new(empty());
                                }
                                let mut probe_iter = probe(from).peekable();
                                if probe_iter.peek().is_none() {
                                    // We know it's empty and can discard errors
                                    return Box::new(empty());
                                }
                                stepped(
                                    &steps,
                                    CartesianProductJoinIterator {
                                        probe_iter,
                                        built: built_values,
                                        buffered_results: errors,
                                    },
                                )
                            })
                        } else {
                            // Real hash join
                            let keys = keys
                                .iter()
                                .map(|v| encode_variable(encoded_variables, v))
                                .collect::<Vec<_>>();
                            Rc::new(move |from| {
                                let mut errors = Vec::default();
                                let mut built_values = InternalTupleSet::new(keys.clone());
                                built_values.extend(build(from.clone()).filter_map(|result| {
                                    match result {
                                        Ok(result) => Some(result),
                                        Err(error) => {
                                            errors.push(Err(error));
                                            None
                                        }
                                    }
                                }));
                                if built_values.is_empty() && errors.is_empty() {
                                    // We don't bother to execute the other side
                                    return Box::new(empty());
                                }
                                let mut probe_iter = probe(from).peekable();
                                if probe_iter.peek().is_none() {
                                    // We know it's empty and can discard errors
                                    return Box::new(empty());
                                }
                                stepped(
                                    &steps,
                                    HashJoinIterator {
                                        probe_iter,
                                        built: built_values,
                                        buffered_results: errors,
                                    },
                                )
                            })
                        }
                    }
                }
            }
            #[cfg(feature = "sep-0006")]
            GraphPattern::Lateral { left, right } => {
                let steps = self.rows_counted_here();
                let (left, left_stats) = self.graph_pattern_evaluator(left, encoded_variables);
                stat_children.push(left_stats);
                let left = left?;

                // rete (change 32): a quad pattern on the right is looked up by the join itself
                // (`pattern_join`); with run statistics, through its evaluator, which times it.
                if let GraphPattern::QuadPattern {
                    subject,
                    predicate,
                    object,
                    graph_name,
                } = right.as_ref()
                {
                    if !self.run_stats {
                        stat_children.push(self.stats_node(right, Vec::new()));
                        let lookup = Rc::new(self.pattern_lookup(
                            subject,
                            predicate,
                            object,
                            graph_name.as_ref(),
                            encoded_variables,
                        )?);
                        return Ok(Rc::new(move |from| {
                            stepped(&steps, pattern_join(left(from), Rc::clone(&lookup)))
                        }));
                    }
                }

                if let GraphPattern::LeftJoin {
                    left: nested_left,
                    right: nested_right,
                    expression,
                    ..
                } = right.as_ref()
                {
                    if nested_left.is_empty_singleton() {
                        // We are in a ForLoopLeftJoin
                        let right =
                            GraphPattern::filter(nested_right.as_ref().clone(), expression.clone());
                        let (right, right_stats) =
                            self.graph_pattern_evaluator(&right, encoded_variables);
                        stat_children.push(right_stats);
                        let right = right?;
                        return Ok(Rc::new(move |from| {
                            stepped(
                                &steps,
                                ForLoopLeftJoinIterator {
                                    right_evaluator: Rc::clone(&right),
                                    left_iter: left(from),
                                    current_right: Box::new(empty()),
                                    left_tuple_to_yield: None,
                                },
                            )
                        }));
                    }
                }
                let (right, right_stats) = self.graph_pattern_evaluator(right, encoded_variables);
                stat_children.push(right_stats);
                let right = right?;
                Rc::new(move |from| {
                    let right = Rc::clone(&right);
                    stepped(
                        &steps,
                        left(from).flat_map(move |t| match t {
                            Ok(t) => right(t),
                            Err(e) => Box::new(once(Err(e))),
                        }),
                    )
                })
            }
            GraphPattern::Minus {
                left,
                right,
                algorithm,
            } => {
                let (left, left_stats) = self.graph_pattern_evaluator(left, encoded_variables);
                stat_children.push(left_stats);
                let (right, right_stats) = self.graph_pattern_evaluator(right, encoded_variables);
                stat_children.push(right_stats);
                let left = left?;
                let right = right?;

                // rete: variables bound before the MINUS (by an outer LATERAL, as GRAPH ?g is
                // evaluated per graph) are constants of both sides: sharing them does not make
                // the sides overlap (SPARQL 1.1 §8.3.3, graph-minus). Upstream counted them.
                match algorithm {
                    MinusAlgorithm::HashBuildRightProbeLeft { keys } => {
                        if keys.is_empty() {
                            Rc::new(move |from| {
                                let outer = from.clone();
                                let right: Vec<_> =
                                    right(from.clone()).filter_map(Result::ok).collect();
                                if right.is_empty() {
                                    return left(from);
                                }
                                Box::new(left(from).filter(move |left_tuple| {
                                    if let Ok(left_tuple) = left_tuple {
                                        !right.iter().any(|right_tuple| {
                                            are_compatible_and_overlap_outside(
                                                left_tuple,
                                                right_tuple,
                                                &outer,
                                            )
                                        })
                                    } else {
                                        true
                                    }
                                }))
                            })
                        } else {
                            let keys = keys
                                .iter()
                                .map(|v| encode_variable(encoded_variables, v))
                                .collect::<Vec<_>>();
                            Rc::new(move |from| {
                                let outer = from.clone();
                                let mut right_values = InternalTupleSet::new(keys.clone());
                                right_values.extend(right(from.clone()).filter_map(Result::ok));
                                if right_values.is_empty() {
                                    return left(from);
                                }
                                Box::new(left(from).filter(move |left_tuple| {
                                    if let Ok(left_tuple) = left_tuple {
                                        !right_values.get(left_tuple).iter().any(|right_tuple| {
                                            are_compatible_and_overlap_outside(
                                                left_tuple,
                                                right_tuple,
                                                &outer,
                                            )
                                        })
                                    } else {
                                        true
                                    }
                                }))
                            })
                        }
                    }
                }
            }
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
                algorithm,
            } => {
                let steps = self.rows_counted_here();
                let (left, left_stats) = self.graph_pattern_evaluator(left, encoded_variables);
                stat_children.push(left_stats);
                let (right, right_stats) = self.graph_pattern_evaluator(right, encoded_variables);
                stat_children.push(right_stats);
                let left = left?;
                let right = right?;
                let expression = self.effective_boolean_value_expression_evaluator(
                    expression,
                    encoded_variables,
                    stat_children,
                )?;

                match algorithm {
                    LeftJoinAlgorithm::HashBuildRightProbeLeft { keys } => {
                        // Real hash join
                        let keys = keys
                            .iter()
                            .map(|v| encode_variable(encoded_variables, v))
                            .collect::<Vec<_>>();
                        Rc::new(move |from| {
                            let mut errors = Vec::default();
                            let mut right_values = InternalTupleSet::new(keys.clone());
                            right_values.extend(right(from.clone()).filter_map(
                                |result| match result {
                                    Ok(result) => Some(result),
                                    Err(error) => {
                                        errors.push(Err(error));
                                        None
                                    }
                                },
                            ));
                            if right_values.is_empty() && errors.is_empty() {
                                return match &steps {
                                    Some(_) => stepped(&steps, left(from)),
                                    None => left(from),
                                };
                            }
                            stepped(
                                &steps,
                                HashLeftJoinIterator {
                                    left_iter: left(from),
                                    right: right_values,
                                    buffered_results: errors,
                                    expression: Rc::clone(&expression),
                                },
                            )
                        })
                    }
                }
            }
            GraphPattern::Filter { inner, expression } => {
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let child = child?;
                let expression = self.effective_boolean_value_expression_evaluator(
                    expression,
                    encoded_variables,
                    stat_children,
                )?;
                Rc::new(move |from| {
                    let expression = Rc::clone(&expression);
                    Box::new(child(from).filter(move |tuple| match tuple {
                        Ok(tuple) => expression(tuple).unwrap_or(false),
                        Err(_) => true,
                    }))
                })
            }
            GraphPattern::Union { inner } => {
                let children = inner
                    .iter()
                    .map(|child| {
                        let (child, child_stats) =
                            self.graph_pattern_evaluator(child, encoded_variables);
                        stat_children.push(child_stats);
                        child
                    })
                    .collect::<Result<Vec<_>, _>>()?;

                Rc::new(move |from| {
                    Box::new(UnionIterator {
                        plans: children.clone(),
                        input: from,
                        current_iterator: Box::new(empty()),
                        current_plan: 0,
                    })
                })
            }
            GraphPattern::Extend {
                inner,
                variable,
                expression,
            } => {
                // rete: a step marker (change 29) binds nothing: the join under it counts
                // its rows itself; anything else is counted here.
                if self.is_step_marker(expression) {
                    let join = counts_its_rows(inner);
                    self.count_rows.set(join);
                    let (child, child_stats) =
                        self.graph_pattern_evaluator(inner, encoded_variables);
                    stat_children.push(child_stats);
                    let child = child?;
                    if join {
                        return Ok(child);
                    }
                    let steps = Some(self.dataset.clone());
                    return Ok(Rc::new(move |from| stepped(&steps, child(from))));
                }
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let child = child?;

                let position = encode_variable(encoded_variables, variable);
                // rete: BIND(f() AS ?v) of a custom function without arguments (rete's
                // step hooks, one above every join) calls `f` per row, with no expression
                // evaluator around it.
                if let Some(function) = self.custom_function_without_arguments(expression) {
                    let dataset = self.dataset.clone();
                    return Ok(Rc::new(move |from| {
                        let function = Arc::clone(&function);
                        let dataset = dataset.clone();
                        Box::new(child(from).map(move |tuple| {
                            let mut tuple = tuple?;
                            if let Some(value) = function(&[]) {
                                tuple.set(
                                    position,
                                    dataset.internalize_expression_term(value.into())?,
                                );
                            }
                            Ok(tuple)
                        }))
                    }));
                }
                // rete: see `extend_chain`.
                let chain: Rc<[usize]> = extend_chain_variables(inner)
                    .into_iter()
                    .map(|v| encode_variable(encoded_variables, v))
                    .chain([position])
                    .collect();
                if let Some(expression) = self.with_extend_chain(&chain, || {
                    self.internal_expression_evaluator(
                        expression,
                        encoded_variables,
                        stat_children,
                    )
                })? {
                    return Ok(Rc::new(move |from| {
                        let expression = Rc::clone(&expression);
                        Box::new(child(from).map(move |tuple| {
                            let mut tuple = tuple?;
                            if let Some(value) = expression(&tuple) {
                                tuple.set(position, value);
                            }
                            Ok(tuple)
                        }))
                    }));
                }

                let expression = self.with_extend_chain(&chain, || {
                    self.expression_evaluator(expression, encoded_variables, stat_children)
                })?;
                let dataset = self.dataset.clone();
                Rc::new(move |from| {
                    let expression = Rc::clone(&expression);
                    let dataset = dataset.clone();
                    Box::new(child(from).map(move |tuple| {
                        let mut tuple = tuple?;
                        if let Some(value) = expression(&tuple) {
                            tuple.set(position, dataset.internalize_expression_term(value)?);
                        }
                        Ok(tuple)
                    }))
                })
            }
            GraphPattern::OrderBy { inner, expression } => {
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let child = child?;
                let by = expression
                    .iter()
                    .map(|comp| {
                        Ok(match comp {
                            OrderExpression::Asc(expression) => {
                                ComparatorFunction::Asc(self.expression_evaluator(
                                    expression,
                                    encoded_variables,
                                    stat_children,
                                )?)
                            }
                            OrderExpression::Desc(expression) => {
                                ComparatorFunction::Desc(self.expression_evaluator(
                                    expression,
                                    encoded_variables,
                                    stat_children,
                                )?)
                            }
                        })
                    })
                    .collect::<Result<Vec<_>, QueryEvaluationError>>()?;
                // rete: the solutions' positions of the variables ordered by, whose stored
                // terms the dataset may rank (vendor/README.md change 17).
                let ranked = expression
                    .iter()
                    .map(|comp| match comp {
                        OrderExpression::Asc(Expression::Variable(v))
                        | OrderExpression::Desc(Expression::Variable(v)) => {
                            Some(encode_variable(encoded_variables, v))
                        }
                        _ => None,
                    })
                    .collect::<Vec<_>>();
                let dataset = self.dataset.clone();
                Rc::new(move |from| {
                    let mut errors = Vec::default();
                    let tuples = child(from)
                        .filter_map(|result| match result {
                            Ok(result) => Some(result),
                            Err(error) => {
                                errors.push(Err(error));
                                None
                            }
                        })
                        .collect::<Vec<_>>();
                    if tuples.len() < 2 {
                        // rete: nothing to sort, no keys to compute (change 17).
                        return Box::new(errors.into_iter().chain(tuples.into_iter().map(Ok)));
                    }
                    // rete: a variable's ranks when the dataset ranks all its bound terms
                    // in one group (vendor/README.md change 17).
                    let ranks = ranked
                        .iter()
                        .map(|position| position.and_then(|p| rank_column(&dataset, &tuples, p)))
                        .collect::<Vec<_>>();
                    // rete: each solution's sort keys are computed once, not twice per
                    // comparison (each computation may decode a term from the store).
                    let columns = by
                        .iter()
                        .zip(ranks)
                        .map(|(comp, ranks)| match (comp, ranks) {
                            (_, Some(ranks)) => SortColumn::Ranks(ranks),
                            (
                                ComparatorFunction::Asc(expression)
                                | ComparatorFunction::Desc(expression),
                                None,
                            ) => SortColumn::Values(tuples.iter().map(|t| expression(t)).collect()),
                        })
                        .collect::<Vec<_>>();
                    let mut sorted = tuples.into_iter().enumerate().collect::<Vec<_>>();
                    sorted.sort_unstable_by(|&(a, _), &(b, _)| {
                        for (comp, column) in by.iter().zip(&columns) {
                            let ordering = column.cmp(a, b);
                            match (comp, ordering) {
                                (_, Ordering::Equal) => (),
                                (ComparatorFunction::Asc(_), ordering) => return ordering,
                                (ComparatorFunction::Desc(_), ordering) => {
                                    return ordering.reverse();
                                }
                            }
                        }
                        Ordering::Equal
                    });
                    Box::new(
                        errors
                            .into_iter()
                            .chain(sorted.into_iter().map(|(_, tuple)| Ok(tuple))),
                    )
                })
            }
            GraphPattern::Distinct { inner } => {
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let child = child?;
                Rc::new(move |from| Box::new(hash_deduplicate(child(from))))
            }
            GraphPattern::Reduced { inner } => {
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let child = child?;
                Rc::new(move |from| {
                    Box::new(ConsecutiveDeduplication {
                        inner: child(from),
                        current: None,
                    })
                })
            }
            GraphPattern::Slice {
                inner,
                start,
                length,
            } => {
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let mut child = child?;
                #[expect(clippy::shadow_same)]
                let start = *start;
                if start > 0 {
                    child = Rc::new(move |from| Box::new(child(from).skip(start)));
                }
                if let Some(length) = *length {
                    child = Rc::new(move |from| Box::new(child(from).take(length)));
                }
                child
            }
            GraphPattern::Project { inner, variables } => {
                let mut inner_encoded_variables = variables.clone();
                let (child, child_stats) =
                    self.graph_pattern_evaluator(inner, &mut inner_encoded_variables);
                stat_children.push(child_stats);
                let child = child?;
                let mapping = variables
                    .iter()
                    .enumerate()
                    .map(|(new_variable, variable)| {
                        (new_variable, encode_variable(encoded_variables, variable))
                    })
                    .collect::<Rc<[(usize, usize)]>>();
                // rete (change 26): a SELECT's own projection keeps each position (its
                // variables come first in the inner ones); from a tuple with none set, each
                // solution is the inner one cut to the projected positions, not a new tuple.
                let keeps_positions = mapping.iter().all(|(input, output)| input == output);
                // rete: the inner tuple holds every inner variable (change 28); upstream's
                // held the projected ones, so the inner patterns' tuples, its clones, grew
                // (an allocation and a reallocation per row).
                let inner_size = inner_encoded_variables.len().max(mapping.len());
                // rete (change 30): over one quad pattern with no variable but projected ones
                // (LUBM q14's `SELECT ?X WHERE { ?X a C }`), each solution is already the cut
                // one: its tuple has no position past the projection and ends at a set one
                // (only `set` grows it). The pattern's iterator is handed on as it is.
                let returns_child = keeps_positions
                    && inner_size == mapping.len()
                    && matches!(inner.as_ref(), GraphPattern::QuadPattern { .. });
                Rc::new(move |from| {
                    if returns_child && from.is_empty() {
                        return child(InternalTuple::with_capacity(inner_size));
                    }
                    if keeps_positions && from.is_empty() {
                        let width = mapping.len();
                        return Box::new(child(InternalTuple::with_capacity(inner_size)).map(
                            move |tuple| {
                                let mut tuple = tuple?;
                                tuple.keep_first(width);
                                Ok(tuple)
                            },
                        ));
                    }
                    let mapping = Rc::clone(&mapping);
                    let mut input_tuple = InternalTuple::with_capacity(inner_size);
                    for (input_key, output_key) in &*mapping {
                        if let Some(value) = from.get(*output_key) {
                            input_tuple.set(*input_key, value.clone());
                        }
                    }
                    Box::new(child(input_tuple).filter_map(move |tuple| {
                        match tuple {
                            Ok(tuple) => {
                                let mut output_tuple = from.clone();
                                for (input_key, output_key) in &*mapping {
                                    if let Some(value) = tuple.get(*input_key) {
                                        if let Some(existing_value) = output_tuple.get(*output_key)
                                        {
                                            if existing_value != value {
                                                return None; // Conflict
                                            }
                                        } else {
                                            output_tuple.set(*output_key, value.clone());
                                        }
                                    }
                                }
                                Some(Ok(output_tuple))
                            }
                            Err(e) => Some(Err(e)),
                        }
                    }))
                })
            }
            GraphPattern::Group {
                inner,
                aggregates,
                variables,
            } => {
                let (child, child_stats) = self.graph_pattern_evaluator(inner, encoded_variables);
                stat_children.push(child_stats);
                let child = child?;
                let key_variables = variables
                    .iter()
                    .map(|k| encode_variable(encoded_variables, k))
                    .collect::<Rc<[_]>>();
                let accumulator_builders = aggregates
                    .iter()
                    .map(|(_, aggregate)| {
                        self.accumulator_builder(aggregate, encoded_variables, stat_children)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let accumulator_variables = aggregates
                    .iter()
                    .map(|(variable, _)| encode_variable(encoded_variables, variable))
                    .collect::<Vec<_>>();
                let dataset = self.dataset.clone();
                Rc::new(move |from| {
                    let tuple_size = from.capacity();
                    let key_variables = Rc::clone(&key_variables);
                    let mut errors = Vec::default();
                    // rete: each group's accumulators by the index the map gives its key, and
                    // the last row's key and group kept (change 28). Upstream collected each
                    // row's key into a new `Vec` and hashed it; rows of one group often come
                    // one after another (`GROUP BY ?datatype` over every literal), and a key
                    // equal to the last one (for the dataset's terms an id or a shared `Rc`,
                    // compared without reading the term) needs no hash, the others are looked
                    // up from one reused buffer. The map holds the same keys, inserted in the
                    // same order, as upstream's, so the groups come out in upstream's order.
                    let mut group_of_key = FxHashMap::<Vec<Option<D::InternalTerm>>, usize>::default();
                    let mut groups = Vec::<Vec<AccumulatorWrapper<'_, D::InternalTerm>>>::new();
                    let mut key = Vec::with_capacity(key_variables.len());
                    // The last row's key and group. No row's key is empty but without GROUP BY,
                    // whose one group is 0, so this start matches only there.
                    let mut last = (Vec::new(), 0);
                    if key_variables.is_empty() {
                        // There is always a single group if there is no GROUP BY
                        group_of_key.insert(Vec::new(), 0);
                        groups.push(accumulator_builders.iter().map(|c| c()).collect::<Vec<_>>());
                    }
                    child(from)
                        .filter_map(|result| match result {
                            Ok(result) => Some(result),
                            Err(error) => {
                                errors.push(error);
                                None
                            }
                        })
                        .for_each(|tuple| {
                            key.clear();
                            key.extend(key_variables.iter().map(|v| tuple.get(*v).cloned()));
                            if last.0 != key {
                                last.1 = match group_of_key.get(key.as_slice()) {
                                    Some(&group) => group,
                                    None => {
                                        groups.push(
                                            accumulator_builders.iter().map(|c| c()).collect(),
                                        );
                                        group_of_key.insert(key.clone(), groups.len() - 1);
                                        groups.len() - 1
                                    }
                                };
                                std::mem::swap(&mut last.0, &mut key);
                            }
                            let group = last.1;
                            for accumulator in &mut groups[group] {
                                accumulator.accumulate(&tuple);
                            }
                        });
                    let accumulator_variables = accumulator_variables.clone();
                    let dataset = dataset.clone();
                    Box::new(
                        errors
                            .into_iter()
                            .map(Err)
                            .chain(group_of_key.into_iter().map(
                                move |(key, group)| {
                                    let accumulators = std::mem::take(&mut groups[group]);
                                    let mut result = InternalTuple::with_capacity(tuple_size);
                                    for (variable, value) in key_variables.iter().zip(key) {
                                        if let Some(value) = value {
                                            result.set(*variable, value);
                                        }
                                    }
                                    for (accumulator, variable) in
                                        accumulators.into_iter().zip(&accumulator_variables)
                                    {
                                        match accumulator.finish() {
                                            Some(Aggregated::Term(term)) => {
                                                result.set(*variable, term);
                                            }
                                            Some(Aggregated::Value(value)) => result.set(
                                                *variable,
                                                dataset.internalize_expression_term(value)?,
                                            ),
                                            None => {}
                                        }
                                    }
                                    Ok(result)
                                },
                            )),
                    )
                })
            }
            GraphPattern::Service {
                name,
                inner,
                silent,
            } => {
                #[expect(clippy::shadow_same)]
                let silent = *silent;
                let service_name =
                    TupleSelector::from_named_node_pattern(name, encoded_variables, &self.dataset)?;
                inner.lookup_used_variables(&mut |v| {
                    encode_variable(encoded_variables, v);
                }); // We fill "encoded_variables"
                let graph_pattern = spargebra::algebra::GraphPattern::from(inner.as_ref());
                let variables = Rc::from(encoded_variables.as_slice());
                let eval = self.clone();
                Rc::new(move |from| {
                    match eval.evaluate_service(
                        &service_name,
                        &graph_pattern,
                        Rc::clone(&variables),
                        &from,
                    ) {
                        Ok(result) => Box::new(result.filter_map(move |binding| {
                            binding
                                .map(|binding| binding.combine_with(&from))
                                .transpose()
                        })),
                        Err(e) => {
                            if silent {
                                Box::new(once(Ok(from)))
                            } else {
                                Box::new(once(Err(e)))
                            }
                        }
                    }
                })
            }
        })
    }

    fn evaluate_service(
        &self,
        service_name: &TupleSelector<D::InternalTerm>,
        graph_pattern: &spargebra::algebra::GraphPattern,
        variables: Rc<[Variable]>,
        from: &InternalTuple<D::InternalTerm>,
    ) -> Result<InternalTuplesIterator<'a, D::InternalTerm>, QueryEvaluationError> {
        let service_name = service_name
            .get_pattern_value(
                from,
                #[cfg(feature = "sparql-12")]
                &self.dataset,
            )?
            .ok_or(QueryEvaluationError::UnboundService)?;
        let service_name = match self.dataset.externalize_term(service_name)? {
            Term::NamedNode(service_name) => service_name,
            term => return Err(QueryEvaluationError::InvalidServiceName(term)),
        };
        let iter =
            self.service_handler
                .handle(&service_name, graph_pattern, self.base_iri.as_deref())?;
        Ok(encode_bindings(self.dataset.clone(), variables, iter))
    }

    fn accumulator_builder(
        &self,
        expression: &AggregateExpression,
        encoded_variables: &mut Vec<Variable>,
        stat_children: &mut Vec<Rc<EvalNodeWithStats>>,
    ) -> Result<Box<dyn Fn() -> AccumulatorWrapper<'a, D::InternalTerm> + 'a>, QueryEvaluationError>
    {
        Ok(match expression {
            AggregateExpression::CountSolutions { distinct } => {
                if *distinct {
                    Box::new(move || AccumulatorWrapper::CountDistinctTuple {
                        count: 0,
                        seen: FxHashSet::default(),
                    })
                } else {
                    Box::new(move || AccumulatorWrapper::CountTuple { count: 0 })
                }
            }
            AggregateExpression::FunctionCall {
                name,
                distinct,
                expr,
            } => match name {
                AggregateFunction::Count => {
                    if let Some(evaluator) =
                        self.internal_expression_evaluator(expr, encoded_variables, stat_children)?
                    {
                        return Ok(if *distinct {
                            Box::new(move || AccumulatorWrapper::CountDistinctInternal {
                                evaluator: Rc::clone(&evaluator),
                                seen: FxHashSet::default(),
                                count: 0,
                            })
                        } else {
                            Box::new(move || AccumulatorWrapper::CountInternal {
                                evaluator: Rc::clone(&evaluator),
                                count: 0,
                            })
                        });
                    }
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(CountAccumulator::default())),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(CountAccumulator::default())),
                        })
                    }
                }
                AggregateFunction::Sum => {
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(SumAccumulator::default())),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(SumAccumulator::default())),
                        })
                    }
                }
                AggregateFunction::Min => {
                    // rete: the group's term with the least value (see `Self::term_of_group`).
                    if let Some(builder) = self.term_of_group(
                        expr,
                        Ordering::Less,
                        encoded_variables,
                        stat_children,
                    )? {
                        return Ok(builder);
                    }
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(MinAccumulator::default())),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(MinAccumulator::default())),
                        })
                    }
                }
                AggregateFunction::Max => {
                    if let Some(builder) = self.term_of_group(
                        expr,
                        Ordering::Greater,
                        encoded_variables,
                        stat_children,
                    )? {
                        return Ok(builder);
                    }
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(MaxAccumulator::default())),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(MaxAccumulator::default())),
                        })
                    }
                }
                AggregateFunction::Avg => {
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(AvgAccumulator::default())),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(AvgAccumulator::default())),
                        })
                    }
                }
                AggregateFunction::Sample => {
                    if let Some(evaluator) =
                        self.internal_expression_evaluator(expr, encoded_variables, stat_children)?
                    {
                        return Ok(Box::new(move || AccumulatorWrapper::SampleInternal {
                            evaluator: Rc::clone(&evaluator),
                            term: None,
                        }));
                    }
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    Box::new(move || AccumulatorWrapper::Sample {
                        evaluator: Rc::clone(&evaluator),
                        value: None,
                    })
                }
                AggregateFunction::GroupConcat { separator } => {
                    let separator = Rc::from(separator.as_deref().unwrap_or(" "));
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(GroupConcatAccumulator::new(Rc::clone(
                                &separator,
                            )))),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(GroupConcatAccumulator::new(Rc::clone(
                                &separator,
                            )))),
                        })
                    }
                }
                AggregateFunction::Custom(function_name) => {
                    let Some(function) = self.custom_aggregate_functions.get(function_name) else {
                        return Err(QueryEvaluationError::UnsupportedCustomFunction(
                            function_name.clone(),
                        ));
                    };
                    let evaluator =
                        self.expression_evaluator(expr, encoded_variables, stat_children)?;
                    let function = Arc::clone(function);
                    if *distinct {
                        Box::new(move || AccumulatorWrapper::DistinctExpression {
                            evaluator: Rc::clone(&evaluator),
                            seen: FxHashSet::default(),
                            accumulator: Some(Box::new(CustomAccumulator(function()))),
                        })
                    } else {
                        Box::new(move || AccumulatorWrapper::Expression {
                            evaluator: Rc::clone(&evaluator),
                            accumulator: Some(Box::new(CustomAccumulator(function()))),
                        })
                    }
                }
            },
        })
    }

    /// rete: MIN and MAX of an expression whose values are terms as stored (a variable, a
    /// constant, COALESCE/IF of those) give the group's term itself: `MAX(?n)` over a stored
    /// `"030"^^xsd:integer` is that term (SPARQL 1.1 §18.5.1.5 picks a term of the multiset),
    /// where upstream gave the value's canonical form `"30"`. The values are compared as
    /// upstream compares them; of equal values the first met is kept, as upstream keeps it
    /// (so DISTINCT changes nothing). `None`: the expression computes its values.
    fn term_of_group(
        &self,
        expression: &Expression,
        wins: Ordering,
        encoded_variables: &mut Vec<Variable>,
        stat_children: &mut Vec<Rc<EvalNodeWithStats>>,
    ) -> Result<Option<Box<dyn Fn() -> AccumulatorWrapper<'a, D::InternalTerm> + 'a>>, QueryEvaluationError>
    {
        let Some(evaluator) =
            self.internal_expression_evaluator(expression, encoded_variables, stat_children)?
        else {
            return Ok(None);
        };
        let dataset = self.dataset.clone();
        let value: Rc<dyn Fn(D::InternalTerm) -> Option<ExpressionTerm> + 'a> =
            Rc::new(move |term| dataset.externalize_expression_term(term).ok());
        Ok(Some(Box::new(move || AccumulatorWrapper::TermOfGroup {
            evaluator: Rc::clone(&evaluator),
            value: Rc::clone(&value),
            wins,
            best: Some(None),
        })))
    }

    /// rete: whether `expression` is a call of the step marker without arguments (change 29).
    fn is_step_marker(&self, expression: &Expression) -> bool {
        match (expression, &self.step_marker) {
            (
                Expression::FunctionCall(sparopt::algebra::Function::Custom(name), arguments),
                Some(marker),
            ) => arguments.is_empty() && name == marker.as_ref(),
            _ => false,
        }
    }

    /// rete (change 32): a quad pattern's selectors, with the dataset, for its lookups.
    fn pattern_lookup(
        &self,
        subject: &GroundTermPattern,
        predicate: &NamedNodePattern,
        object: &GroundTermPattern,
        graph_name: Option<&NamedNodePattern>,
        encoded_variables: &mut Vec<Variable>,
    ) -> Result<PatternLookup<'a, D>, QueryEvaluationError> {
        let subject =
            TupleSelector::from_ground_term_pattern(subject, encoded_variables, &self.dataset)?;
        let predicate =
            TupleSelector::from_named_node_pattern(predicate, encoded_variables, &self.dataset)?;
        let object =
            TupleSelector::from_ground_term_pattern(object, encoded_variables, &self.dataset)?;
        let graph_name = graph_name
            .map(|graph_name| {
                TupleSelector::from_named_node_pattern(graph_name, encoded_variables, &self.dataset)
            })
            .transpose()?;
        Ok(PatternLookup {
            selectors: PatternSelectors::new(subject, predicate, object, graph_name),
            dataset: self.dataset.clone(),
        })
    }

    /// rete: the dataset that counts the rows of the join being built, when a step marker
    /// sits right above it (change 29); reading it clears it for the joins below.
    fn rows_counted_here(&self) -> Option<EvalDataset<'a, D>> {
        self.count_rows.replace(false).then(|| self.dataset.clone())
    }

    /// rete: the function of a call to a registered custom function without arguments.
    fn custom_function_without_arguments(
        &self,
        expression: &Expression,
    ) -> Option<Arc<dyn Fn(&[Term]) -> Option<Term> + Send + Sync>> {
        match expression {
            Expression::FunctionCall(sparopt::algebra::Function::Custom(name), arguments)
                if arguments.is_empty() =>
            {
                self.custom_functions.get(name).cloned()
            }
            _ => None,
        }
    }

    /// Evaluates an expression and returns an internal term
    ///
    /// Returns None if building such expression would mean to convert back to an internal term at the end.
    #[expect(clippy::type_complexity)]
    /// rete: runs `build` with `chain` as the current `extend_chain`.
    fn with_extend_chain<T>(&self, chain: &Rc<[usize]>, build: impl FnOnce() -> T) -> T {
        let outer = self.extend_chain.replace(Rc::clone(chain));
        let built = build();
        *self.extend_chain.borrow_mut() = outer;
        built
    }

    fn internal_expression_evaluator(
        &self,
        expression: &Expression,
        encoded_variables: &mut Vec<Variable>,
        stat_children: &mut Vec<Rc<EvalNodeWithStats>>,
    ) -> Result<
        Option<Rc<dyn Fn(&InternalTuple<D::InternalTerm>) -> Option<D::InternalTerm> + 'a>>,
        QueryEvaluationError,
    > {
        Ok(try_build_internal_expression_evaluator(
            expression,
            &mut ExpressionContext {
                evaluator: self,
                encoded_variables,
                stat_children,
            },
        )?)
    }

    /// Evaluate an expression and return its effective boolean value
    pub(crate) fn effective_boolean_value_expression_evaluator(
        &self,
        expression: &Expression,
        encoded_variables: &mut Vec<Variable>,
        stat_children: &mut Vec<Rc<EvalNodeWithStats>>,
    ) -> Result<ExpressionEvaluator<'a, InternalTuple<D::InternalTerm>, bool>, QueryEvaluationError>
    {
        // TODO: avoid dyn?
        if let Some(eval) =
            self.internal_expression_evaluator(expression, encoded_variables, stat_children)?
        {
            let dataset = self.dataset.clone();
            return Ok(Rc::new(move |tuple| {
                dataset
                    .internal_term_effective_boolean_value(eval(tuple)?)
                    .ok()?
            }));
        }
        let eval = self.expression_evaluator(expression, encoded_variables, stat_children)?;
        Ok(Rc::new(move |tuple| eval(tuple)?.effective_boolean_value()))
    }

    /// Evaluate an expression and return an explicit ExpressionTerm
    pub(crate) fn expression_evaluator(
        &self,
        expression: &Expression,
        encoded_variables: &mut Vec<Variable>,
        stat_children: &mut Vec<Rc<EvalNodeWithStats>>,
    ) -> Result<
        ExpressionEvaluator<'a, InternalTuple<D::InternalTerm>, ExpressionTerm>,
        QueryEvaluationError,
    > {
        Ok(build_expression_evaluator(
            expression,
            &mut ExpressionContext {
                evaluator: self,
                encoded_variables,
                stat_children,
            },
        )?)
    }

    fn encode_term(&self, term: impl Into<Term>) -> Result<D::InternalTerm, QueryEvaluationError> {
        self.dataset.internalize_term(term.into())
    }

    #[cfg(feature = "sparql-12")]
    fn encode_triple(
        &self,
        triple: &GroundTriple,
    ) -> Result<D::InternalTerm, QueryEvaluationError> {
        // rete: the triple term as it is written, not its value (see `get_pattern_value`).
        self.dataset
            .internalize_term(Triple::from(triple.clone()).into())
    }

    fn encode_property_path(
        &self,
        path: &PropertyPathExpression,
    ) -> Result<Rc<PropertyPath<D::InternalTerm>>, QueryEvaluationError> {
        Ok(Rc::new(match path {
            PropertyPathExpression::NamedNode(node) => {
                PropertyPath::Path(self.encode_term(node.clone())?)
            }
            PropertyPathExpression::Reverse(p) => {
                PropertyPath::Reverse(self.encode_property_path(p)?)
            }
            PropertyPathExpression::Sequence(a, b) => {
                PropertyPath::Sequence(self.encode_property_path(a)?, self.encode_property_path(b)?)
            }
            PropertyPathExpression::Alternative(a, b) => PropertyPath::Alternative(
                self.encode_property_path(a)?,
                self.encode_property_path(b)?,
            ),
            PropertyPathExpression::ZeroOrMore(p) => {
                PropertyPath::ZeroOrMore(self.encode_property_path(p)?)
            }
            PropertyPathExpression::OneOrMore(p) => {
                PropertyPath::OneOrMore(self.encode_property_path(p)?)
            }
            PropertyPathExpression::ZeroOrOne(p) => {
                PropertyPath::ZeroOrOne(self.encode_property_path(p)?)
            }
            PropertyPathExpression::NegatedPropertySet(ps) => PropertyPath::NegatedPropertySet(
                ps.iter()
                    .map(|p| self.encode_term(p.clone()))
                    .collect::<Result<Rc<[_]>, _>>()?,
            ),
        }))
    }
}

impl<'a, D: QueryableDataset<'a>> Clone for SimpleEvaluator<'a, D> {
    fn clone(&self) -> Self {
        Self {
            dataset: self.dataset.clone(),
            base_iri: self.base_iri.clone(),
            now: Rc::clone(&self.now),
            service_handler: Rc::clone(&self.service_handler),
            custom_functions: Rc::clone(&self.custom_functions),
            custom_aggregate_functions: Rc::clone(&self.custom_aggregate_functions),
            run_stats: self.run_stats,
            explain: self.explain,
            bnode_salt: Rc::clone(&self.bnode_salt),
            extend_chain: Rc::clone(&self.extend_chain),
            step_marker: self.step_marker.clone(),
            count_rows: Rc::clone(&self.count_rows),
        }
    }
}

struct ExpressionContext<'a, E> {
    evaluator: &'a E,
    encoded_variables: &'a mut Vec<Variable>,
    stat_children: &'a mut Vec<Rc<EvalNodeWithStats>>,
}

impl<'a, D: QueryableDataset<'a>> ExpressionEvaluatorContext<'a>
    for ExpressionContext<'_, SimpleEvaluator<'a, D>>
{
    type Tuple = InternalTuple<D::InternalTerm>;
    type Term = D::InternalTerm;
    type Error = QueryEvaluationError;

    fn build_variable_lookup(
        &mut self,
        variable: &Variable,
    ) -> impl Fn(&InternalTuple<D::InternalTerm>) -> Option<D::InternalTerm> + 'a {
        let variable = encode_variable(self.encoded_variables, variable);
        move |tuple| tuple.get(variable).cloned()
    }

    fn build_is_variable_bound(
        &mut self,
        variable: &Variable,
    ) -> impl Fn(&InternalTuple<D::InternalTerm>) -> bool + 'a {
        let variable = encode_variable(self.encoded_variables, variable);
        move |tuple| tuple.contains(variable)
    }

    fn build_exists(
        &mut self,
        plan: &GraphPattern,
    ) -> Result<impl Fn(&InternalTuple<D::InternalTerm>) -> bool + 'a, QueryEvaluationError> {
        let (eval, stats) = self
            .evaluator
            .graph_pattern_evaluator(plan, self.encoded_variables);
        self.stat_children.push(stats);
        let eval = eval?;
        Ok(move |tuple: &InternalTuple<D::InternalTerm>| eval(tuple.clone()).next().is_some())
    }

    fn internalize_named_node(
        &mut self,
        term: &NamedNode,
    ) -> Result<Self::Term, QueryEvaluationError> {
        self.evaluator.encode_term(term.clone())
    }

    fn internalize_literal(&mut self, term: &Literal) -> Result<Self::Term, QueryEvaluationError> {
        self.evaluator.encode_term(term.clone())
    }

    fn build_internalize_expression_term(
        &mut self,
    ) -> impl Fn(ExpressionTerm) -> Option<Self::Term> + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t| dataset.internalize_expression_term(t).ok()
    }

    fn build_externalize_expression_term(
        &mut self,
    ) -> impl Fn(Self::Term) -> Option<ExpressionTerm> + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t| dataset.externalize_expression_term(t).ok()
    }

    fn now(&mut self) -> DateTime {
        *self.evaluator.now.get_or_init(DateTime::now)
    }

    fn base_iri(&mut self) -> Option<Arc<Iri<String>>> {
        self.evaluator.base_iri.as_ref().map(Arc::clone)
    }

    fn custom_functions(&mut self) -> &CustomFunctionRegistry {
        &self.evaluator.custom_functions
    }

    fn build_externalize_term(&mut self) -> impl Fn(D::InternalTerm) -> Option<Term> + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t| dataset.externalize_term(t).ok()
    }

    fn build_internalize_term(&mut self) -> impl Fn(Term) -> Option<D::InternalTerm> + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t| dataset.internalize_term(t).ok()
    }

    fn build_term_function(
        &mut self,
        function: TermFunction,
    ) -> impl Fn(&D::InternalTerm) -> TermFunctionAnswer + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t| {
            dataset
                .internal_term_function(function, t)
                .unwrap_or(TermFunctionAnswer::Error)
        }
    }

    fn build_string_test(
        &mut self,
    ) -> impl Fn(&D::InternalTerm, &StringTest<'_>) -> TermFunctionAnswer
           + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t, test| {
            dataset
                .internal_string_test(t, test)
                .unwrap_or(TermFunctionAnswer::Error)
        }
    }

    fn build_internal_function_term(
        &mut self,
        function: TermFunction,
    ) -> impl Fn(&D::InternalTerm) -> Option<D::InternalTerm> + 'a {
        let dataset = self.evaluator.dataset.clone();
        move |t| dataset.internal_function_term(function, t).ok().flatten()
    }

    fn build_solution_key(
        &mut self,
    ) -> impl Fn(&InternalTuple<D::InternalTerm>) -> u128 + 'a {
        let salt = *self.evaluator.bnode_salt.get_or_init(random);
        let skipped = self.evaluator.extend_chain.borrow().clone();
        move |tuple| {
            let half = |seed: u8| {
                let mut hasher = FxHasher::default();
                (seed, salt).hash(&mut hasher);
                for (position, value) in tuple.iter().enumerate() {
                    if value.is_some() && !skipped.contains(&position) {
                        (position, value).hash(&mut hasher);
                    }
                }
                u128::from(hasher.finish())
            };
            (half(0) << 64) | half(1)
        }
    }
}

/// rete: the variables bound by the Extends directly below an Extend (through Filters),
/// which are evaluated on the same solution.
fn extend_chain_variables(mut pattern: &GraphPattern) -> Vec<&Variable> {
    let mut variables = Vec::new();
    loop {
        match pattern {
            GraphPattern::Extend {
                inner, variable, ..
            } => {
                variables.push(variable);
                pattern = inner;
            }
            GraphPattern::Filter { inner, .. } => pattern = inner,
            _ => return variables,
        }
    }
}

/// The string of a literal GROUP_CONCAT accepts: a simple or language-tagged string.
fn string_value(term: ExpressionTerm) -> Option<String> {
    match term {
        ExpressionTerm::StringLiteral(value) | ExpressionTerm::LangStringLiteral { value, .. } => {
            Some(value)
        }
        #[cfg(feature = "sparql-12")]
        ExpressionTerm::DirLangStringLiteral { value, .. } => Some(value),
        _ => None,
    }
}

/// rete (vendor/README.md change 25): the solutions of a SELECT as tuples of
/// the dataset's internal terms, one per projected variable in order, for a
/// caller that reads the terms from its dataset itself (rete writes SPARQL
/// JSON rows from its dictionary's bytes without building each `Term`).
/// [`Self::into_solutions`] and [`Self::next_solution`] give the solutions
/// as upstream does.
pub struct InternalSolutionIter<'a, D: QueryableDataset<'a>> {
    dataset: EvalDataset<'a, D>,
    iter: InternalTuplesIterator<'a, D::InternalTerm>,
    variables: Arc<[Variable]>,
}

impl<'a, D: QueryableDataset<'a>> InternalSolutionIter<'a, D> {
    /// The projected variables, in the order of the tuples' positions.
    pub fn variables(&self) -> &Arc<[Variable]> {
        &self.variables
    }

    /// The dataset the query is evaluated over.
    pub fn dataset(&self) -> &D {
        &self.dataset.dataset
    }

    /// The next solution with its terms externalized.
    pub fn next_solution(&mut self) -> Option<Result<QuerySolution, QueryEvaluationError>> {
        let tuple = self.iter.next()?;
        Some(tuple.and_then(|tuple| {
            let values = decode_tuple(&self.dataset, tuple, self.variables.len())?;
            Ok((Arc::clone(&self.variables), values).into())
        }))
    }

    /// The solutions with their terms externalized, as upstream gives them.
    pub fn into_solutions(self) -> QuerySolutionIter<'a> {
        let Self { dataset, iter, variables } = self;
        let tuple_size = variables.len();
        QuerySolutionIter::from_tuples(
            variables,
            Box::new(iter.map(move |values| decode_tuple(&dataset, values?, tuple_size))),
        )
    }
}

impl<'a, D: QueryableDataset<'a>> Iterator for InternalSolutionIter<'a, D> {
    type Item = Result<InternalTuple<D::InternalTerm>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.iter.next()
    }
}

fn decode_tuple<'a, D: QueryableDataset<'a>>(
    dataset: &EvalDataset<'a, D>,
    values: InternalTuple<D::InternalTerm>,
    tuple_size: usize,
) -> Result<Vec<Option<Term>>, QueryEvaluationError> {
    let mut result = vec![None; tuple_size];
    for (i, value) in values.iter().enumerate() {
        if let Some(term) = value {
            result[i] = Some(dataset.externalize_term(term)?)
        }
    }
    Ok(result)
}

// this is used to encode results from a BindingIterator into an InternalTuplesIterator. This happens when SERVICE clauses are evaluated
fn encode_bindings<'a, D: QueryableDataset<'a>>(
    dataset: EvalDataset<'a, D>,
    variables: Rc<[Variable]>,
    iter: QuerySolutionIter<'a>,
) -> InternalTuplesIterator<'a, D::InternalTerm> {
    Box::new(iter.map(move |solution| {
        let mut encoded_terms = InternalTuple::with_capacity(variables.len());
        for (variable, term) in &solution? {
            put_variable_value(
                variable,
                &variables,
                dataset.internalize_term(term.clone())?,
                &mut encoded_terms,
            );
        }
        Ok(encoded_terms)
    }))
}

fn encode_initial_bindings<'a, D: QueryableDataset<'a>>(
    dataset: &EvalDataset<'a, D>,
    variables: &[Variable],
    values: impl IntoIterator<Item = (Variable, Term)>,
) -> Result<InternalTuple<D::InternalTerm>, QueryEvaluationError> {
    let mut encoded_terms = InternalTuple::with_capacity(variables.len());
    for (variable, term) in values {
        if !put_variable_value(
            &variable,
            variables,
            dataset.internalize_term(term)?,
            &mut encoded_terms,
        ) {
            return Err(QueryEvaluationError::NotExistingSubstitutedVariable(
                variable,
            ));
        }
    }
    Ok(encoded_terms)
}

fn put_variable_value<T: Clone>(
    selector: &Variable,
    variables: &[Variable],
    value: T,
    tuple: &mut InternalTuple<T>,
) -> bool {
    for (i, v) in variables.iter().enumerate() {
        if selector == v {
            tuple.set(i, value);
            return true;
        }
    }
    false
}

enum AccumulatorWrapper<'a, T> {
    CountTuple {
        count: u64,
    },
    CountDistinctTuple {
        seen: FxHashSet<InternalTuple<T>>,
        count: u64,
    },
    CountInternal {
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<T> + 'a>,
        count: u64,
    },
    CountDistinctInternal {
        seen: FxHashSet<T>,
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<T> + 'a>,
        count: u64,
    },
    Sample {
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<ExpressionTerm> + 'a>,
        value: Option<ExpressionTerm>,
    },
    /// rete: SAMPLE of terms as stored gives the term, not its value's canonical form.
    SampleInternal {
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<T> + 'a>,
        term: Option<T>,
    },
    /// rete: MIN (`wins` is `Less`) or MAX (`Greater`) of terms as stored
    /// (`SimpleEvaluator::term_of_group`). `best` is `None` once a row had no value (the
    /// aggregate is then an error, as upstream's), `Some(None)` before the first row.
    TermOfGroup {
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<T> + 'a>,
        value: Rc<dyn Fn(T) -> Option<ExpressionTerm> + 'a>,
        wins: Ordering,
        best: Option<Option<(ExpressionTerm, T)>>,
    },
    Expression {
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<ExpressionTerm> + 'a>,
        accumulator: Option<Box<dyn Accumulator>>,
    },
    DistinctExpression {
        seen: FxHashSet<ExpressionTerm>,
        evaluator: Rc<dyn Fn(&InternalTuple<T>) -> Option<ExpressionTerm> + 'a>,
        accumulator: Option<Box<dyn Accumulator>>,
    },
}

impl<T: Clone + Eq + Hash> AccumulatorWrapper<'_, T> {
    fn accumulate(&mut self, tuple: &InternalTuple<T>) {
        match self {
            Self::CountTuple { count } => {
                *count += 1;
            }
            Self::CountDistinctTuple { seen, count } => {
                if seen.insert(tuple.clone()) {
                    *count += 1;
                }
            }
            Self::CountInternal { evaluator, count } => {
                if evaluator(tuple).is_some() {
                    *count += 1;
                }
            }
            Self::CountDistinctInternal {
                seen,
                evaluator,
                count,
            } => {
                let Some(value) = evaluator(tuple) else {
                    return;
                };
                if seen.insert(value) {
                    *count += 1;
                }
            }
            Self::Sample { evaluator, value } => {
                if value.is_some() {
                    return; // We already got a value
                }
                *value = evaluator(tuple);
            }
            Self::SampleInternal { evaluator, term } => {
                if term.is_none() {
                    *term = evaluator(tuple);
                }
            }
            Self::TermOfGroup {
                evaluator,
                value,
                wins,
                best,
            } => {
                let Some(current) = best else {
                    return; // Already failed
                };
                let Some((term, term_value)) =
                    evaluator(tuple).and_then(|term| Some((term.clone(), value(term)?)))
                else {
                    *best = None;
                    return;
                };
                let better = match current {
                    Some((best_value, _)) => {
                        cmp_terms(Some(&term_value), Some(best_value)) == *wins
                    }
                    None => true,
                };
                if better {
                    *current = Some((term_value, term));
                }
            }
            Self::Expression {
                evaluator,
                accumulator,
            } => {
                if accumulator.is_none() {
                    return; // Already failed
                }
                let Some(value) = evaluator(tuple) else {
                    *accumulator = None;
                    return;
                };
                let Some(accumulator) = accumulator else {
                    return;
                };
                accumulator.accumulate(value);
            }
            Self::DistinctExpression {
                seen,
                evaluator,
                accumulator,
            } => {
                if accumulator.is_none() {
                    return; // Already failed
                }
                let Some(value) = evaluator(tuple) else {
                    *accumulator = None;
                    return;
                };
                let Some(accumulator) = accumulator else {
                    return;
                };
                if seen.insert(value.clone()) {
                    accumulator.accumulate(value);
                }
            }
        }
    }

    fn finish(self) -> Option<Aggregated<T>> {
        match self {
            Self::CountTuple { count, .. }
            | Self::CountDistinctTuple { count, .. }
            | Self::CountInternal { count, .. }
            | Self::CountDistinctInternal { count, .. } => Some(Aggregated::Value(
                ExpressionTerm::IntegerLiteral(i64::try_from(count).ok()?.into()),
            )),
            Self::Sample { value, .. } => value.map(Aggregated::Value),
            Self::SampleInternal { term, .. } => term.map(Aggregated::Term),
            Self::TermOfGroup { best, .. } => best?.map(|(_, term)| Aggregated::Term(term)),
            Self::Expression { accumulator, .. } | Self::DistinctExpression { accumulator, .. } => {
                accumulator?.finish().map(Aggregated::Value)
            }
        }
    }
}

/// rete: an aggregate's result: a term of the group as the dataset holds it (MIN, MAX and
/// SAMPLE of terms as stored) or a value it computed.
enum Aggregated<T> {
    Term(T),
    Value(ExpressionTerm),
}

trait Accumulator {
    fn accumulate(&mut self, element: ExpressionTerm);

    fn finish(&mut self) -> Option<ExpressionTerm>;
}

#[derive(Default, Debug)]
struct CountAccumulator {
    count: i64,
}

impl Accumulator for CountAccumulator {
    fn accumulate(&mut self, _element: ExpressionTerm) {
        self.count += 1;
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        Some(ExpressionTerm::IntegerLiteral(self.count.into()))
    }
}

struct SumAccumulator {
    sum: Option<ExpressionTerm>,
}

impl Default for SumAccumulator {
    fn default() -> Self {
        Self {
            sum: Some(ExpressionTerm::IntegerLiteral(Integer::default())),
        }
    }
}

impl Accumulator for SumAccumulator {
    fn accumulate(&mut self, element: ExpressionTerm) {
        let Some(sum) = &self.sum else {
            return;
        };
        self.sum = if let Some(operands) = NumericBinaryOperands::new(sum.clone(), element) {
            // TODO: unify with addition?
            match operands {
                NumericBinaryOperands::Float(v1, v2) => Some(ExpressionTerm::FloatLiteral(v1 + v2)),
                NumericBinaryOperands::Double(v1, v2) => {
                    Some(ExpressionTerm::DoubleLiteral(v1 + v2))
                }
                NumericBinaryOperands::Integer(v1, v2) => {
                    v1.checked_add(v2).map(ExpressionTerm::IntegerLiteral)
                }
                NumericBinaryOperands::Decimal(v1, v2) => {
                    v1.checked_add(v2).map(ExpressionTerm::DecimalLiteral)
                }
                #[cfg(feature = "sep-0002")]
                _ => None,
            }
        } else {
            None
        };
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        self.sum.take()
    }
}

#[derive(Default)]
struct AvgAccumulator {
    sum: SumAccumulator,
    count: i64,
}

impl Accumulator for AvgAccumulator {
    fn accumulate(&mut self, element: ExpressionTerm) {
        self.sum.accumulate(element);
        self.count += 1;
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        let sum = self.sum.finish()?;
        if self.count == 0 {
            return Some(ExpressionTerm::IntegerLiteral(0.into()));
        }
        // TODO: duration?
        let count = Integer::from(self.count);
        match sum {
            ExpressionTerm::FloatLiteral(sum) => {
                Some(ExpressionTerm::FloatLiteral(sum / Float::from(count)))
            }
            ExpressionTerm::DoubleLiteral(sum) => {
                Some(ExpressionTerm::DoubleLiteral(sum / Double::from(count)))
            }
            ExpressionTerm::IntegerLiteral(sum) => Some(ExpressionTerm::DecimalLiteral(
                Decimal::from(sum).checked_div(count)?,
            )),
            ExpressionTerm::DecimalLiteral(sum) => {
                Some(ExpressionTerm::DecimalLiteral(sum.checked_div(count)?))
            }
            _ => None,
        }
    }
}

#[derive(Default)]
#[expect(clippy::option_option)]
struct MinAccumulator {
    min: Option<Option<ExpressionTerm>>,
}

impl Accumulator for MinAccumulator {
    fn accumulate(&mut self, element: ExpressionTerm) {
        if let Some(min) = &self.min {
            if cmp_terms(Some(&element), min.as_ref()) == Ordering::Less {
                self.min = Some(Some(element));
            }
        } else {
            self.min = Some(Some(element))
        }
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        self.min.clone()?
    }
}

#[derive(Default)]
#[expect(clippy::option_option)]
struct MaxAccumulator {
    max: Option<Option<ExpressionTerm>>,
}

impl Accumulator for MaxAccumulator {
    fn accumulate(&mut self, element: ExpressionTerm) {
        if let Some(max) = &self.max {
            if cmp_terms(Some(&element), max.as_ref()) == Ordering::Greater {
                self.max = Some(Some(element))
            }
        } else {
            self.max = Some(Some(element))
        }
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        self.max.clone()?
    }
}

#[expect(clippy::option_option)]
// rete: GROUP_CONCAT gives a simple literal (SPARQL 1.1 §18.5.1.7: "the result is a simple
// literal"); upstream kept a language tag shared by every value ("1 2"@en).
// rete: GROUP_CONCAT gives a simple literal (SPARQL 1.1 §18.5.1.7 builds it from
// `STR(...)`); upstream kept a language tag shared by every value ("1 2"@en).
struct GroupConcatAccumulator {
    /// `None` once an element was not a string: the aggregate is then an error.
    concat: Option<String>,
    empty: bool,
    separator: Rc<str>,
}

impl GroupConcatAccumulator {
    fn new(separator: Rc<str>) -> Self {
        Self {
            concat: Some(String::new()),
            empty: true,
            separator,
        }
    }
}

impl Accumulator for GroupConcatAccumulator {
    fn accumulate(&mut self, element: ExpressionTerm) {
        let Some(concat) = self.concat.as_mut() else {
            return;
        };
        let Some(value) = string_value(element) else {
            self.concat = None;
            return;
        };
        if !self.empty {
            concat.push_str(&self.separator);
        }
        self.empty = false;
        concat.push_str(&value);
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        self.concat.take().map(ExpressionTerm::StringLiteral)
    }
}

struct CustomAccumulator(Box<dyn AggregateFunctionAccumulator + Send + Sync>);

impl Accumulator for CustomAccumulator {
    fn accumulate(&mut self, element: ExpressionTerm) {
        self.0.accumulate(element.into())
    }

    fn finish(&mut self) -> Option<ExpressionTerm> {
        Some(self.0.finish()?.into())
    }
}

fn encode_variable(variables: &mut Vec<Variable>, variable: &Variable) -> usize {
    if let Some(key) = slice_key(variables, variable) {
        key
    } else {
        variables.push(variable.clone());
        variables.len() - 1
    }
}

fn bnode_key(blank_nodes: &mut Vec<BlankNode>, blank_node: &BlankNode) -> usize {
    if let Some(key) = slice_key(blank_nodes, blank_node) {
        key
    } else {
        blank_nodes.push(blank_node.clone());
        blank_nodes.len() - 1
    }
}

fn slice_key<T: Eq>(slice: &[T], element: &T) -> Option<usize> {
    for (i, item) in slice.iter().enumerate() {
        if item == element {
            return Some(i);
        }
    }
    None
}

/// rete: one ORDER BY key of every solution, by the solution's index: their values, or the
/// dataset's ranks of their stored terms (`QueryableDataset::internal_term_rank`), never a
/// mix of both.
enum SortColumn {
    Values(Vec<Option<ExpressionTerm>>),
    Ranks(Vec<Option<u64>>),
}

impl SortColumn {
    /// Unbound first, as `cmp_terms` has it.
    fn cmp(&self, a: usize, b: usize) -> Ordering {
        match self {
            Self::Values(values) => cmp_terms(values[a].as_ref(), values[b].as_ref()),
            Self::Ranks(ranks) => ranks[a].cmp(&ranks[b]),
        }
    }
}

/// rete: the ranks of the terms at `position` of the solutions, `None` unless the dataset
/// ranks every bound one, all in one group.
fn rank_column<'a, D: QueryableDataset<'a>>(
    dataset: &EvalDataset<'a, D>,
    tuples: &[InternalTuple<D::InternalTerm>],
    position: usize,
) -> Option<Vec<Option<u64>>> {
    let mut group = None;
    tuples
        .iter()
        .map(|tuple| {
            let Some(term) = tuple.get(position) else {
                return Some(None);
            };
            let (g, rank) = dataset.internal_term_rank(term)?;
            (*group.get_or_insert(g) == g).then_some(Some(rank))
        })
        .collect()
}

/// Comparison for ordering
fn cmp_terms(a: Option<&ExpressionTerm>, b: Option<&ExpressionTerm>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => {
            match a {
                ExpressionTerm::BlankNode(a) => match b {
                    ExpressionTerm::BlankNode(b) => a.as_str().cmp(b.as_str()),
                    _ => Ordering::Less,
                },
                ExpressionTerm::NamedNode(a) => match b {
                    ExpressionTerm::BlankNode(_) => Ordering::Greater,
                    ExpressionTerm::NamedNode(b) => a.as_str().cmp(b.as_str()),
                    _ => Ordering::Less,
                },
                #[cfg(feature = "sparql-12")]
                ExpressionTerm::Triple(a) => match b {
                    ExpressionTerm::Triple(b) => cmp_triples(a, b),
                    _ => Ordering::Greater,
                },
                _ => match b {
                    ExpressionTerm::NamedNode(_) | ExpressionTerm::BlankNode(_) => {
                        Ordering::Greater
                    }
                    #[cfg(feature = "sparql-12")]
                    ExpressionTerm::Triple(_) => Ordering::Less,
                    _ => cmp_literals(a, b),
                },
            }
        }
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => Ordering::Equal,
    }
}

/// rete: the order of two literals, a total order (vendor/README.md change 16). Upstream used
/// `<` where it is defined and the lexical form elsewhere, which is no order: `"2"` < `"10"` by
/// value, `"10"` < `"15"^^xsd:string` < `"2"` by text; a date without a timezone is neither
/// before nor after one with a timezone within 14 hours of it. Rust's sort then panics
/// ("user-provided comparison function does not correctly implement a total order") or gives
/// an order that depends on the input's. Here literals fall into kinds (numbers, NaN,
/// booleans, strings with or without a language tag, each date/time type, durations, other
/// datatypes),
/// kinds sort in that order, and within a kind values sort by a total order that agrees with
/// `<` wherever `<` is defined (SPARQL 1.1 §15.1 leaves the rest to the implementation).
fn cmp_literals(a: &ExpressionTerm, b: &ExpressionTerm) -> Ordering {
    let (a, b) = (&*numeric_or_itself(a), &*numeric_or_itself(b));
    let (kind_a, kind_b) = (literal_kind(a), literal_kind(b));
    if kind_a != kind_b {
        return kind_a.cmp(&kind_b);
    }
    match (timeline_value(a), timeline_value(b)) {
        (Some(a), Some(b)) => return a.cmp(&b),
        (Some(_), None) => return Ordering::Less,
        (None, Some(_)) => return Ordering::Greater,
        (None, None) => (),
    }
    if let Some(ordering) = partial_cmp_literals(a, b) {
        return ordering;
    }
    match (Term::from(a.clone()), Term::from(b.clone())) {
        (Term::Literal(a), Term::Literal(b)) => (a.value(), a.datatype(), a.language())
            .cmp(&(b.value(), b.datatype(), b.language())),
        _ => Ordering::Equal, // only literals come here
    }
}

/// rete: a literal of a numeric datatype that oxsdatatypes cannot hold (a valid xsd:decimal
/// with more than 18 fractional digits, as qudt has) as the nearest double, so that it sorts
/// among the numbers; anything else as it is.
fn numeric_or_itself(term: &ExpressionTerm) -> std::borrow::Cow<'_, ExpressionTerm> {
    if let ExpressionTerm::OtherTypedLiteral { value, datatype } = term {
        let numeric = datatype.as_str() == "http://www.w3.org/2001/XMLSchema#decimal"
            || datatype.as_str() == "http://www.w3.org/2001/XMLSchema#integer"
            || crate::dataset::value_may_change_datatype(datatype.as_str());
        let finite = value.trim().parse::<f64>().ok().filter(|value| value.is_finite());
        if let (true, Some(value)) = (numeric, finite) {
            return std::borrow::Cow::Owned(ExpressionTerm::DoubleLiteral(value.into()));
        }
    }
    std::borrow::Cow::Borrowed(term)
}

/// rete: the kind of a literal in `cmp_literals`' order. Strings with and without a language
/// tag are one kind, ordered by text, then datatype and tag (as upstream orders them).
fn literal_kind(term: &ExpressionTerm) -> u8 {
    match term {
        ExpressionTerm::FloatLiteral(value) if value.is_nan() => 1,
        ExpressionTerm::DoubleLiteral(value) if value.is_nan() => 1,
        ExpressionTerm::IntegerLiteral(_)
        | ExpressionTerm::DecimalLiteral(_)
        | ExpressionTerm::FloatLiteral(_)
        | ExpressionTerm::DoubleLiteral(_) => 0,
        ExpressionTerm::BooleanLiteral(_) => 2,
        ExpressionTerm::StringLiteral(_) | ExpressionTerm::LangStringLiteral { .. } => 3,
        #[cfg(feature = "sparql-12")]
        ExpressionTerm::DirLangStringLiteral { .. } => 3,
        ExpressionTerm::DateTimeLiteral(_) => 6,
        #[cfg(feature = "sep-0002")]
        ExpressionTerm::DateLiteral(_) => 7,
        #[cfg(feature = "sep-0002")]
        ExpressionTerm::TimeLiteral(_) => 8,
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GYearLiteral(_) => 9,
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GYearMonthLiteral(_) => 10,
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GMonthLiteral(_) => 11,
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GMonthDayLiteral(_) => 12,
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GDayLiteral(_) => 13,
        #[cfg(feature = "sep-0002")]
        ExpressionTerm::DurationLiteral(_)
        | ExpressionTerm::YearMonthDurationLiteral(_)
        | ExpressionTerm::DayTimeDurationLiteral(_) => 14,
        _ => 15,
    }
}

/// rete: where a date, time or duration lies on one line, for `cmp_literals`. A date or time
/// without a timezone is read as UTC (upstream's `<` leaves it unordered against a zoned value
/// within 14 hours, and orders it as this does outside them); a duration is its length from
/// 1696-09-01T00:00:00Z, the first of XSD's four reference points (`<` between a duration of
/// months and one of days is defined only where all four agree, so where it is, this agrees).
/// `None` for other literals and for a duration too long to add.
fn timeline_value(term: &ExpressionTerm) -> Option<Decimal> {
    let bytes = match term {
        ExpressionTerm::DateTimeLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "sep-0002")]
        ExpressionTerm::DateLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "sep-0002")]
        ExpressionTerm::TimeLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GYearLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GYearMonthLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GMonthLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GMonthDayLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "calendar-ext")]
        ExpressionTerm::GDayLiteral(value) => value.to_be_bytes(),
        #[cfg(feature = "sep-0002")]
        ExpressionTerm::DurationLiteral(_)
        | ExpressionTerm::YearMonthDurationLiteral(_)
        | ExpressionTerm::DayTimeDurationLiteral(_) => {
            let duration = match term {
                ExpressionTerm::DurationLiteral(value) => *value,
                ExpressionTerm::YearMonthDurationLiteral(value) => (*value).into(),
                ExpressionTerm::DayTimeDurationLiteral(value) => (*value).into(),
                _ => return None,
            };
            let reference: DateTime = "1696-09-01T00:00:00Z".parse().ok()?;
            reference.checked_add_duration(duration)?.to_be_bytes()
        }
        _ => return None,
    };
    // The first 16 bytes of each of these encodings are its `Timestamp`'s value: seconds on
    // the timeline, as local time when there is no timezone.
    Some(Decimal::from_be_bytes(bytes[..16].try_into().ok()?))
}

#[cfg(feature = "sparql-12")]
fn cmp_triples(a: &ExpressionTriple, b: &ExpressionTriple) -> Ordering {
    match match &a.subject {
        NamedOrBlankNode::BlankNode(a) => match &b.subject {
            NamedOrBlankNode::BlankNode(b) => a.as_str().cmp(b.as_str()),
            NamedOrBlankNode::NamedNode(_) => Ordering::Less,
        },
        NamedOrBlankNode::NamedNode(a) => match &b.subject {
            NamedOrBlankNode::BlankNode(_) => Ordering::Greater,
            NamedOrBlankNode::NamedNode(b) => a.as_str().cmp(b.as_str()),
        },
    } {
        Ordering::Equal => match a.predicate.as_str().cmp(b.predicate.as_str()) {
            Ordering::Equal => cmp_terms(Some(&a.object), Some(&b.object)),
            o => o,
        },
        o => o,
    }
}

enum TupleSelector<T> {
    Constant(T),
    Variable(usize),
    #[cfg(feature = "sparql-12")]
    TriplePattern(Rc<TripleTupleSelector<T>>),
}

impl<T> TupleSelector<T> {
    fn from_ground_term_pattern<'a>(
        term_pattern: &GroundTermPattern,
        variables: &mut Vec<Variable>,
        dataset: &EvalDataset<'a, impl QueryableDataset<'a, InternalTerm = T>>,
    ) -> Result<Self, QueryEvaluationError> {
        Ok(match term_pattern {
            GroundTermPattern::Variable(variable) => {
                Self::Variable(encode_variable(variables, variable))
            }
            GroundTermPattern::NamedNode(term) => {
                Self::Constant(dataset.internalize_term(term.as_ref().into())?)
            }
            GroundTermPattern::Literal(term) => {
                Self::Constant(dataset.internalize_term(term.as_ref().into())?)
            }
            #[cfg(feature = "sparql-12")]
            GroundTermPattern::Triple(triple) => {
                match (
                    Self::from_ground_term_pattern(&triple.subject, variables, dataset)?,
                    Self::from_named_node_pattern(&triple.predicate, variables, dataset)?,
                    Self::from_ground_term_pattern(&triple.object, variables, dataset)?,
                ) {
                    (
                        Self::Constant(subject),
                        Self::Constant(predicate),
                        Self::Constant(object),
                    ) => {
                        // rete: made of its parts as RDF terms (see `get_pattern_value`).
                        let subject = match dataset.externalize_term(subject)? {
                            Term::NamedNode(node) => NamedOrBlankNode::from(node),
                            Term::BlankNode(node) => node.into(),
                            _ => return Err(QueryEvaluationError::InvalidStorageTripleTerm),
                        };
                        let Term::NamedNode(predicate) = dataset.externalize_term(predicate)? else {
                            return Err(QueryEvaluationError::InvalidStorageTripleTerm);
                        };
                        let object = dataset.externalize_term(object)?;
                        Self::Constant(
                            dataset.internalize_term(Triple::new(subject, predicate, object).into())?,
                        )
                    }
                    (subject, predicate, object) => {
                        Self::TriplePattern(Rc::new(TripleTupleSelector {
                            subject,
                            predicate,
                            object,
                        }))
                    }
                }
            }
        })
    }

    fn from_named_node_pattern<'a>(
        named_node_pattern: &NamedNodePattern,
        variables: &mut Vec<Variable>,
        dataset: &EvalDataset<'a, impl QueryableDataset<'a, InternalTerm = T>>,
    ) -> Result<Self, QueryEvaluationError> {
        Ok(match named_node_pattern {
            NamedNodePattern::Variable(variable) => {
                Self::Variable(encode_variable(variables, variable))
            }
            NamedNodePattern::NamedNode(term) => {
                Self::Constant(dataset.internalize_term(term.as_ref().into())?)
            }
        })
    }
}

impl<T: Clone> TupleSelector<T> {
    #[cfg_attr(
        not(feature = "sparql-12"),
        expect(
            unused_lifetimes,
            clippy::unnecessary_wraps,
            clippy::extra_unused_lifetimes
        )
    )]
    fn get_pattern_value<'a>(
        &self,
        tuple: &InternalTuple<T>,
        #[cfg(feature = "sparql-12")] dataset: &EvalDataset<
            'a,
            impl QueryableDataset<'a, InternalTerm = T>,
        >,
    ) -> Result<Option<T>, QueryEvaluationError> {
        Ok(match self {
            Self::Constant(c) => Some(c.clone()),
            Self::Variable(v) => tuple.get(*v).cloned(),
            #[cfg(feature = "sparql-12")]
            Self::TriplePattern(triple) => {
                let Some(subject) = triple.subject.get_pattern_value(tuple, dataset)? else {
                    return Ok(None);
                };
                let Some(predicate) = triple.predicate.get_pattern_value(tuple, dataset)? else {
                    return Ok(None);
                };
                let Some(object) = triple.object.get_pattern_value(tuple, dataset)? else {
                    return Ok(None);
                };
                // rete: the triple term of a pattern is made of its parts as RDF
                // terms, not as values: `<<( :s :p "01"^^xsd:integer )>>` is
                // another term than `<<( :s :p 1 )>>` (RDF 1.2 term equality),
                // and a value would have lost the lexical form.
                let subject = match dataset.externalize_term(subject)? {
                    Term::NamedNode(node) => NamedOrBlankNode::from(node),
                    Term::BlankNode(node) => node.into(),
                    _ => return Err(QueryEvaluationError::InvalidStorageTripleTerm),
                };
                let Term::NamedNode(predicate) = dataset.externalize_term(predicate)? else {
                    return Err(QueryEvaluationError::InvalidStorageTripleTerm);
                };
                let object = dataset.externalize_term(object)?;
                Some(dataset.internalize_term(Triple::new(subject, predicate, object).into())?)
            }
        })
    }
}

impl<T: Clone> TupleSelector<T> {
    /// rete: what a quad pattern asks the dataset for at this position: the value, or for a
    /// triple term with free parts, the bound `QueryableDataset::internal_triple_terms` gives
    /// (nested triple terms inside out), so that the dataset reads only the quads whose term
    /// there can match instead of every quad. `put_pattern_value` still checks each quad.
    #[cfg_attr(
        not(feature = "sparql-12"),
        expect(unused_lifetimes, clippy::extra_unused_lifetimes)
    )]
    fn get_pattern_bound<'a>(
        &self,
        tuple: &InternalTuple<T>,
        #[cfg(feature = "sparql-12")] dataset: &EvalDataset<
            'a,
            impl QueryableDataset<'a, InternalTerm = T>,
        >,
    ) -> Result<Option<T>, QueryEvaluationError> {
        #[cfg(feature = "sparql-12")]
        if let Self::TriplePattern(triple) = self {
            if let Some(value) = self.get_pattern_value(tuple, dataset)? {
                return Ok(Some(value));
            }
            let subject = triple.subject.get_pattern_bound(tuple, dataset)?;
            let predicate = triple.predicate.get_pattern_value(tuple, dataset)?;
            let object = triple.object.get_pattern_bound(tuple, dataset)?;
            return dataset.internal_triple_terms(
                subject.as_ref(),
                predicate.as_ref(),
                object.as_ref(),
            );
        }
        self.get_pattern_value(
            tuple,
            #[cfg(feature = "sparql-12")]
            dataset,
        )
    }
}

impl<T: Clone> Clone for TupleSelector<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Constant(c) => Self::Constant(c.clone()),
            Self::Variable(v) => Self::Variable(*v),
            #[cfg(feature = "sparql-12")]
            Self::TriplePattern(t) => Self::TriplePattern(Rc::clone(t)),
        }
    }
}

/// rete (change 27): a quad pattern's selectors, shared by every lookup of the pattern. Each
/// lookup (a join looks the pattern up once per row of its left side) cloned the four selectors
/// into its iterator, which is boxed: one `Rc` is less to clone, drop, move and allocate.
struct PatternSelectors<T> {
    subject: TupleSelector<T>,
    predicate: TupleSelector<T>,
    object: TupleSelector<T>,
    graph_name: Option<TupleSelector<T>>,
    /// One past the last tuple position the pattern binds: the capacity of each solution it
    /// makes, which would otherwise grow (reallocate) as its values are set.
    width: usize,
    /// rete (change 31): no triple term with variables in it: a position with a value is
    /// matched by that value alone, so a lookup with all four bound binds nothing.
    plain: bool,
}

impl<T> PatternSelectors<T> {
    fn new(
        subject: TupleSelector<T>,
        predicate: TupleSelector<T>,
        object: TupleSelector<T>,
        graph_name: Option<TupleSelector<T>>,
    ) -> Self {
        let width = [&subject, &predicate, &object]
            .into_iter()
            .chain(graph_name.as_ref())
            .map(TupleSelector::width)
            .max()
            .unwrap_or(0);
        let plain = [&subject, &predicate, &object]
            .into_iter()
            .chain(graph_name.as_ref())
            .all(|selector| matches!(selector, TupleSelector::Constant(_) | TupleSelector::Variable(_)));
        Self {
            subject,
            predicate,
            object,
            graph_name,
            width,
            plain,
        }
    }
}

/// rete (change 32): a quad pattern's selectors and the dataset, shared by every lookup of the
/// pattern: a lookup clones this one `Rc` (or none, in a join: [`pattern_join`]) where it cloned
/// the selectors' `Rc` and the dataset's three reference counts into its boxed iterator.
struct PatternLookup<'a, D: QueryableDataset<'a>> {
    selectors: PatternSelectors<D::InternalTerm>,
    dataset: EvalDataset<'a, D>,
}

/// rete (change 32): what one lookup of a quad pattern gives for a row.
enum Lookup<Q, T> {
    /// The row and the pattern's quads, each to bind into a copy of the row.
    Quads(InternalTuple<T>, Q),
    /// One solution: the row itself (a check found its quad, change 31), or an error.
    One(Result<InternalTuple<T>, QueryEvaluationError>),
    Nothing,
}

impl<'a, D: QueryableDataset<'a>> PatternLookup<'a, D> {
    /// Looks the pattern up with the values `from` binds.
    fn start(
        &self,
        from: InternalTuple<D::InternalTerm>,
    ) -> Lookup<
        impl Iterator<Item = Result<InternalQuad<D::InternalTerm>, QueryEvaluationError>> + use<'a, D>,
        D::InternalTerm,
    > {
        let selectors = &self.selectors;
        let dataset = &self.dataset;
        let input_subject = match selectors.subject.get_pattern_bound(
            &from,
            #[cfg(feature = "sparql-12")]
            dataset,
        ) {
            Ok(value) => value,
            Err(e) => return Lookup::One(Err(e)),
        };
        let input_predicate = match selectors.predicate.get_pattern_value(
            &from,
            #[cfg(feature = "sparql-12")]
            dataset,
        ) {
            Ok(value) => value,
            Err(e) => return Lookup::One(Err(e)),
        };
        let input_object = match selectors.object.get_pattern_bound(
            &from,
            #[cfg(feature = "sparql-12")]
            dataset,
        ) {
            Ok(value) => value,
            Err(e) => return Lookup::One(Err(e)),
        };
        let input_graph_name = if let Some(graph_name_selector) = &selectors.graph_name {
            match graph_name_selector.get_pattern_value(
                &from,
                #[cfg(feature = "sparql-12")]
                dataset,
            ) {
                Ok(value) => value,
                Err(e) => return Lookup::One(Err(e)),
            }
            .map(Some)
        } else {
            Some(None) // default graph
        };
        // rete (change 31): every position bound (a join's check of its row): the
        // only solution there can be is the row itself, moved on, not cloned.
        if selectors.plain {
            if let (Some(subject), Some(predicate), Some(object)) =
                (&input_subject, &input_predicate, &input_object)
            {
                if let Some(found) = dataset.contains_quad(
                    subject,
                    predicate,
                    object,
                    input_graph_name.as_ref().map(|g| g.as_ref()),
                ) {
                    return match found {
                        Ok(true) => Lookup::One(Ok(from)),
                        Ok(false) => Lookup::Nothing,
                        Err(e) => Lookup::One(Err(e)),
                    };
                }
            }
        }
        let quads = dataset.internal_quads_for_pattern(
            input_subject.as_ref(),
            input_predicate.as_ref(),
            input_object.as_ref(),
            input_graph_name.as_ref().map(|g| g.as_ref()),
        );
        Lookup::Quads(from, quads)
    }

    /// The solution a quad of a lookup gives: `from` with the quad's values bound, or `None`
    /// when the quad does not match what `from` or the pattern already binds.
    fn solution(
        &self,
        from: &InternalTuple<D::InternalTerm>,
        quad: Result<InternalQuad<D::InternalTerm>, QueryEvaluationError>,
    ) -> Result<Option<InternalTuple<D::InternalTerm>>, QueryEvaluationError> {
        let selectors = &self.selectors;
        let quad = quad?;
        let mut new_tuple = from.clone_with_capacity(selectors.width);
        if !put_pattern_value::<D>(
            &selectors.subject,
            quad.subject,
            &mut new_tuple,
            #[cfg(feature = "sparql-12")]
            &self.dataset,
        )? {
            return Ok(None);
        }
        if !put_pattern_value::<D>(
            &selectors.predicate,
            quad.predicate,
            &mut new_tuple,
            #[cfg(feature = "sparql-12")]
            &self.dataset,
        )? {
            return Ok(None);
        }
        if !put_pattern_value::<D>(
            &selectors.object,
            quad.object,
            &mut new_tuple,
            #[cfg(feature = "sparql-12")]
            &self.dataset,
        )? {
            return Ok(None);
        }
        if let Some(graph_name_selector) = &selectors.graph_name {
            let Some(quad_graph_name) = quad.graph_name else {
                return Err(QueryEvaluationError::UnexpectedDefaultGraph);
            };
            if !put_pattern_value::<D>(
                graph_name_selector,
                quad_graph_name,
                &mut new_tuple,
                #[cfg(feature = "sparql-12")]
                &self.dataset,
            )? {
                return Ok(None);
            }
        }
        Ok(Some(new_tuple))
    }
}

/// rete (change 32): a for-loop join (`LATERAL`) whose right side is a quad pattern, the
/// pattern looked up once per row of `left` inside this one iterator. Through the pattern's
/// evaluator each lookup was a call through its `Rc<dyn Fn>`, a boxed iterator (allocated,
/// called through its vtable for each solution, dropped through it) and clones of the
/// pattern's reference counts; here the lookup's quads are held in place and its solutions
/// made by direct calls. In the Worker's wasm that set-up and the join's `FlatMap` cost 3-5x
/// what they cost natively (issue 14, docs/BENCHMARK.md "Session 24: a join's checks of its
/// rows"). Same solutions in the same order.
#[cfg(feature = "sep-0006")]
fn pattern_join<'a, D: QueryableDataset<'a>>(
    mut left: InternalTuplesIterator<'a, D::InternalTerm>,
    lookup: Rc<PatternLookup<'a, D>>,
) -> impl Iterator<Item = Result<InternalTuple<D::InternalTerm>, QueryEvaluationError>> + 'a {
    // The row being looked up and its quads still to read.
    let mut current = None;
    std::iter::from_fn(move || {
        loop {
            if current.is_none() {
                let row = match left.next()? {
                    Ok(row) => row,
                    Err(e) => return Some(Err(e)),
                };
                match lookup.start(row) {
                    Lookup::Quads(row, quads) => current = Some((row, quads)),
                    Lookup::One(solution) => return Some(solution),
                    Lookup::Nothing => continue,
                }
            }
            if let Some((row, quads)) = &mut current {
                for quad in quads {
                    if let Some(solution) = lookup.solution(row, quad).transpose() {
                        return Some(solution);
                    }
                }
            }
            current = None;
        }
    })
}

impl<T> TupleSelector<T> {
    /// One past the last tuple position this selector binds.
    fn width(&self) -> usize {
        match self {
            Self::Constant(_) => 0,
            Self::Variable(v) => v + 1,
            #[cfg(feature = "sparql-12")]
            Self::TriplePattern(triple) => triple
                .subject
                .width()
                .max(triple.predicate.width())
                .max(triple.object.width()),
        }
    }
}

#[cfg(feature = "sparql-12")]
struct TripleTupleSelector<T> {
    subject: TupleSelector<T>,
    predicate: TupleSelector<T>,
    object: TupleSelector<T>,
}

#[cfg_attr(not(feature = "sparql-12"), expect(clippy::unnecessary_wraps))]
fn put_pattern_value<'a, D: QueryableDataset<'a>>(
    selector: &TupleSelector<D::InternalTerm>,
    value: D::InternalTerm,
    tuple: &mut InternalTuple<D::InternalTerm>,
    #[cfg(feature = "sparql-12")] dataset: &EvalDataset<'a, D>,
) -> Result<bool, QueryEvaluationError> {
    Ok(match selector {
        TupleSelector::Constant(c) => *c == value,
        TupleSelector::Variable(v) => {
            if let Some(old) = tuple.get(*v) {
                value == *old
            } else {
                tuple.set(*v, value);
                true
            }
        }
        #[cfg(feature = "sparql-12")]
        TupleSelector::TriplePattern(triple) => {
            // rete: the parts as RDF terms, not values (see `get_pattern_value`):
            // a variable inside a triple term binds the stored lexical form.
            let Term::Triple(value) = dataset.externalize_term(value)? else {
                return Ok(false);
            };
            let Triple {
                subject,
                predicate,
                object,
            } = *value;
            put_pattern_value(
                &triple.subject,
                dataset.internalize_term(subject.into())?,
                tuple,
                dataset,
            )? && put_pattern_value(
                &triple.predicate,
                dataset.internalize_term(predicate.into())?,
                tuple,
                dataset,
            )? && put_pattern_value(
                &triple.object,
                dataset.internalize_term(object)?,
                tuple,
                dataset,
            )?
        }
    })
}

/// rete: whether `a` and `b` are compatible and share a variable not bound in `outer`.
pub fn are_compatible_and_overlap_outside<T: Clone + Eq>(
    a: &InternalTuple<T>,
    b: &InternalTuple<T>,
    outer: &InternalTuple<T>,
) -> bool {
    let mut found_intersection = false;
    for (position, (a_value, b_value)) in a.iter().zip(b.iter()).enumerate() {
        if let (Some(a_value), Some(b_value)) = (a_value, b_value) {
            if a_value != b_value {
                return false;
            }
            found_intersection |= !outer.contains(position);
        }
    }
    found_intersection
}

pub enum PropertyPath<T> {
    Path(T),
    Reverse(Rc<Self>),
    Sequence(Rc<Self>, Rc<Self>),
    Alternative(Rc<Self>, Rc<Self>),
    ZeroOrMore(Rc<Self>),
    OneOrMore(Rc<Self>),
    ZeroOrOne(Rc<Self>),
    NegatedPropertySet(Rc<[T]>),
}

struct PathEvaluator<'a, D: QueryableDataset<'a>> {
    dataset: EvalDataset<'a, D>,
    /// rete: the terms the path pattern names as its subject or object. A zero-length path
    /// matches such a term to itself in every graph, even one without it (SPARQL 1.1 §18.5:
    /// eval(Path(X:term, ZeroLengthPath, Y))); a node reached through a variable must be a
    /// node of the graph. Upstream required a graph node in both cases.
    query_terms: Rc<[D::InternalTerm]>,
}

impl<'a, D: QueryableDataset<'a>> PathEvaluator<'a, D> {
    fn eval_closed_in_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        start: &D::InternalTerm,
        end: &D::InternalTerm,
        graph_name: Option<&D::InternalTerm>,
    ) -> Result<bool, QueryEvaluationError> {
        Ok(match path {
            PropertyPath::Path(p) => self
                .dataset
                .internal_quads_for_pattern(Some(start), Some(p), Some(end), Some(graph_name))
                .next()
                .transpose()?
                .is_some(),
            PropertyPath::Reverse(p) => self.eval_closed_in_graph(p, end, start, graph_name)?,
            PropertyPath::Sequence(a, b) => self
                .eval_from_in_graph(a, start, graph_name)
                .find_map(|middle| {
                    middle
                        .and_then(|middle| {
                            Ok(self
                                .eval_closed_in_graph(b, &middle, end, graph_name)?
                                .then_some(()))
                        })
                        .transpose()
                })
                .transpose()?
                .is_some(),
            PropertyPath::Alternative(a, b) => {
                self.eval_closed_in_graph(a, start, end, graph_name)?
                    || self.eval_closed_in_graph(b, start, end, graph_name)?
            }
            PropertyPath::ZeroOrMore(p) => {
                if start == end {
                    self.is_subject_or_object_in_graph(start, graph_name)?
                } else {
                    look_in_transitive_closure(
                        self.eval_from_in_graph(p, start, graph_name),
                        move |e| self.eval_from_in_graph(p, &e, graph_name),
                        end,
                    )?
                }
            }
            PropertyPath::OneOrMore(p) => look_in_transitive_closure(
                self.eval_from_in_graph(p, start, graph_name),
                move |e| self.eval_from_in_graph(p, &e, graph_name),
                end,
            )?,
            PropertyPath::ZeroOrOne(p) => {
                if start == end {
                    self.is_subject_or_object_in_graph(start, graph_name)
                } else {
                    self.eval_closed_in_graph(p, start, end, graph_name)
                }?
            }
            PropertyPath::NegatedPropertySet(ps) => self
                .dataset
                .internal_quads_for_pattern(Some(start), None, Some(end), Some(graph_name))
                .find_map(move |t| match t {
                    Ok(t) => {
                        if ps.contains(&t.predicate) {
                            None
                        } else {
                            Some(Ok(()))
                        }
                    }
                    Err(e) => Some(Err(e)),
                })
                .transpose()?
                .is_some(),
        })
    }

    fn eval_closed_in_unknown_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        start: &D::InternalTerm,
        end: &D::InternalTerm,
    ) -> Box<dyn Iterator<Item = Result<Option<D::InternalTerm>, QueryEvaluationError>> + 'a> {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(Some(start), Some(p), Some(end), None)
                    .map(|t| Ok(t?.graph_name)),
            ),
            PropertyPath::Reverse(p) => self.eval_closed_in_unknown_graph(p, end, start),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let b = Rc::clone(b);
                let end = end.clone();
                Box::new(self.eval_from_in_unknown_graph(a, start).flat_map_ok(
                    move |(middle, graph_name)| {
                        eval.eval_closed_in_graph(&b, &middle, &end, graph_name.as_ref())
                            .map(|is_found| is_found.then_some(graph_name))
                            .transpose()
                    },
                ))
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_closed_in_unknown_graph(a, start, end)
                    .chain(self.eval_closed_in_unknown_graph(b, start, end)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                let eval = self.clone();
                let start2 = start.clone();
                let end = end.clone();
                let p = Rc::clone(p);
                self.run_if_term_is_a_dataset_node(start, move |graph_name| {
                    look_in_transitive_closure(
                        Some(Ok(start2.clone())),
                        |e| eval.eval_from_in_graph(&p, &e, graph_name.as_ref()),
                        &end,
                    )
                    .map(|is_found| is_found.then_some(graph_name))
                    .transpose()
                })
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let end = end.clone();
                let p = Rc::clone(p);
                Box::new(
                    self.eval_from_in_unknown_graph(&p, start)
                        .filter_map(move |r| {
                            r.and_then(|(start, graph_name)| {
                                look_in_transitive_closure(
                                    Some(Ok(start)),
                                    |e| eval.eval_from_in_graph(&p, &e, graph_name.as_ref()),
                                    &end,
                                )
                                .map(|is_found| is_found.then_some(graph_name))
                            })
                            .transpose()
                        }),
                )
            }
            PropertyPath::ZeroOrOne(p) => {
                if start == end {
                    self.run_if_term_is_a_dataset_node(start, |graph_name| Some(Ok(graph_name)))
                } else {
                    let eval = self.clone();
                    let start2 = start.clone();
                    let end = end.clone();
                    let p = Rc::clone(p);
                    self.run_if_term_is_a_dataset_node(start, move |graph_name| {
                        eval.eval_closed_in_graph(&p, &start2, &end, graph_name.as_ref())
                            .map(|is_found| is_found.then_some(graph_name))
                            .transpose()
                    })
                }
            }
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(Some(start), None, Some(end), None)
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok(t.graph_name))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn eval_from_in_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        start: &D::InternalTerm,
        graph_name: Option<&D::InternalTerm>,
    ) -> Box<dyn Iterator<Item = Result<D::InternalTerm, QueryEvaluationError>> + 'a> {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(Some(start), Some(p), None, Some(graph_name))
                    .map(|t| Ok(t?.object)),
            ),
            PropertyPath::Reverse(p) => self.eval_to_in_graph(p, start, graph_name),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let b = Rc::clone(b);
                let graph_name2 = graph_name.cloned();
                Box::new(
                    self.eval_from_in_graph(a, start, graph_name)
                        .flat_map_ok(move |middle| {
                            eval.eval_from_in_graph(&b, &middle, graph_name2.as_ref())
                        }),
                )
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_from_in_graph(a, start, graph_name)
                    .chain(self.eval_from_in_graph(b, start, graph_name)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                self.run_if_term_is_a_graph_node(start, graph_name, || {
                    let eval = self.clone();
                    let p = Rc::clone(p);
                    let graph_name2 = graph_name.cloned();
                    transitive_closure(Some(Ok(start.clone())), move |e| {
                        eval.eval_from_in_graph(&p, &e, graph_name2.as_ref())
                    })
                })
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                let graph_name2 = graph_name.cloned();
                Box::new(transitive_closure(
                    self.eval_from_in_graph(&p, start, graph_name),
                    move |e| eval.eval_from_in_graph(&p, &e, graph_name2.as_ref()),
                ))
            }
            PropertyPath::ZeroOrOne(p) => {
                self.run_if_term_is_a_graph_node(start, graph_name, || {
                    hash_deduplicate(
                        once(Ok(start.clone()))
                            .chain(self.eval_from_in_graph(p, start, graph_name)),
                    )
                })
            }
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(Some(start), None, None, Some(graph_name))
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok(t.object))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn eval_from_in_unknown_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        start: &D::InternalTerm,
    ) -> Box<
        dyn Iterator<
                Item = Result<(D::InternalTerm, Option<D::InternalTerm>), QueryEvaluationError>,
            > + 'a,
    > {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(Some(start), Some(p), None, None)
                    .map(|t| {
                        let t = t?;
                        Ok((t.object, t.graph_name))
                    }),
            ),
            PropertyPath::Reverse(p) => self.eval_to_in_unknown_graph(p, start),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let b = Rc::clone(b);
                Box::new(self.eval_from_in_unknown_graph(a, start).flat_map_ok(
                    move |(middle, graph_name)| {
                        eval.eval_from_in_graph(&b, &middle, graph_name.as_ref())
                            .map(move |end| Ok((end?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_from_in_unknown_graph(a, start)
                    .chain(self.eval_from_in_unknown_graph(b, start)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                let start2 = start.clone();
                let eval = self.clone();
                let p = Rc::clone(p);
                self.run_if_term_is_a_dataset_node(start, move |graph_name| {
                    let eval = eval.clone();
                    let p = Rc::clone(&p);
                    let graph_name2 = graph_name.clone();
                    transitive_closure(Some(Ok(start2.clone())), move |e| {
                        eval.eval_from_in_graph(&p, &e, graph_name2.as_ref())
                    })
                    .map(move |e| Ok((e?, graph_name.clone())))
                })
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                Box::new(transitive_closure(
                    self.eval_from_in_unknown_graph(&p, start),
                    move |(e, graph_name)| {
                        eval.eval_from_in_graph(&p, &e, graph_name.as_ref())
                            .map(move |e| Ok((e?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::ZeroOrOne(p) => {
                let eval = self.clone();
                let start2 = start.clone();
                let p = Rc::clone(p);
                self.run_if_term_is_a_dataset_node(start, move |graph_name| {
                    hash_deduplicate(once(Ok(start2.clone())).chain(eval.eval_from_in_graph(
                        &p,
                        &start2,
                        graph_name.as_ref(),
                    )))
                    .map(move |e| Ok((e?, graph_name.clone())))
                })
            }
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(Some(start), None, None, None)
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok((t.object, t.graph_name)))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn eval_to_in_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        end: &D::InternalTerm,
        graph_name: Option<&D::InternalTerm>,
    ) -> Box<dyn Iterator<Item = Result<D::InternalTerm, QueryEvaluationError>> + 'a> {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(None, Some(p), Some(end), Some(graph_name))
                    .map(|t| Ok(t?.subject)),
            ),
            PropertyPath::Reverse(p) => self.eval_from_in_graph(p, end, graph_name),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let a = Rc::clone(a);
                let graph_name2 = graph_name.cloned();
                Box::new(
                    self.eval_to_in_graph(b, end, graph_name)
                        .flat_map_ok(move |middle| {
                            eval.eval_to_in_graph(&a, &middle, graph_name2.as_ref())
                        }),
                )
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_to_in_graph(a, end, graph_name)
                    .chain(self.eval_to_in_graph(b, end, graph_name)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                self.run_if_term_is_a_graph_node(end, graph_name, || {
                    let eval = self.clone();
                    let p = Rc::clone(p);
                    let graph_name2 = graph_name.cloned();
                    transitive_closure(Some(Ok(end.clone())), move |e| {
                        eval.eval_to_in_graph(&p, &e, graph_name2.as_ref())
                    })
                })
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                let graph_name2 = graph_name.cloned();
                Box::new(transitive_closure(
                    self.eval_to_in_graph(&p, end, graph_name),
                    move |e| eval.eval_to_in_graph(&p, &e, graph_name2.as_ref()),
                ))
            }
            PropertyPath::ZeroOrOne(p) => self.run_if_term_is_a_graph_node(end, graph_name, || {
                hash_deduplicate(
                    once(Ok(end.clone())).chain(self.eval_to_in_graph(p, end, graph_name)),
                )
            }),
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(None, None, Some(end), Some(graph_name))
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok(t.subject))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn eval_to_in_unknown_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        end: &D::InternalTerm,
    ) -> Box<
        dyn Iterator<
                Item = Result<(D::InternalTerm, Option<D::InternalTerm>), QueryEvaluationError>,
            > + 'a,
    > {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(None, Some(p), Some(end), None)
                    .map(|t| {
                        let t = t?;
                        Ok((t.subject, t.graph_name))
                    }),
            ),
            PropertyPath::Reverse(p) => self.eval_from_in_unknown_graph(p, end),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let a = Rc::clone(a);
                Box::new(self.eval_to_in_unknown_graph(b, end).flat_map_ok(
                    move |(middle, graph_name)| {
                        eval.eval_to_in_graph(&a, &middle, graph_name.as_ref())
                            .map(move |start| Ok((start?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_to_in_unknown_graph(a, end)
                    .chain(self.eval_to_in_unknown_graph(b, end)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                let end2 = end.clone();
                let eval = self.clone();
                let p = Rc::clone(p);
                self.run_if_term_is_a_dataset_node(end, move |graph_name| {
                    let eval = eval.clone();
                    let p = Rc::clone(&p);
                    let graph_name2 = graph_name.clone();
                    transitive_closure(Some(Ok(end2.clone())), move |e| {
                        eval.eval_to_in_graph(&p, &e, graph_name2.as_ref())
                    })
                    .map(move |e| Ok((e?, graph_name.clone())))
                })
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                Box::new(transitive_closure(
                    self.eval_to_in_unknown_graph(&p, end),
                    move |(e, graph_name)| {
                        eval.eval_to_in_graph(&p, &e, graph_name.as_ref())
                            .map(move |e| Ok((e?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::ZeroOrOne(p) => {
                let eval = self.clone();
                let end2 = end.clone();
                let p = Rc::clone(p);
                self.run_if_term_is_a_dataset_node(end, move |graph_name| {
                    hash_deduplicate(once(Ok(end2.clone())).chain(eval.eval_to_in_graph(
                        &p,
                        &end2,
                        graph_name.as_ref(),
                    )))
                    .map(move |e| Ok((e?, graph_name.clone())))
                })
            }
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(None, None, Some(end), None)
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok((t.subject, t.graph_name)))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn eval_open_in_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
        graph_name: Option<&D::InternalTerm>,
    ) -> Box<
        dyn Iterator<Item = Result<(D::InternalTerm, D::InternalTerm), QueryEvaluationError>> + 'a,
    > {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(None, Some(p), None, Some(graph_name))
                    .map(|t| {
                        let t = t?;
                        Ok((t.subject, t.object))
                    }),
            ),
            PropertyPath::Reverse(p) => Box::new(
                self.eval_open_in_graph(p, graph_name)
                    .map(|t| t.map(|(s, o)| (o, s))),
            ),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let b = Rc::clone(b);
                let graph_name2 = graph_name.cloned();
                Box::new(self.eval_open_in_graph(a, graph_name).flat_map_ok(
                    move |(start, middle)| {
                        eval.eval_from_in_graph(&b, &middle, graph_name2.as_ref())
                            .map(move |end| Ok((start.clone(), end?)))
                    },
                ))
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_open_in_graph(a, graph_name)
                    .chain(self.eval_open_in_graph(b, graph_name)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                let graph_name2 = graph_name.cloned();
                Box::new(transitive_closure(
                    self.get_subject_or_object_identity_pairs_in_graph(graph_name),
                    move |(start, middle)| {
                        eval.eval_from_in_graph(&p, &middle, graph_name2.as_ref())
                            .map(move |end| Ok((start.clone(), end?)))
                    },
                ))
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                let graph_name2 = graph_name.cloned();
                Box::new(transitive_closure(
                    self.eval_open_in_graph(&p, graph_name),
                    move |(start, middle)| {
                        eval.eval_from_in_graph(&p, &middle, graph_name2.as_ref())
                            .map(move |end| Ok((start.clone(), end?)))
                    },
                ))
            }
            PropertyPath::ZeroOrOne(p) => Box::new(hash_deduplicate(
                self.get_subject_or_object_identity_pairs_in_graph(graph_name)
                    .chain(self.eval_open_in_graph(p, graph_name)),
            )),
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(None, None, None, Some(graph_name))
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok((t.subject, t.object)))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn eval_open_in_unknown_graph(
        &self,
        path: &PropertyPath<D::InternalTerm>,
    ) -> Box<
        dyn Iterator<
                Item = Result<
                    (D::InternalTerm, D::InternalTerm, Option<D::InternalTerm>),
                    QueryEvaluationError,
                >,
            > + 'a,
    > {
        match path {
            PropertyPath::Path(p) => Box::new(
                self.dataset
                    .internal_quads_for_pattern(None, Some(p), None, None)
                    .map(|t| {
                        let t = t?;
                        Ok((t.subject, t.object, t.graph_name))
                    }),
            ),
            PropertyPath::Reverse(p) => Box::new(
                self.eval_open_in_unknown_graph(p)
                    .map(|t| t.map(|(s, o, g)| (o, s, g))),
            ),
            PropertyPath::Sequence(a, b) => {
                let eval = self.clone();
                let b = Rc::clone(b);
                Box::new(self.eval_open_in_unknown_graph(a).flat_map_ok(
                    move |(start, middle, graph_name)| {
                        eval.eval_from_in_graph(&b, &middle, graph_name.as_ref())
                            .map(move |end| Ok((start.clone(), end?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::Alternative(a, b) => Box::new(hash_deduplicate(
                self.eval_open_in_unknown_graph(a)
                    .chain(self.eval_open_in_unknown_graph(b)),
            )),
            PropertyPath::ZeroOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                Box::new(transitive_closure(
                    self.get_subject_or_object_identity_pairs_in_dataset(),
                    move |(start, middle, graph_name)| {
                        eval.eval_from_in_graph(&p, &middle, graph_name.as_ref())
                            .map(move |end| Ok((start.clone(), end?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::OneOrMore(p) => {
                let eval = self.clone();
                let p = Rc::clone(p);
                Box::new(transitive_closure(
                    self.eval_open_in_unknown_graph(&p),
                    move |(start, middle, graph_name)| {
                        eval.eval_from_in_graph(&p, &middle, graph_name.as_ref())
                            .map(move |end| Ok((start.clone(), end?, graph_name.clone())))
                    },
                ))
            }
            PropertyPath::ZeroOrOne(p) => Box::new(hash_deduplicate(
                self.get_subject_or_object_identity_pairs_in_dataset()
                    .chain(self.eval_open_in_unknown_graph(p)),
            )),
            PropertyPath::NegatedPropertySet(ps) => {
                let ps = Rc::clone(ps);
                Box::new(
                    self.dataset
                        .internal_quads_for_pattern(None, None, None, None)
                        .filter_map(move |t| match t {
                            Ok(t) => {
                                if ps.contains(&t.predicate) {
                                    None
                                } else {
                                    Some(Ok((t.subject, t.object, t.graph_name)))
                                }
                            }
                            Err(e) => Some(Err(e)),
                        }),
                )
            }
        }
    }

    fn get_subject_or_object_identity_pairs_in_graph(
        &self,
        graph_name: Option<&D::InternalTerm>,
    ) -> impl Iterator<Item = Result<(D::InternalTerm, D::InternalTerm), QueryEvaluationError>>
    + use<'a, D> {
        self.dataset
            .internal_quads_for_pattern(None, None, None, Some(graph_name))
            .flat_map_ok(|t| {
                [
                    Ok((t.subject.clone(), t.subject)),
                    Ok((t.object.clone(), t.object)),
                ]
            })
    }

    fn get_subject_or_object_identity_pairs_in_dataset(
        &self,
    ) -> impl Iterator<
        Item = Result<
            (D::InternalTerm, D::InternalTerm, Option<D::InternalTerm>),
            QueryEvaluationError,
        >,
    > + use<'a, D> {
        self.dataset
            .internal_quads_for_pattern(None, None, None, None)
            .flat_map_ok(|t| {
                [
                    Ok((t.subject.clone(), t.subject, t.graph_name.clone())),
                    Ok((t.object.clone(), t.object, t.graph_name)),
                ]
            })
    }

    fn run_if_term_is_a_graph_node<
        T: 'a,
        I: Iterator<Item = Result<T, QueryEvaluationError>> + 'a,
    >(
        &self,
        term: &D::InternalTerm,
        graph_name: Option<&D::InternalTerm>,
        f: impl FnOnce() -> I,
    ) -> Box<dyn Iterator<Item = Result<T, QueryEvaluationError>> + 'a> {
        match self.is_subject_or_object_in_graph(term, graph_name) {
            Ok(true) => Box::new(f()),
            Ok(false) => {
                Box::new(empty()) // Not in the database
            }
            Err(error) => Box::new(once(Err(error))),
        }
    }

    fn is_subject_or_object_in_graph(
        &self,
        term: &D::InternalTerm,
        graph_name: Option<&D::InternalTerm>,
    ) -> Result<bool, QueryEvaluationError> {
        if self.query_terms.contains(term) {
            return Ok(true); // rete: see `query_terms`
        }
        Ok(self
            .dataset
            .internal_quads_for_pattern(Some(term), None, None, Some(graph_name))
            .next()
            .transpose()?
            .is_some()
            || self
                .dataset
                .internal_quads_for_pattern(None, None, Some(term), Some(graph_name))
                .next()
                .transpose()?
                .is_some())
    }

    fn run_if_term_is_a_dataset_node<
        T: 'a,
        I: IntoIterator<Item = Result<T, QueryEvaluationError>> + 'a,
    >(
        &self,
        term: &D::InternalTerm,
        f: impl FnMut(Option<D::InternalTerm>) -> I + 'a,
    ) -> Box<dyn Iterator<Item = Result<T, QueryEvaluationError>> + 'a> {
        let graph_names = if self.query_terms.contains(term) {
            // rete: see `query_terms`
            self.dataset
                .internal_named_graphs()
                .map(|g| g.map(Some))
                .collect::<Result<FxHashSet<_>, _>>()
        } else {
            self.find_graphs_where_the_node_is_in(term)
                .collect::<Result<FxHashSet<_>, _>>()
        };
        match graph_names {
            Ok(graph_names) => Box::new(graph_names.into_iter().flat_map(f)),
            Err(error) => Box::new(once(Err(error))),
        }
    }

    fn find_graphs_where_the_node_is_in(
        &self,
        term: &D::InternalTerm,
    ) -> impl Iterator<Item = Result<Option<D::InternalTerm>, QueryEvaluationError>> + use<'a, D>
    {
        self.dataset
            .internal_quads_for_pattern(Some(term), None, None, None)
            .chain(
                self.dataset
                    .internal_quads_for_pattern(None, None, Some(term), None),
            )
            .map(|q| Ok(q?.graph_name))
    }
}

impl<'a, D: QueryableDataset<'a>> Clone for PathEvaluator<'a, D> {
    fn clone(&self) -> Self {
        Self {
            dataset: self.dataset.clone(),
            query_terms: Rc::clone(&self.query_terms),
        }
    }
}

struct CartesianProductJoinIterator<'a, T> {
    probe_iter: Peekable<InternalTuplesIterator<'a, T>>,
    built: Vec<InternalTuple<T>>,
    buffered_results: Vec<Result<InternalTuple<T>, QueryEvaluationError>>,
}

impl<T: Clone + Eq> Iterator for CartesianProductJoinIterator<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(result) = self.buffered_results.pop() {
                return Some(result);
            }
            let probe_tuple = match self.probe_iter.next()? {
                Ok(probe_tuple) => probe_tuple,
                Err(error) => return Some(Err(error)),
            };
            for built_tuple in &self.built {
                if let Some(result_tuple) = probe_tuple.combine_with(built_tuple) {
                    self.buffered_results.push(Ok(result_tuple))
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (min, max) = self.probe_iter.size_hint();
        (
            min.saturating_mul(self.built.len()),
            max.map(|v| v.saturating_mul(self.built.len())),
        )
    }
}

/// rete: the rows of a join under a step marker, each counted by the dataset
/// ([`QueryableDataset::internal_step`], change 29); a row the count refuses becomes its error.
struct SteppedIterator<'a, D: QueryableDataset<'a>, I> {
    inner: I,
    dataset: EvalDataset<'a, D>,
}

impl<'a, D: QueryableDataset<'a>, I> Iterator for SteppedIterator<'a, D, I>
where
    I: Iterator<Item = Result<InternalTuple<D::InternalTerm>, QueryEvaluationError>>,
{
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.inner.next()? {
            Ok(tuple) => self.dataset.step().map(|()| tuple),
            Err(error) => Err(error),
        })
    }
}

/// rete: whether the operator of `pattern` counts its own rows under a step marker (change 29).
fn counts_its_rows(pattern: &GraphPattern) -> bool {
    match pattern {
        GraphPattern::Join { .. } | GraphPattern::LeftJoin { .. } => true,
        #[cfg(feature = "sep-0006")]
        GraphPattern::Lateral { .. } => true,
        _ => false,
    }
}

/// rete: `rows` boxed, counted when `steps` holds the dataset (change 29).
fn stepped<'a, D: QueryableDataset<'a>>(
    steps: &Option<EvalDataset<'a, D>>,
    rows: impl Iterator<Item = Result<InternalTuple<D::InternalTerm>, QueryEvaluationError>> + 'a,
) -> InternalTuplesIterator<'a, D::InternalTerm> {
    match steps {
        Some(dataset) => Box::new(SteppedIterator {
            inner: rows,
            dataset: dataset.clone(),
        }),
        None => Box::new(rows),
    }
}

struct HashJoinIterator<'a, T> {
    probe_iter: Peekable<InternalTuplesIterator<'a, T>>,
    built: InternalTupleSet<T>,
    buffered_results: Vec<Result<InternalTuple<T>, QueryEvaluationError>>,
}

impl<T: Clone + Eq + Hash> Iterator for HashJoinIterator<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(result) = self.buffered_results.pop() {
                return Some(result);
            }
            let probe_tuple = match self.probe_iter.next()? {
                Ok(probe_tuple) => probe_tuple,
                Err(error) => return Some(Err(error)),
            };
            self.buffered_results.extend(
                self.built
                    .get(&probe_tuple)
                    .iter()
                    .filter_map(|built_tuple| probe_tuple.combine_with(built_tuple).map(Ok)),
            )
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (
            0,
            self.probe_iter
                .size_hint()
                .1
                .map(|v| v.saturating_mul(self.built.len())),
        )
    }
}

struct HashLeftJoinIterator<'a, T> {
    left_iter: InternalTuplesIterator<'a, T>,
    right: InternalTupleSet<T>,
    buffered_results: Vec<Result<InternalTuple<T>, QueryEvaluationError>>,
    expression: Rc<dyn Fn(&InternalTuple<T>) -> Option<bool> + 'a>,
}

impl<T: Clone + Eq + Hash> Iterator for HashLeftJoinIterator<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(result) = self.buffered_results.pop() {
                return Some(result);
            }
            let left_tuple = match self.left_iter.next()? {
                Ok(left_tuple) => left_tuple,
                Err(error) => return Some(Err(error)),
            };
            self.buffered_results.extend(
                self.right
                    .get(&left_tuple)
                    .iter()
                    .filter_map(|right_tuple| left_tuple.combine_with(right_tuple))
                    .filter(|tuple| (self.expression)(tuple).unwrap_or(false))
                    .map(Ok),
            );
            if self.buffered_results.is_empty() {
                // We have not manage to join with anything
                return Some(Ok(left_tuple));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (
            0,
            self.left_iter
                .size_hint()
                .1
                .map(|v| v.saturating_mul(self.right.len())),
        )
    }
}

#[cfg(feature = "sep-0006")]
struct ForLoopLeftJoinIterator<'a, T> {
    right_evaluator: InternalTupleEvaluator<'a, T>,
    left_iter: InternalTuplesIterator<'a, T>,
    current_right: InternalTuplesIterator<'a, T>,
    left_tuple_to_yield: Option<InternalTuple<T>>,
}

#[cfg(feature = "sep-0006")]
impl<T: Clone> Iterator for ForLoopLeftJoinIterator<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(tuple) = self.current_right.next() {
                if tuple.is_ok() {
                    // No need to yield left, we have a tuple combined with right
                    self.left_tuple_to_yield = None;
                }
                return Some(tuple);
            }
            if let Some(left_tuple) = self.left_tuple_to_yield.take() {
                return Some(Ok(left_tuple));
            }
            let left_tuple = match self.left_iter.next()? {
                Ok(left_tuple) => left_tuple,
                Err(error) => return Some(Err(error)),
            };
            self.current_right = (self.right_evaluator)(left_tuple.clone());
            self.left_tuple_to_yield = Some(left_tuple);
        }
    }
}

struct UnionIterator<'a, T> {
    plans: Vec<Rc<dyn Fn(InternalTuple<T>) -> InternalTuplesIterator<'a, T> + 'a>>,
    input: InternalTuple<T>,
    current_iterator: InternalTuplesIterator<'a, T>,
    current_plan: usize,
}

impl<T: Clone> Iterator for UnionIterator<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(tuple) = self.current_iterator.next() {
                return Some(tuple);
            }
            if self.current_plan >= self.plans.len() {
                return None;
            }
            self.current_iterator = self.plans[self.current_plan](self.input.clone());
            self.current_plan += 1;
        }
    }
}

struct ConsecutiveDeduplication<'a, T> {
    inner: InternalTuplesIterator<'a, T>,
    current: Option<InternalTuple<T>>,
}

impl<T: Eq> Iterator for ConsecutiveDeduplication<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        // Basic idea. We buffer the previous result and we only emit it when we know the next one or it's the end
        loop {
            if let Some(next) = self.inner.next() {
                match next {
                    Ok(next) => match self.current.take() {
                        Some(current) if current != next => {
                            // We found a relevant value
                            self.current = Some(next);
                            return Some(Ok(current));
                        }
                        _ => {
                            //  We discard the value and move to the next one
                            self.current = Some(next);
                        }
                    },
                    Err(error) => return Some(Err(error)), // We swap but it's fine. It's an error.
                }
            } else {
                return self.current.take().map(Ok);
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (min, max) = self.inner.size_hint();
        ((min != 0).into(), max)
    }
}

struct ConstructIterator<'a, D: QueryableDataset<'a>> {
    eval: SimpleEvaluator<'a, D>,
    iter: InternalTuplesIterator<'a, D::InternalTerm>,
    template: Vec<TripleTemplate>,
    /// rete: how each template's triples are known in the duplicate check (change 13).
    keys: Vec<ConstructKey<D::InternalTerm>>,
    buffered_results: Vec<Result<Triple, QueryEvaluationError>>,
    /// rete: the triples emitted, as their templates' groups and the
    /// dataset's terms (change 13).
    already_emitted_results: FxHashMap<(usize, [Option<D::InternalTerm>; 3]), ()>,
    bnodes: Vec<BlankNode>,
    /// rete: the current solution's terms by variable, each built once for all the
    /// templates that use it (change 18).
    solution_terms: Vec<Option<Term>>,
    /// rete: per template, whether its subject, predicate and object is the last
    /// use of its variable: the term is moved there, not cloned (change 22).
    last_uses: Vec<[bool; 3]>,
}

/// rete: which positions of the templates (in the order they are built) are the
/// last use of their variable (change 22). A variable in a triple term is never
/// moved (a use there counts, so a plain use before it is not the last one). A
/// term moved too early would only be built again.
fn last_uses(template: &[TripleTemplate]) -> Vec<[bool; 3]> {
    fn used(value: &TripleTemplateValue, seen: &mut FxHashSet<usize>) -> bool {
        match value {
            TripleTemplateValue::Variable(v) => seen.insert(*v),
            TripleTemplateValue::Constant(_) | TripleTemplateValue::BlankNode(_) => false,
            #[cfg(feature = "sparql-12")]
            TripleTemplateValue::Triple(triple) => {
                for value in [&triple.subject, &triple.predicate, &triple.object] {
                    used(value, seen);
                }
                false
            }
        }
    }
    let mut seen = FxHashSet::default();
    let mut last_uses = vec![[false; 3]; template.len()];
    for (triple, last) in template.iter().zip(&mut last_uses).rev() {
        last[2] = used(&triple.object, &mut seen);
        last[1] = used(&triple.predicate, &mut seen);
        last[0] = used(&triple.subject, &mut seen);
    }
    last_uses
}

impl<'a, D: QueryableDataset<'a>> Iterator for ConstructIterator<'a, D> {
    type Item = Result<Triple, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(result) = self.buffered_results.pop() {
                return Some(result);
            }
            {
                let tuple = match self.iter.next()? {
                    Ok(tuple) => tuple,
                    Err(error) => return Some(Err(error)),
                };
                for ((template, key), last) in
                    self.template.iter().zip(&self.keys).zip(&self.last_uses)
                {
                    // rete: a triple already emitted is known by the dataset's
                    // terms, before its terms are built (change 13).
                    let entry = construct_key(template, key, &tuple)
                        .map(|key| self.already_emitted_results.entry(key));
                    if matches!(entry, Some(Entry::Occupied(_))) {
                        continue;
                    }
                    if let (Some(subject), Some(predicate), Some(object)) = (
                        get_triple_template_value(
                            &template.subject,
                            last[0],
                            &tuple,
                            &mut self.bnodes,
                            &mut self.solution_terms,
                            &self.eval.dataset,
                        )
                        .and_then(|t| t.try_into().ok()),
                        get_triple_template_value(
                            &template.predicate,
                            last[1],
                            &tuple,
                            &mut self.bnodes,
                            &mut self.solution_terms,
                            &self.eval.dataset,
                        )
                        .and_then(|t| t.try_into().ok()),
                        get_triple_template_value(
                            &template.object,
                            last[2],
                            &tuple,
                            &mut self.bnodes,
                            &mut self.solution_terms,
                            &self.eval.dataset,
                        ),
                    ) {
                        let triple = Triple {
                            subject,
                            predicate,
                            object,
                        };
                        // We allocate new blank nodes for each solution,
                        // triples with blank nodes are likely to be new.
                        #[cfg(feature = "sparql-12")]
                        let new_triple = triple.subject.is_blank_node()
                            || triple.object.is_blank_node()
                            || triple.object.is_triple()
                            || emitted_first(entry);
                        #[cfg(not(feature = "sparql-12"))]
                        let new_triple = triple.subject.is_blank_node()
                            || triple.object.is_blank_node()
                            || emitted_first(entry);
                        if new_triple {
                            self.buffered_results.push(Ok(triple));
                            if self.already_emitted_results.len() > 1024 * 1024 {
                                // We don't want to have a too big memory impact
                                self.already_emitted_results.clear();
                            }
                        }
                    }
                }
                self.bnodes.clear(); // We do not reuse blank nodes
                self.solution_terms.clear();
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (min, max) = self.iter.size_hint();
        (
            min.saturating_mul(self.template.len()),
            max.map(|v| v.saturating_mul(self.template.len())),
        )
    }
}

pub struct TripleTemplate {
    pub subject: TripleTemplateValue,
    pub predicate: TripleTemplateValue,
    pub object: TripleTemplateValue,
}

pub enum TripleTemplateValue {
    Constant(Term),
    BlankNode(usize),
    Variable(usize),
    #[cfg(feature = "sparql-12")]
    Triple(Box<TripleTemplate>),
}

impl TripleTemplateValue {
    #[cfg_attr(not(feature = "sparql-12"), expect(clippy::unnecessary_wraps))]
    fn from_term_or_variable(
        term_or_variable: &TermPattern,
        variables: &mut Vec<Variable>,
        bnodes: &mut Vec<BlankNode>,
    ) -> Option<Self> {
        Some(match term_or_variable {
            TermPattern::Variable(variable) => Self::Variable(encode_variable(variables, variable)),
            TermPattern::NamedNode(node) => Self::Constant(node.clone().into()),
            TermPattern::BlankNode(bnode) => Self::BlankNode(bnode_key(bnodes, bnode)),
            TermPattern::Literal(literal) => Self::Constant(literal.clone().into()),
            #[cfg(feature = "sparql-12")]
            TermPattern::Triple(triple) => {
                match (
                    Self::from_term_or_variable(&triple.subject, variables, bnodes)?,
                    Self::from_named_node_or_variable(&triple.predicate, variables),
                    Self::from_term_or_variable(&triple.object, variables, bnodes)?,
                ) {
                    (
                        Self::Constant(subject),
                        Self::Constant(predicate),
                        Self::Constant(object),
                    ) => Self::Constant(
                        Triple {
                            subject: subject.try_into().ok()?,
                            predicate: predicate.try_into().ok()?,
                            object,
                        }
                        .into(),
                    ),
                    (subject, predicate, object) => {
                        TripleTemplateValue::Triple(Box::new(TripleTemplate {
                            subject,
                            predicate,
                            object,
                        }))
                    }
                }
            }
        })
    }

    fn from_named_node_or_variable(
        named_node_or_variable: &NamedNodePattern,
        variables: &mut Vec<Variable>,
    ) -> TripleTemplateValue {
        match named_node_or_variable {
            NamedNodePattern::Variable(variable) => {
                Self::Variable(encode_variable(variables, variable))
            }
            NamedNodePattern::NamedNode(term) => Self::Constant(term.clone().into()),
        }
    }
}

/// rete (change 13): how a CONSTRUCT template's triples are told apart in
/// the duplicate check. A template whose triples no other template can
/// produce (each other one has a different constant in some position) is
/// its own group, and its constants are left out of the key: they are the
/// same in every triple it makes. The others share a group and are keyed by
/// their constants too, as the dataset's terms.
struct ConstructKey<T> {
    /// The template's number when alone, else `usize::MAX`.
    group: usize,
    /// The constants as the dataset's terms (only outside a group of one).
    constants: [Option<T>; 3],
}

/// rete (change 13): whether two templates hold different constants in some
/// position, so that no triple comes from both.
fn constants_differ(a: &TripleTemplate, b: &TripleTemplate) -> bool {
    [(&a.subject, &b.subject), (&a.predicate, &b.predicate), (&a.object, &b.object)]
        .into_iter()
        .any(|pair| matches!(pair, (TripleTemplateValue::Constant(x), TripleTemplateValue::Constant(y)) if x != y))
}

/// rete (change 13): a template's triple for one solution as its group and
/// the dataset's terms, `None` when a position is a blank node or a triple
/// term (such triples are not checked for duplicates) or is unbound.
fn construct_key<T: Clone>(
    template: &TripleTemplate,
    key: &ConstructKey<T>,
    tuple: &InternalTuple<T>,
) -> Option<(usize, [Option<T>; 3])> {
    let value = |value: &TripleTemplateValue, constant: &Option<T>| match value {
        TripleTemplateValue::Constant(_) => Some(constant.clone()),
        TripleTemplateValue::Variable(v) => Some(Some(tuple.get(*v)?.clone())),
        _ => None,
    };
    Some((
        key.group,
        [
            value(&template.subject, &key.constants[0])?,
            value(&template.predicate, &key.constants[1])?,
            value(&template.object, &key.constants[2])?,
        ],
    ))
}

/// rete (change 13): records a triple's key, if it has one; the triple is new.
fn emitted_first<K>(entry: Option<Entry<'_, K, ()>>) -> bool {
    if let Some(Entry::Vacant(vacant)) = entry {
        vacant.insert(());
    }
    true
}

/// rete: `last`: the last use of a variable's term in this solution, moved out of
/// `terms` (change 22).
fn get_triple_template_value<'a, D: QueryableDataset<'a>>(
    selector: &TripleTemplateValue,
    last: bool,
    tuple: &InternalTuple<D::InternalTerm>,
    bnodes: &mut Vec<BlankNode>,
    terms: &mut Vec<Option<Term>>,
    dataset: &EvalDataset<'a, D>,
) -> Option<Term> {
    match selector {
        TripleTemplateValue::Constant(term) => Some(term.clone()),
        TripleTemplateValue::Variable(v) => {
            // rete: built once per solution (change 18), moved at its last use (change 22).
            if let Some(slot @ Some(_)) = terms.get_mut(*v) {
                return if last { slot.take() } else { slot.clone() };
            }
            let t = tuple.get(*v)?;
            let term = dataset.externalize_term(t.clone()).ok()?; // TODO: raise error
            if !last {
                if *v >= terms.len() {
                    terms.resize(*v + 1, None);
                }
                terms[*v] = Some(term.clone());
            }
            Some(term)
        }
        TripleTemplateValue::BlankNode(bnode) => {
            if *bnode >= bnodes.len() {
                bnodes.resize_with(*bnode + 1, BlankNode::default)
            }
            Some(bnodes[*bnode].clone().into())
        }
        #[cfg(feature = "sparql-12")]
        TripleTemplateValue::Triple(triple) => Some(
            Triple {
                subject: get_triple_template_value(&triple.subject, false, tuple, bnodes, terms, dataset)?
                    .try_into()
                    .ok()?,
                predicate: get_triple_template_value(&triple.predicate, false, tuple, bnodes, terms, dataset)?
                    .try_into()
                    .ok()?,
                object: get_triple_template_value(&triple.object, false, tuple, bnodes, terms, dataset)?,
            }
            .into(),
        ),
    }
}

struct DescribeIterator<'a, D: QueryableDataset<'a>> {
    eval: SimpleEvaluator<'a, D>,
    tuples_to_describe: InternalTuplesIterator<'a, D::InternalTerm>,
    nodes_described: FxHashSet<D::InternalTerm>,
    nodes_to_describe: Vec<D::InternalTerm>,
    quads:
        Box<dyn Iterator<Item = Result<InternalQuad<D::InternalTerm>, QueryEvaluationError>> + 'a>,
}

impl<'a, D: QueryableDataset<'a>> Iterator for DescribeIterator<'a, D> {
    type Item = Result<Triple, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(quad) = self.quads.next() {
                let quad = match quad {
                    Ok(quad) => quad,
                    Err(error) => return Some(Err(error)),
                };
                // We yield the triple
                let subject = match self.eval.dataset.externalize_term(quad.subject) {
                    Ok(t) => t,
                    Err(e) => return Some(Err(e)),
                };
                let predicate = match self.eval.dataset.externalize_term(quad.predicate) {
                    Ok(t) => t,
                    Err(e) => return Some(Err(e)),
                };
                let object = match self.eval.dataset.externalize_term(quad.object.clone()) {
                    Ok(t) => t,
                    Err(e) => return Some(Err(e)),
                };
                // If there is a blank node object, we need to describe it too
                if object.is_blank_node() && self.nodes_described.insert(quad.object.clone()) {
                    self.nodes_to_describe.push(quad.object);
                }
                return Some(Ok(Triple {
                    subject: subject.try_into().ok()?,
                    predicate: predicate.try_into().ok()?,
                    object,
                }));
            }
            if let Some(node_to_describe) = self.nodes_to_describe.pop() {
                // We have a new node to describe
                self.quads = Box::new(self.eval.dataset.internal_quads_for_pattern(
                    Some(&node_to_describe),
                    None,
                    None,
                    Some(None),
                ));
            } else {
                let tuple = match self.tuples_to_describe.next()? {
                    Ok(tuple) => tuple,
                    Err(error) => return Some(Err(error)),
                };
                for node in tuple.into_iter().flatten() {
                    if self.nodes_described.insert(node.clone()) {
                        self.nodes_to_describe.push(node);
                    }
                }
            }
        }
    }
}

fn transitive_closure<T: Clone + Eq + Hash, E, NI: Iterator<Item = Result<T, E>>>(
    start: impl IntoIterator<Item = Result<T, E>>,
    mut next: impl FnMut(T) -> NI,
) -> impl Iterator<Item = Result<T, E>> {
    let mut errors = Vec::new();
    let mut todo = start
        .into_iter()
        .filter_map(|e| match e {
            Ok(e) => Some(e),
            Err(e) => {
                errors.push(e);
                None
            }
        })
        .collect::<Vec<_>>();
    let mut all = todo.iter().cloned().collect::<FxHashSet<_>>();
    while let Some(e) = todo.pop() {
        for e in next(e) {
            match e {
                Ok(e) => {
                    if all.insert(e.clone()) {
                        todo.push(e)
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }
    errors.into_iter().map(Err).chain(all.into_iter().map(Ok))
}

fn look_in_transitive_closure<T: Clone + Eq + Hash, E, NI: Iterator<Item = Result<T, E>>>(
    start: impl IntoIterator<Item = Result<T, E>>,
    mut next: impl FnMut(T) -> NI,
    target: &T,
) -> Result<bool, E> {
    let mut todo = start.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut all = todo.iter().cloned().collect::<FxHashSet<_>>();
    while let Some(e) = todo.pop() {
        if e == *target {
            return Ok(true);
        }
        for e in next(e) {
            let e = e?;
            if all.insert(e.clone()) {
                todo.push(e);
            }
        }
    }
    Ok(false)
}

fn hash_deduplicate<T: Eq + Hash + Clone, E>(
    iter: impl Iterator<Item = Result<T, E>>,
) -> impl Iterator<Item = Result<T, E>> {
    let mut already_seen = FxHashSet::with_capacity_and_hasher(iter.size_hint().0, FxBuildHasher);
    iter.filter(move |e| {
        if let Ok(e) = e {
            if already_seen.contains(e) {
                false
            } else {
                already_seen.insert(e.clone());
                true
            }
        } else {
            true
        }
    })
}

trait ResultIterator<T, E>: Iterator<Item = Result<T, E>> + Sized {
    fn flat_map_ok<O, F: FnMut(T) -> U, U: IntoIterator<Item = Result<O, E>>>(
        self,
        f: F,
    ) -> FlatMapOk<T, E, O, Self, F, U>;
}

impl<T, E, I: Iterator<Item = Result<T, E>> + Sized> ResultIterator<T, E> for I {
    #[inline]
    fn flat_map_ok<O, F: FnMut(T) -> U, U: IntoIterator<Item = Result<O, E>>>(
        self,
        f: F,
    ) -> FlatMapOk<T, E, O, Self, F, U> {
        FlatMapOk {
            inner: self,
            f,
            current: None,
        }
    }
}

struct FlatMapOk<
    T,
    E,
    O,
    I: Iterator<Item = Result<T, E>>,
    F: FnMut(T) -> U,
    U: IntoIterator<Item = Result<O, E>>,
> {
    inner: I,
    f: F,
    current: Option<U::IntoIter>,
}

impl<
    T,
    E,
    O,
    I: Iterator<Item = Result<T, E>>,
    F: FnMut(T) -> U,
    U: IntoIterator<Item = Result<O, E>>,
> Iterator for FlatMapOk<T, E, O, I, F, U>
{
    type Item = Result<O, E>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(current) = &mut self.current {
                if let Some(next) = current.next() {
                    return Some(next);
                }
            }
            self.current = None;
            match self.inner.next()? {
                Ok(e) => self.current = Some((self.f)(e).into_iter()),
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

enum ComparatorFunction<'a, T> {
    Asc(Rc<dyn Fn(&InternalTuple<T>) -> Option<ExpressionTerm> + 'a>),
    Desc(Rc<dyn Fn(&InternalTuple<T>) -> Option<ExpressionTerm> + 'a>),
}

struct InternalTupleSet<T> {
    key: Vec<usize>,
    map: FxHashMap<u64, Vec<InternalTuple<T>>>,
    len: usize,
}

impl<T> InternalTupleSet<T> {
    fn new(key: Vec<usize>) -> Self {
        Self {
            key,
            map: FxHashMap::default(),
            len: 0,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Hash> InternalTupleSet<T> {
    fn insert(&mut self, tuple: InternalTuple<T>) {
        self.map
            .entry(self.tuple_key(&tuple))
            .or_default()
            .push(tuple);
        self.len += 1;
    }

    fn get(&self, tuple: &InternalTuple<T>) -> &[InternalTuple<T>] {
        self.map.get(&self.tuple_key(tuple)).map_or(&[], |v| v)
    }

    fn tuple_key(&self, tuple: &InternalTuple<T>) -> u64 {
        let mut hasher = FxHasher::default();
        for v in &self.key {
            if let Some(val) = tuple.get(*v) {
                val.hash(&mut hasher);
            }
        }
        hasher.finish()
    }
}

impl<T: Hash> Extend<InternalTuple<T>> for InternalTupleSet<T> {
    fn extend<I: IntoIterator<Item = InternalTuple<T>>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.map.reserve(iter.size_hint().0);
        for tuple in iter {
            self.insert(tuple);
        }
    }
}

struct StatsIterator<'a, T> {
    inner: InternalTuplesIterator<'a, T>,
    stats: Rc<EvalNodeWithStats>,
}

impl<T> Iterator for StatsIterator<'_, T> {
    type Item = Result<InternalTuple<T>, QueryEvaluationError>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = Timer::now();
        let result = self.inner.next();
        let duration = start.elapsed()?;
        self.stats.exec_duration.set(
            self.stats
                .exec_duration
                .get()
                .and_then(|d| d.checked_add(duration)),
        );
        if matches!(result, Some(Ok(_))) {
            self.stats.exec_count.set(self.stats.exec_count.get() + 1);
        }
        result
    }
}

pub struct EvalNodeWithStats {
    pub label: String,
    pub children: Vec<Rc<EvalNodeWithStats>>,
    pub exec_count: Cell<usize>,
    pub exec_duration: Cell<Option<DayTimeDuration>>,
}

impl EvalNodeWithStats {
    pub(crate) fn empty() -> Self {
        Self {
            label: String::new(),
            children: Vec::new(),
            exec_count: Cell::new(0),
            exec_duration: Cell::new(None),
        }
    }

    pub fn json_node(
        &self,
        serializer: &mut WriterJsonSerializer<impl io::Write>,
        with_stats: bool,
    ) -> io::Result<()> {
        serializer.serialize_event(JsonEvent::StartObject)?;
        serializer.serialize_event(JsonEvent::ObjectKey("name".into()))?;
        serializer.serialize_event(JsonEvent::String((&self.label).into()))?;
        if with_stats {
            serializer.serialize_event(JsonEvent::ObjectKey("number of results".into()))?;
            serializer
                .serialize_event(JsonEvent::Number(self.exec_count.get().to_string().into()))?;
            if let Some(duration) = self.exec_duration.get() {
                serializer.serialize_event(JsonEvent::ObjectKey("duration in seconds".into()))?;
                serializer
                    .serialize_event(JsonEvent::Number(duration.as_seconds().to_string().into()))?;
            }
        }
        serializer.serialize_event(JsonEvent::ObjectKey("children".into()))?;
        serializer.serialize_event(JsonEvent::StartArray)?;
        for child in &self.children {
            child.json_node(serializer, with_stats)?;
        }
        serializer.serialize_event(JsonEvent::EndArray)?;
        serializer.serialize_event(JsonEvent::EndObject)
    }
}

impl fmt::Debug for EvalNodeWithStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut obj = f.debug_struct("Node");
        obj.field("name", &self.label);
        if let Some(exec_duration) = self.exec_duration.get() {
            obj.field("number of results", &self.exec_count.get());
            obj.field(
                "duration in seconds",
                &f32::from(Float::from(exec_duration.as_seconds())),
            );
        }
        if !self.children.is_empty() {
            obj.field("children", &self.children);
        }
        obj.finish()
    }
}

fn eval_node_label(node: &GraphPattern) -> String {
    match node {
        GraphPattern::Distinct { .. } => "Distinct(Hash)".to_owned(),
        GraphPattern::Extend {
            expression,
            variable,
            ..
        } => format!(
            "Extend({} -> {variable})",
            FormattableExpression(expression)
        ),
        GraphPattern::Filter { expression, .. } => {
            format!("Filter({})", FormattableExpression(expression))
        }
        GraphPattern::Graph { graph_name } => format!("Graph({graph_name})"),
        GraphPattern::Group {
            variables,
            aggregates,
            ..
        } => {
            format!(
                "Aggregate({})",
                format_list(variables.iter().map(ToString::to_string).chain(
                    aggregates.iter().map(|(v, agg)| format!(
                        "{} -> {v}",
                        spargebra::algebra::AggregateExpression::from(agg)
                    ))
                ))
            )
        }
        GraphPattern::Join { algorithm, .. } => match algorithm {
            JoinAlgorithm::HashBuildLeftProbeRight { keys } => format!(
                "Join(HashBuildLeftProbeRight, keys = {})",
                format_list(keys)
            ),
        },
        #[cfg(feature = "sep-0006")]
        GraphPattern::Lateral { right, .. } => {
            if let GraphPattern::LeftJoin {
                left: nested_left,
                expression,
                ..
            } = right.as_ref()
            {
                if nested_left.is_empty_singleton() {
                    // We are in a ForLoopLeftJoin
                    return format!(
                        "ForLoopLeftJoin(expression = {})",
                        FormattableExpression(expression)
                    );
                }
            }
            "Lateral".to_owned()
        }
        GraphPattern::LeftJoin {
            algorithm,
            expression,
            ..
        } => match algorithm {
            LeftJoinAlgorithm::HashBuildRightProbeLeft { keys } => format!(
                "LeftJoin(HashBuildRightProbeLeft, keys = {}, expression = {})",
                format_list(keys),
                FormattableExpression(expression)
            ),
        },
        GraphPattern::Minus { algorithm, .. } => match algorithm {
            MinusAlgorithm::HashBuildRightProbeLeft { keys } => format!(
                "AntiJoin(HashBuildRightProbeLeft, keys = {})",
                format_list(keys)
            ),
        },
        GraphPattern::OrderBy { expression, .. } => {
            format!(
                "Sort({})",
                format_list(expression.iter().map(FormattableOrderExpression))
            )
        }
        GraphPattern::Path {
            subject,
            path,
            object,
            graph_name,
        } => {
            if let Some(graph_name) = graph_name {
                format!("Path({subject} {path} {object} {graph_name})")
            } else {
                format!("Path({subject} {path} {object})")
            }
        }
        GraphPattern::Project { variables, .. } => {
            format!("Project({})", format_list(variables))
        }
        GraphPattern::QuadPattern {
            subject,
            predicate,
            object,
            graph_name,
        } => {
            if let Some(graph_name) = graph_name {
                format!("QuadPattern({subject} {predicate} {object} {graph_name})")
            } else {
                format!("QuadPattern({subject} {predicate} {object})")
            }
        }
        GraphPattern::Reduced { .. } => "Reduced".to_owned(),
        GraphPattern::Service { name, silent, .. } => {
            if *silent {
                format!("Service({name}, Silent)")
            } else {
                format!("Service({name})")
            }
        }
        GraphPattern::Slice { start, length, .. } => {
            if let Some(length) = length {
                format!("Slice(start = {start}, length = {length})")
            } else {
                format!("Slice(start = {start})")
            }
        }
        GraphPattern::Union { .. } => "Union".to_owned(),
        GraphPattern::Values {
            variables,
            bindings,
        } => {
            format!(
                "StaticBindings(({}), ({}))",
                format_list(variables),
                format_list(bindings.iter().map(|b| {
                    format!(
                        "({})",
                        format_list(b.iter().map(|t| {
                            t.as_ref()
                                .map_or_else(|| "UNDEF".into(), GroundTerm::to_string)
                        }))
                    )
                }))
            )
        }
    }
}

struct FormattableExpression<'a>(&'a Expression);

impl fmt::Display for FormattableExpression<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if spargebra::algebra::Expression::from(self.0).fmt(f).is_err() {
            f.write_char('?')?;
        }
        Ok(())
    }
}

struct FormattableOrderExpression<'a>(&'a OrderExpression);

impl fmt::Display for FormattableOrderExpression<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            OrderExpression::Asc(expression) => {
                write!(f, "ASC({})", FormattableExpression(expression))
            }
            OrderExpression::Desc(expression) => {
                write!(f, "DESC({})", FormattableExpression(expression))
            }
        }
    }
}

fn format_list<T: ToString>(values: impl IntoIterator<Item = T>) -> String {
    values
        .into_iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub struct Timer {
    start: DateTime,
}

impl Timer {
    pub fn now() -> Self {
        Self {
            start: DateTime::now(),
        }
    }

    pub fn elapsed(&self) -> Option<DayTimeDuration> {
        DateTime::now().checked_sub(self.start)
    }
}

/// A token that can be used to mark something as canceled.
///
/// To cancel run [`CancellationToken::cancel`] and to check if the token is canceled run [`CancellationToken::is_cancelled`].
#[derive(Clone, Default)]
pub struct CancellationToken {
    value: Arc<AtomicBool>,
}

impl CancellationToken {
    #[inline]
    pub fn new() -> Self {
        Self {
            value: Arc::new(AtomicBool::new(false)),
        }
    }

    #[inline]
    pub fn cancel(&self) {
        self.value.store(true, atomic::Ordering::Relaxed);
    }

    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.value.load(atomic::Ordering::Relaxed)
    }

    fn ensure_alive(&self) -> Result<(), QueryEvaluationError> {
        if self.is_cancelled() {
            Err(QueryEvaluationError::Cancelled)
        } else {
            Ok(())
        }
    }
}
