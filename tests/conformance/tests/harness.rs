//! Checks of the harness itself: the reference engine's answers are altered in ways the W3C
//! rules must ignore (blank node labels, row order without ORDER BY, column order) and in
//! ways they must catch (a missing row, a flipped boolean, a missing triple, a changed
//! lexical form, rows out of ORDER BY order).

use oxrdf::{BlankNode, Literal, NamedOrBlankNode, Term, Triple};
use rete_conformance::compare::{Order, query_order};
use rete_conformance::{
    Answer, Engine, EngineError, Outcome, PathAndIri, Resolver, SparevalMemory, Suite, TestCase,
    load_all, run_test,
};
use std::cell::Cell;

/// The reference engine with `alter` applied to each answer; `altered` records whether the
/// last answer was changed.
struct Altered<F> {
    alter: F,
    altered: Cell<bool>,
}

impl<F: Fn(&str, &str, Answer) -> Option<Answer>> Engine for Altered<F> {
    fn evaluate(
        &self,
        query: &str,
        base: &str,
        default_graph: &[PathAndIri],
        named_graphs: &[PathAndIri],
        resolve: Resolver<'_>,
    ) -> Result<Answer, EngineError> {
        let answer = SparevalMemory.evaluate(query, base, default_graph, named_graphs, resolve)?;
        match (self.alter)(query, base, answer.clone()) {
            Some(changed) => {
                self.altered.set(true);
                Ok(changed)
            }
            None => Ok(answer),
        }
    }

    fn parse_only(&self, query: &str, base: &str) -> Result<(), String> {
        SparevalMemory.parse_only(query, base)
    }
}

fn altered<F: Fn(&str, &str, Answer) -> Option<Answer>>(alter: F) -> Altered<F> {
    Altered {
        alter,
        altered: Cell::new(false),
    }
}

/// Evaluation tests the reference engine passes.
fn passing_tests(suite: &Suite) -> Vec<TestCase> {
    let tests = match load_all(suite) {
        Ok(tests) => tests,
        Err(error) => panic!("{error}"),
    };
    tests
        .into_iter()
        .filter(|test| {
            !test.is_syntax() && run_test(&SparevalMemory, suite, test) == Outcome::Passed
        })
        .collect()
}

fn suite() -> Suite {
    match Suite::locate() {
        Ok(suite) => suite,
        Err(error) => panic!("{error}"),
    }
}

fn map_terms(answer: Answer, f: &dyn Fn(Term) -> Term) -> Answer {
    match answer {
        Answer::Solutions(mut solutions) => {
            for row in &mut solutions.rows {
                for cell in row.iter_mut() {
                    *cell = cell.take().map(f);
                }
            }
            Answer::Solutions(solutions)
        }
        Answer::Graph(triples) => Answer::Graph(
            triples
                .into_iter()
                .map(|t| {
                    let subject: NamedOrBlankNode = match f(t.subject.into()) {
                        Term::NamedNode(n) => n.into(),
                        Term::BlankNode(b) => b.into(),
                        other => panic!("subject became {other}"),
                    };
                    Triple::new(subject, t.predicate, f(t.object))
                })
                .collect(),
        ),
        other => other,
    }
}

#[test]
fn invisible_changes_keep_passing() {
    let suite = suite();
    let engine = altered(|query, base, answer| {
        let renamed = map_terms(answer, &|term| match term {
            Term::BlankNode(b) => BlankNode::new_unchecked(format!("renamed{}", b.as_str())).into(),
            other => other,
        });
        Some(match renamed {
            Answer::Solutions(mut solutions) => {
                // Column order never matters; row order only under ORDER BY.
                solutions.variables.reverse();
                for row in &mut solutions.rows {
                    row.reverse();
                }
                if query_order(query, base) == Order::Unordered {
                    solutions.rows.reverse();
                }
                Answer::Solutions(solutions)
            }
            Answer::Graph(mut triples) => {
                triples.reverse();
                Answer::Graph(triples)
            }
            other => other,
        })
    });
    let broken: Vec<String> = passing_tests(&suite)
        .iter()
        .filter_map(|test| match run_test(&engine, &suite, test) {
            Outcome::Failed(reason) => Some(format!("{}: {reason}", test.short_id())),
            _ => None,
        })
        .collect();
    assert!(
        broken.is_empty(),
        "harmless changes failed:\n{}",
        broken.join("\n")
    );
}

/// Runs every passing test with `alter`; each test whose answer was changed must fail.
fn assert_caught(alter: impl Fn(&str, &str, Answer) -> Option<Answer>) -> usize {
    let suite = suite();
    let engine = altered(alter);
    let mut changed = 0;
    let mut missed = Vec::new();
    for test in passing_tests(&suite) {
        engine.altered.set(false);
        let outcome = run_test(&engine, &suite, &test);
        if engine.altered.get() {
            changed += 1;
            if outcome == Outcome::Passed {
                missed.push(test.short_id());
            }
        }
    }
    assert!(
        missed.is_empty(),
        "changes not caught in: {}",
        missed.join(", ")
    );
    println!("{changed} altered answers, all caught");
    changed
}

#[test]
fn missing_rows_triples_and_wrong_booleans_fail() {
    let changed = assert_caught(|_, _, answer| match answer {
        Answer::Solutions(mut solutions) if !solutions.rows.is_empty() => {
            solutions.rows.pop();
            Some(Answer::Solutions(solutions))
        }
        Answer::Boolean(value) => Some(Answer::Boolean(!value)),
        Answer::Graph(mut triples) if !triples.is_empty() => {
            triples.pop();
            Some(Answer::Graph(triples))
        }
        _ => None,
    });
    assert!(changed > 400, "only {changed} answers altered");
}

#[test]
fn other_lexical_forms_fail() {
    // "+" before an integer keeps its value and changes its lexical form.
    let changed = assert_caught(|_, _, answer| {
        let found = Cell::new(false);
        let answer = map_terms(answer, &|term| match term {
            Term::Literal(l)
                if l.datatype() == oxrdf::vocab::xsd::INTEGER
                    && !l.value().starts_with(['+', '-']) =>
            {
                found.set(true);
                Literal::new_typed_literal(format!("+{}", l.value()), l.datatype()).into()
            }
            other => other,
        });
        found.get().then_some(answer)
    });
    assert!(changed > 50, "only {changed} answers altered");
}

#[test]
fn rows_out_of_order_fail() {
    // Swapping the first and last rows of an ordered answer breaks the order unless they tie.
    let suite = suite();
    let engine = altered(|query, base, answer| match answer {
        Answer::Solutions(mut solutions)
            if query_order(query, base) != Order::Unordered && solutions.rows.len() > 1 =>
        {
            let last = solutions.rows.len() - 1;
            solutions.rows.swap(0, last);
            Some(Answer::Solutions(solutions))
        }
        _ => None,
    });
    let failed = passing_tests(&suite)
        .iter()
        .filter(|test| matches!(run_test(&engine, &suite, test), Outcome::Failed(_)))
        .count();
    println!("{failed} ordered tests noticed swapped rows");
    assert!(
        failed >= 20,
        "only {failed} ordered tests noticed swapped rows"
    );
}
