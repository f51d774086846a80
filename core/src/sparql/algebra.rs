//! A walk over spargebra's algebra, for the rewrites core makes before
//! spareval sees a query (`graph_scope.rs`, `extensions.rs`). Every pattern,
//! expression and variable of a query is visited, EXISTS patterns included;
//! spargebra offers no such walk.

use oxrdf::Variable;
use spargebra::Query;
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, OrderExpression};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

/// What to do at each node; the defaults walk on into the children.
pub(crate) trait VisitMut {
    fn pattern(&mut self, pattern: &mut GraphPattern) {
        walk_pattern(self, pattern);
    }

    fn expression(&mut self, expression: &mut Expression) {
        walk_expression(self, expression);
    }

    fn variable(&mut self, _variable: &mut Variable) {}

    /// The name of a custom (IRI-named) scalar or aggregate function called.
    fn custom_function(&mut self, _name: &oxrdf::NamedNode) {}
}

/// The pattern of a query, whatever its form.
pub(crate) fn query_pattern_mut(query: &mut Query) -> &mut GraphPattern {
    match query {
        Query::Select { pattern, .. } | Query::Construct { pattern, .. } | Query::Describe { pattern, .. } | Query::Ask { pattern, .. } => pattern,
    }
}

/// How many triple patterns and property paths a query has, EXISTS patterns
/// included: what sets the cost of spareval's planning (`mod.rs`). The walk
/// is mutable, so the query is borrowed so; it is left as it was (a copy of
/// it cost a small query more than the count).
pub(crate) fn triple_pattern_count(query: &mut Query) -> usize {
    struct Count(usize);
    impl VisitMut for Count {
        fn pattern(&mut self, pattern: &mut GraphPattern) {
            match pattern {
                GraphPattern::Bgp { patterns } => self.0 += patterns.len(),
                GraphPattern::Path { .. } => self.0 += 1,
                _ => {}
            }
            walk_pattern(self, pattern);
        }
    }
    let mut count = Count(0);
    count.pattern(query_pattern_mut(query));
    count.0
}

pub(crate) fn walk_pattern<V: VisitMut + ?Sized>(visitor: &mut V, pattern: &mut GraphPattern) {
    match pattern {
        GraphPattern::Bgp { patterns } => {
            for triple in patterns {
                walk_triple(visitor, triple);
            }
        }
        GraphPattern::Path { subject, object, .. } => {
            walk_term(visitor, subject);
            walk_term(visitor, object);
        }
        GraphPattern::Join { left, right } | GraphPattern::Union { left, right } | GraphPattern::Minus { left, right } | GraphPattern::Lateral { left, right } => {
            visitor.pattern(left);
            visitor.pattern(right);
        }
        GraphPattern::LeftJoin { left, right, expression } => {
            visitor.pattern(left);
            visitor.pattern(right);
            if let Some(expression) = expression {
                visitor.expression(expression);
            }
        }
        GraphPattern::Filter { expr, inner } => {
            visitor.pattern(inner);
            visitor.expression(expr);
        }
        GraphPattern::Graph { name, inner } | GraphPattern::Service { name, inner, .. } => {
            walk_named_node(visitor, name);
            visitor.pattern(inner);
        }
        GraphPattern::Extend { inner, variable, expression } => {
            visitor.pattern(inner);
            visitor.variable(variable);
            visitor.expression(expression);
        }
        GraphPattern::Values { variables, .. } => variables.iter_mut().for_each(|v| visitor.variable(v)),
        GraphPattern::OrderBy { inner, expression } => {
            visitor.pattern(inner);
            for condition in expression {
                let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = condition;
                visitor.expression(e);
            }
        }
        GraphPattern::Project { inner, variables } => {
            visitor.pattern(inner);
            variables.iter_mut().for_each(|v| visitor.variable(v));
        }
        GraphPattern::Distinct { inner } | GraphPattern::Reduced { inner } | GraphPattern::Slice { inner, .. } => visitor.pattern(inner),
        GraphPattern::Group { inner, variables, aggregates } => {
            visitor.pattern(inner);
            variables.iter_mut().for_each(|v| visitor.variable(v));
            for (variable, aggregate) in aggregates {
                visitor.variable(variable);
                if let AggregateExpression::FunctionCall { name, expr, .. } = aggregate {
                    if let AggregateFunction::Custom(name) = name {
                        visitor.custom_function(name);
                    }
                    visitor.expression(expr);
                }
            }
        }
    }
}

pub(crate) fn walk_expression<V: VisitMut + ?Sized>(visitor: &mut V, expression: &mut Expression) {
    match expression {
        Expression::NamedNode(_) | Expression::Literal(_) => {}
        Expression::Variable(variable) | Expression::Bound(variable) => visitor.variable(variable),
        Expression::Or(a, b)
        | Expression::And(a, b)
        | Expression::Equal(a, b)
        | Expression::SameTerm(a, b)
        | Expression::Greater(a, b)
        | Expression::GreaterOrEqual(a, b)
        | Expression::Less(a, b)
        | Expression::LessOrEqual(a, b)
        | Expression::Add(a, b)
        | Expression::Subtract(a, b)
        | Expression::Multiply(a, b)
        | Expression::Divide(a, b) => {
            visitor.expression(a);
            visitor.expression(b);
        }
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => visitor.expression(a),
        Expression::In(a, list) => {
            visitor.expression(a);
            list.iter_mut().for_each(|e| visitor.expression(e));
        }
        Expression::Exists(pattern) => visitor.pattern(pattern),
        Expression::If(a, b, c) => {
            visitor.expression(a);
            visitor.expression(b);
            visitor.expression(c);
        }
        Expression::Coalesce(list) => list.iter_mut().for_each(|e| visitor.expression(e)),
        Expression::FunctionCall(function, arguments) => {
            if let Function::Custom(name) = function {
                visitor.custom_function(name);
            }
            arguments.iter_mut().for_each(|e| visitor.expression(e));
        }
    }
}

fn walk_triple<V: VisitMut + ?Sized>(visitor: &mut V, triple: &mut TriplePattern) {
    walk_term(visitor, &mut triple.subject);
    walk_named_node(visitor, &mut triple.predicate);
    walk_term(visitor, &mut triple.object);
}

fn walk_term<V: VisitMut + ?Sized>(visitor: &mut V, term: &mut TermPattern) {
    match term {
        TermPattern::Variable(variable) => visitor.variable(variable),
        TermPattern::Triple(triple) => walk_triple(visitor, triple),
        TermPattern::NamedNode(_) | TermPattern::BlankNode(_) | TermPattern::Literal(_) => {}
    }
}

fn walk_named_node<V: VisitMut + ?Sized>(visitor: &mut V, name: &mut NamedNodePattern) {
    if let NamedNodePattern::Variable(variable) = name {
        visitor.variable(variable);
    }
}
