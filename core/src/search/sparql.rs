//! The label search from SPARQL, in the form of Jena's text index
//! (`PREFIX text: <http://jena.apache.org/text#>`):
//!
//! ```sparql
//! ?s text:query (rdfs:label "linc*" 10) .
//! (?s ?score ?label) text:query ("abraham linc*" "lang:en") .
//! ```
//!
//! Before evaluation, each such triple of a basic graph pattern (with the
//! `rdf:first`/`rdf:rest` triples of its lists) is replaced by the search's
//! hits as `VALUES`, joined with the rest of the pattern; a property given as
//! the first argument adds `?s property ?label`, so the evaluator keeps the
//! hits whose label is a value of it. Other engines see an unknown predicate
//! and match nothing, which is harmless. Patterns inside `EXISTS` are not rewritten.

use super::{SearchRequest, search};
use crate::read::{RangeSource, Store};
use crate::{ByteRange, ReadError};
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Literal, NamedNode, Term, Variable};
use spargebra::Query;
use spargebra::algebra::GraphPattern;
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};

/// The property function's IRI.
pub const TEXT_QUERY: &str = "http://jena.apache.org/text#query";

/// Why a `text:query` pattern cannot be evaluated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextQueryError {
    /// Its arguments are not one of the forms above.
    #[error("text:query {0}")]
    Arguments(String),
    /// The search failed.
    #[error(transparent)]
    Search(#[from] super::SearchError),
}

impl From<TextQueryError> for crate::sparql::QueryError {
    fn from(error: TextQueryError) -> Self {
        match error {
            TextQueryError::Search(super::SearchError::Read(read)) => Self::Read(read),
            other => Self::Unsupported { feature: other.to_string() },
        }
    }
}

/// The query with every `text:query` triple replaced by its hits, or `None`
/// when it has none. A search that misses blocks reports them to `missed` and
/// matches nothing in this run (the host fetches them and runs again).
pub fn rewrite<S: RangeSource>(store: &Store<S>, query: &Query, missed: &mut dyn FnMut(&[ByteRange])) -> Result<Option<Query>, TextQueryError> {
    let pattern = match query {
        Query::Select { pattern, .. } | Query::Construct { pattern, .. } | Query::Describe { pattern, .. } | Query::Ask { pattern, .. } => pattern,
    };
    if !mentions_text_query(pattern) {
        return Ok(None);
    }
    let mut rewriter = Rewriter { store, missed, fresh: 0 };
    let pattern = rewriter.pattern(pattern.clone())?;
    Ok(Some(match query.clone() {
        Query::Select { dataset, base_iri, .. } => Query::Select { dataset, pattern, base_iri },
        Query::Construct { template, dataset, base_iri, .. } => Query::Construct { template, dataset, pattern, base_iri },
        Query::Describe { dataset, base_iri, .. } => Query::Describe { dataset, pattern, base_iri },
        Query::Ask { dataset, base_iri, .. } => Query::Ask { dataset, pattern, base_iri },
    }))
}

/// Whether a pattern the rewriter walks into holds a `text:query` triple:
/// without one, the rewrite would give the query back unchanged. Walked in
/// place, as `Rewriter::pattern` walks: every query pays for this check, and
/// writing the pattern out as text to search it cost a small query more
/// than its first answer's lookups.
fn mentions_text_query(pattern: &GraphPattern) -> bool {
    match pattern {
        GraphPattern::Bgp { patterns } => patterns.iter().any(is_text_query),
        GraphPattern::Join { left, right } | GraphPattern::LeftJoin { left, right, .. } | GraphPattern::Lateral { left, right } | GraphPattern::Union { left, right } | GraphPattern::Minus { left, right } => {
            mentions_text_query(left) || mentions_text_query(right)
        }
        GraphPattern::Filter { inner, .. }
        | GraphPattern::Graph { inner, .. }
        | GraphPattern::Extend { inner, .. }
        | GraphPattern::OrderBy { inner, .. }
        | GraphPattern::Project { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::Group { inner, .. }
        | GraphPattern::Service { inner, .. } => mentions_text_query(inner),
        GraphPattern::Path { .. } | GraphPattern::Values { .. } => false,
    }
}

fn is_text_query(triple: &TriplePattern) -> bool {
    matches!(&triple.predicate, NamedNodePattern::NamedNode(p) if p.as_str() == TEXT_QUERY)
}

struct Rewriter<'a, S> {
    store: &'a Store<S>,
    missed: &'a mut dyn FnMut(&[ByteRange]),
    /// Labels bound only to check a property get variables of their own.
    fresh: usize,
}

