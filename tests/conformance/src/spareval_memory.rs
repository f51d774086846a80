//! Reference engine: the test data in an in-memory `oxrdf::Dataset`, queried by `spareval`.
//!
//! It exists to validate the harness (a known, mostly conformant evaluator over a store that
//! keeps lexical forms) and as the yardstick for rete's engine, which plugs into the same
//! [`Engine`] trait.

use crate::engine::{Answer, Engine, EngineError, PathAndIri, Resolver, Solutions, read_triples};
use oxrdf::{Dataset, GraphName, NamedNode, Quad};
use spareval::{QueryEvaluator, QueryResults};
use spargebra::{Query, SparqlParser};
use std::collections::HashSet;

/// `spareval` over an `oxrdf::Dataset` built from the test's files.
#[derive(Debug, Default, Clone, Copy)]
pub struct SparevalMemory;

impl Engine for SparevalMemory {
    fn name(&self) -> &str {
        "spareval-memory"
    }

    fn evaluate(
        &self,
        query: &str,
        base: &str,
        default_graph: &[PathAndIri],
        named_graphs: &[PathAndIri],
        resolve: Resolver<'_>,
    ) -> Result<Answer, EngineError> {
        let query = parse(query, base).map_err(EngineError::Parse)?;

        let mut dataset = Dataset::new();
        for file in default_graph {
            load(&mut dataset, file, GraphName::DefaultGraph)?;
        }
        let mut loaded = HashSet::new();
        for file in named_graphs {
            if loaded.insert(file.iri.clone()) {
                load(
                    &mut dataset,
                    file,
                    NamedNode::new_unchecked(&file.iri).into(),
                )?;
            }
        }
        // FROM / FROM NAMED: load each file as the named graph of that IRI; the evaluator
        // takes the query's dataset clause from the parsed query and selects those graphs.
        if let Some(clause) = query_dataset(&query) {
            for iri in clause.default.iter().chain(clause.named.iter().flatten()) {
                if loaded.insert(iri.as_str().to_owned()) {
                    let path = resolve(iri.as_str()).ok_or_else(|| {
                        EngineError::Unsupported(format!(
                            "no local file for graph <{}>",
                            iri.as_str()
                        ))
                    })?;
                    let file = PathAndIri {
                        path,
                        iri: iri.as_str().to_owned(),
                    };
                    load(&mut dataset, &file, iri.clone().into())?;
                }
            }
        }

        let evaluator = QueryEvaluator::new();
        let results = evaluator
            .prepare(&query)
            .execute(&dataset)
            .map_err(|e| EngineError::Evaluation(e.to_string()))?;
        collect(results).map_err(EngineError::Evaluation)
    }

    fn parse_only(&self, query: &str, base: &str) -> Result<(), String> {
        parse(query, base).map(|_| ())
    }
}

fn parse(query: &str, base: &str) -> Result<Query, String> {
    SparqlParser::new()
        .with_base_iri(base)
        .map_err(|e| e.to_string())?
        .parse_query(query)
        .map_err(|e| e.to_string())
}

fn query_dataset(query: &Query) -> Option<&spargebra::algebra::QueryDataset> {
    match query {
        Query::Select { dataset, .. }
        | Query::Construct { dataset, .. }
        | Query::Describe { dataset, .. }
        | Query::Ask { dataset, .. } => dataset.as_ref(),
    }
}

fn load(dataset: &mut Dataset, file: &PathAndIri, graph: GraphName) -> Result<(), EngineError> {
    for triple in read_triples(file)? {
        dataset.insert(&Quad::new(
            triple.subject,
            triple.predicate,
            triple.object,
            graph.clone(),
        ));
    }
    Ok(())
}

fn collect(results: QueryResults<'_>) -> Result<Answer, String> {
    match results {
        QueryResults::Boolean(value) => Ok(Answer::Boolean(value)),
        QueryResults::Solutions(solutions) => {
            let variables = solutions.variables().to_vec();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution.map_err(|e| e.to_string())?;
                rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
            }
            Ok(Answer::Solutions(Solutions { variables, rows }))
        }
        QueryResults::Graph(triples) => Ok(Answer::Graph(
            triples
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?,
        )),
    }
}
