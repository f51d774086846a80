//! `GRAPH ?g { P }` as SPARQL defines it (§18.6: for each named graph g, P
//! evaluated in g, joined with ?g = g), where spareval would differ.
//!
//! spareval (through sparopt) pushes ?g down into P's triple patterns. That
//! is right and fast for plain patterns, and the query keeps that form when
//! P is one: triple patterns, paths, joins, OPTIONAL, UNION, FILTER, BIND and
//! VALUES that do not mention ?g and always bind it. Otherwise the pushed-down
//! ?g goes wrong: P's own ?g is another variable (`FILTER(BOUND(?g))` inside
//! is false), a sub-SELECT that does not project ?g would count over every
//! graph, VALUES or an empty group would not bind ?g, and MINUS would see ?g
//! on both sides. Those GRAPH patterns become
//!
//! ```text
//! GRAPH ?g {} LATERAL { GRAPH ?g { FILTER(!BOUND(?h) || sameTerm(?g, ?h)) P[?g := ?h] } }
//! ```
//!
//! which evaluates P once per graph with ?g fixed: P's own ?g is renamed to a
//! fresh ?h (a name no query can write) and then joined with ?g; every
//! sub-SELECT in P also projects ?g, so that it is evaluated in that graph;
//! the vendored spareval keeps ?g out of MINUS's overlap test under LATERAL
//! (vendor/README.md, change 6).

use super::algebra::{VisitMut, query_pattern_mut, walk_pattern};
use oxrdf::Variable;
use spargebra::Query;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::NamedNodePattern;

/// The query with every GRAPH ?g that needs it evaluated per graph.
pub(crate) fn scope_graph_variables(query: &mut Query) {
    Scoper { fresh: 0 }.pattern(query_pattern_mut(query));
}

struct Scoper {
    fresh: usize,
}

impl VisitMut for Scoper {
    fn pattern(&mut self, pattern: &mut GraphPattern) {
        walk_pattern(self, pattern);
        let GraphPattern::Graph { name: NamedNodePattern::Variable(graph), inner } = pattern else { return };
        if !needs_scope(inner, graph) {
            return;
        }
        let graph = graph.clone();
        let mut inner = std::mem::replace(inner.as_mut(), GraphPattern::Bgp { patterns: Vec::new() });
        if mentions(&mut inner, &graph) {
            self.fresh += 1;
            // '-' cannot occur in a SPARQL variable name: no query can use this one.
            let own = Variable::new_unchecked(format!("rete-graph-{}", self.fresh));
            Rename { from: &graph, to: &own }.pattern(&mut inner);
            let unbound = Expression::Not(Box::new(Expression::Bound(own.clone())));
            let same = Expression::SameTerm(Box::new(Expression::Variable(graph.clone())), Box::new(Expression::Variable(own)));
            let compatible = Expression::Or(Box::new(unbound), Box::new(same));
            inner = GraphPattern::Filter { expr: compatible, inner: Box::new(inner) };
        }
        ProjectGraph { graph: &graph }.pattern(&mut inner);
        let name = NamedNodePattern::Variable(graph);
        *pattern = GraphPattern::Lateral {
            left: Box::new(GraphPattern::Graph { name: name.clone(), inner: Box::new(GraphPattern::Bgp { patterns: Vec::new() }) }),
            right: Box::new(GraphPattern::Graph { name, inner: Box::new(inner) }),
        };
    }
}

/// Whether spareval's pushed-down evaluation of `GRAPH ?graph { inner }`
/// would be wrong (see the module doc).
fn needs_scope(inner: &mut GraphPattern, graph: &Variable) -> bool {
    mentions(inner, graph) || !plain(inner) || !binds_graph(inner)
}

/// Made only of patterns that evaluate the same with ?g pushed down.
fn plain(pattern: &GraphPattern) -> bool {
    match pattern {
        GraphPattern::Bgp { .. } | GraphPattern::Path { .. } | GraphPattern::Values { .. } => true,
        GraphPattern::Join { left, right } | GraphPattern::LeftJoin { left, right, .. } | GraphPattern::Union { left, right } => plain(left) && plain(right),
        GraphPattern::Filter { inner, expr: expression } | GraphPattern::Extend { inner, expression, .. } => plain(inner) && plain_expression(expression),
        _ => false,
    }
}

/// No EXISTS over a pattern that is not plain.
fn plain_expression(expression: &Expression) -> bool {
    let mut plain_all = true;
    let mut expression = expression.clone();
    ExistsCheck { plain: &mut plain_all }.expression(&mut expression);
    plain_all
}

struct ExistsCheck<'a> {
    plain: &'a mut bool,
}

impl VisitMut for ExistsCheck<'_> {
    fn pattern(&mut self, pattern: &mut GraphPattern) {
        *self.plain &= plain(pattern);
    }
}

/// Every solution of the pattern has a triple pattern's graph: ?g is bound.
fn binds_graph(pattern: &GraphPattern) -> bool {
    match pattern {
        GraphPattern::Bgp { patterns } => !patterns.is_empty(),
        GraphPattern::Path { .. } => true,
        GraphPattern::Join { left, right } => binds_graph(left) || binds_graph(right),
        GraphPattern::LeftJoin { left, .. } | GraphPattern::Filter { inner: left, .. } | GraphPattern::Extend { inner: left, .. } => binds_graph(left),
        GraphPattern::Union { left, right } => binds_graph(left) && binds_graph(right),
        _ => false,
    }
}

fn mentions(pattern: &mut GraphPattern, variable: &Variable) -> bool {
    let mut found = Find { variable, found: false };
    found.pattern(pattern);
    found.found
}

struct Find<'a> {
    variable: &'a Variable,
    found: bool,
}

impl VisitMut for Find<'_> {
    fn variable(&mut self, variable: &mut Variable) {
        self.found |= variable == self.variable;
    }
}

struct Rename<'a> {
    from: &'a Variable,
    to: &'a Variable,
}

impl VisitMut for Rename<'_> {
    fn variable(&mut self, variable: &mut Variable) {
        if variable == self.from {
            *variable = self.to.clone();
        }
    }
}

/// Adds the graph variable to every sub-SELECT evaluated in its graph (not
/// those under another GRAPH), so that spareval evaluates them there.
struct ProjectGraph<'a> {
    graph: &'a Variable,
}

impl VisitMut for ProjectGraph<'_> {
    fn pattern(&mut self, pattern: &mut GraphPattern) {
        match pattern {
            GraphPattern::Graph { .. } => {}
            GraphPattern::Project { variables, inner } => {
                if !variables.contains(self.graph) {
                    variables.push(self.graph.clone());
                }
                self.pattern(inner);
            }
            _ => walk_pattern(self, pattern),
        }
    }
}