impl<S: RangeSource> Rewriter<'_, S> {
    fn pattern(&mut self, pattern: GraphPattern) -> Result<GraphPattern, TextQueryError> {
        let mut boxed = |inner: Box<GraphPattern>| -> Result<Box<GraphPattern>, TextQueryError> { Ok(Box::new(self.pattern(*inner)?)) };
        Ok(match pattern {
            GraphPattern::Bgp { patterns } => return self.bgp(patterns),
            GraphPattern::Join { left, right } => GraphPattern::Join { left: boxed(left)?, right: boxed(right)? },
            GraphPattern::LeftJoin { left, right, expression } => GraphPattern::LeftJoin { left: boxed(left)?, right: boxed(right)?, expression },
            GraphPattern::Lateral { left, right } => GraphPattern::Lateral { left: boxed(left)?, right: boxed(right)? },
            GraphPattern::Filter { expr, inner } => GraphPattern::Filter { expr, inner: boxed(inner)? },
            GraphPattern::Union { left, right } => GraphPattern::Union { left: boxed(left)?, right: boxed(right)? },
            GraphPattern::Graph { name, inner } => GraphPattern::Graph { name, inner: boxed(inner)? },
            GraphPattern::Extend { inner, variable, expression } => GraphPattern::Extend { inner: boxed(inner)?, variable, expression },
            GraphPattern::Minus { left, right } => GraphPattern::Minus { left: boxed(left)?, right: boxed(right)? },
            GraphPattern::OrderBy { inner, expression } => GraphPattern::OrderBy { inner: boxed(inner)?, expression },
            GraphPattern::Project { inner, variables } => GraphPattern::Project { inner: boxed(inner)?, variables },
            GraphPattern::Distinct { inner } => GraphPattern::Distinct { inner: boxed(inner)? },
            GraphPattern::Reduced { inner } => GraphPattern::Reduced { inner: boxed(inner)? },
            GraphPattern::Slice { inner, start, length } => GraphPattern::Slice { inner: boxed(inner)?, start, length },
            GraphPattern::Group { inner, variables, aggregates } => GraphPattern::Group { inner: boxed(inner)?, variables, aggregates },
            GraphPattern::Service { name, inner, silent } => GraphPattern::Service { name, inner: boxed(inner)?, silent },
            other => other,
        })
    }

    /// A BGP without its `text:query` triples (and their lists), joined
    /// with their hits.
    fn bgp(&mut self, mut patterns: Vec<TriplePattern>) -> Result<GraphPattern, TextQueryError> {
        let mut values = Vec::new();
        while let Some(position) = patterns.iter().position(is_text_query) {
            let triple = patterns.remove(position);
            let outputs = list_or_one(&triple.subject, &mut patterns);
            let arguments = list_or_one(&triple.object, &mut patterns);
            let mut call = Call::parse(&outputs, &arguments)?;
            if let Some(property) = &call.property {
                let label = call.label.get_or_insert_with(|| {
                    self.fresh += 1;
                    Variable::new_unchecked(format!("textQueryLabel{}", self.fresh))
                });
                patterns.push(TriplePattern { subject: call.subject.clone().into(), predicate: property.clone().into(), object: label.clone().into() });
            }
            values.push(self.hits(&call)?);
        }
        let mut pattern = GraphPattern::Bgp { patterns };
        for hits in values {
            pattern = GraphPattern::Join { left: Box::new(hits), right: Box::new(pattern) };
        }
        Ok(pattern)
    }

    fn hits(&mut self, call: &Call) -> Result<GraphPattern, TextQueryError> {
        let request = SearchRequest::lucene(&call.text, call.lang.as_deref(), call.limit);
        let answer = match search(self.store, &request) {
            Ok(answer) => answer,
            Err(super::SearchError::Read(ReadError::Missing(ranges))) => {
                (self.missed)(&ranges);
                Default::default()
            }
            Err(other) => return Err(other.into()),
        };
        let mut variables = vec![call.subject.clone()];
        variables.extend(call.label.clone());
        variables.extend(call.score.clone());
        let bindings = answer
            .hits
            .into_iter()
            .filter_map(|hit| {
                let Term::NamedNode(subject) = hit.subject else { return None };
                let Term::Literal(label) = hit.label else { return None };
                let mut row = vec![Some(GroundTerm::NamedNode(subject))];
                if call.label.is_some() {
                    row.push(Some(GroundTerm::Literal(label)));
                }
                if call.score.is_some() {
                    row.push(Some(GroundTerm::Literal(Literal::new_typed_literal(format!("{}.0", hit.score), xsd::DOUBLE))));
                }
                Some(row)
            })
            .collect();
        Ok(GraphPattern::Values { variables, bindings })
    }
}

/// The items of the RDF list starting at `head` (removing its
/// `rdf:first`/`rdf:rest` triples from `patterns`), or `head` alone.
fn list_or_one(head: &TermPattern, patterns: &mut Vec<TriplePattern>) -> Vec<TermPattern> {
    let mut items = Vec::new();
    let mut node = head.clone();
    loop {
        let TermPattern::BlankNode(_) = &node else { break };
        let is = |t: &TriplePattern, p: &NamedNode| t.subject == node && matches!(&t.predicate, NamedNodePattern::NamedNode(x) if x == p);
        let (Some(first), Some(rest)) = (patterns.iter().position(|t| is(t, &rdf::FIRST.into_owned())), patterns.iter().position(|t| is(t, &rdf::REST.into_owned()))) else { break };
        items.push(patterns[first].object.clone());
        let next = patterns[rest].object.clone();
        patterns.retain(|t| !(t.subject == node && (is(t, &rdf::FIRST.into_owned()) || is(t, &rdf::REST.into_owned()))));
        node = next;
    }
    if items.is_empty() { vec![head.clone()] } else { items }
}

/// One `text:query` call.
struct Call {
    subject: Variable,
    score: Option<Variable>,
    label: Option<Variable>,
    property: Option<NamedNode>,
    text: String,
    limit: usize,
    lang: Option<String>,
}

impl Call {
    fn parse(outputs: &[TermPattern], arguments: &[TermPattern]) -> Result<Self, TextQueryError> {
        let variable = |t: Option<&TermPattern>, what: &str| match t {
            Some(TermPattern::Variable(v)) => Ok(Some(v.clone())),
            None => Ok(None),
            Some(other) => Err(TextQueryError::Arguments(format!("binds variables: its {what} is {other}, not a variable"))),
        };
        let subject = variable(outputs.first(), "subject")?.ok_or_else(|| TextQueryError::Arguments("needs a subject variable".into()))?;
        let (score, label) = (variable(outputs.get(1), "score")?, variable(outputs.get(2), "literal")?);
        let mut arguments = arguments.iter().peekable();
        let property = match arguments.peek() {
            Some(TermPattern::NamedNode(property)) => {
                arguments.next();
                Some(property.clone())
            }
            _ => None,
        };
        let text = match arguments.next() {
            Some(TermPattern::Literal(text)) if text.datatype() == xsd::STRING || text.language().is_some() => text.value().to_owned(),
            other => return Err(TextQueryError::Arguments(format!("needs the search text as a string (after an optional property), not {}", describe(other)))),
        };
        let mut call = Self { subject, score, label, property, text, limit: super::MAX_LIMIT, lang: None };
        for argument in arguments {
            match argument {
                TermPattern::Literal(l) if l.datatype() == xsd::INTEGER => {
                    call.limit = l.value().parse().map_err(|_| TextQueryError::Arguments(format!("limit {} is not a number", l.value())))?;
                }
                TermPattern::Literal(l) if l.value().starts_with("lang:") => call.lang = Some(l.value()["lang:".len()..].to_owned()),
                other => return Err(TextQueryError::Arguments(format!("does not take {other}: give (property? \"text\" limit? \"lang:xx\"?)"))),
            }
        }
        Ok(call)
    }
}

fn describe(term: Option<&TermPattern>) -> String {
    term.map_or_else(|| "nothing".into(), |t| t.to_string())
}
