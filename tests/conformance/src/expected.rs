//! Reading expected results into an [`Answer`], whatever file format the suite uses.
//!
//! * `.srx`, `.srj`, `.tsv`: SPARQL XML / JSON / TSV result documents, via `sparesults`.
//! * `.csv`: parsed here (`sparesults` does not read CSV, which loses term types): cells become
//!   simple literals, `_:x` blank nodes, empty cells unbound. See [`csv_projection`].
//! * `.ttl`, `.rdf`, `.nt`: an RDF graph. If it holds an `rs:ResultSet` it is a solution
//!   sequence or boolean in the DAWG result-set vocabulary; otherwise it is the expected
//!   CONSTRUCT/DESCRIBE graph.

use crate::engine::{Answer, PathAndIri, Solutions, rdf_format, read_triples};
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BlankNode, Graph, Literal, NamedOrBlankNodeRef, Term, TermRef, Variable};
use sparesults::{QueryResultsFormat, QueryResultsParser, ReaderQueryResultsParserOutput};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Expected results of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub answer: Answer,
    /// The file gives the solutions in a meaningful order (result documents, or a result set
    /// with `rs:index` on every solution). Order is checked only if the query also has ORDER BY.
    pub ordered: bool,
    /// The file lists the result variables. Result-set graphs of empty results sometimes do
    /// not, and then only the bound values are compared.
    pub variables_declared: bool,
    /// The file is TSV (see [`crate::compare`] on the `1.0e6` quirk).
    pub tsv: bool,
}

/// Reads the expected results in `file`.
pub fn read_expected(file: &PathAndIri) -> Result<Expected, String> {
    let extension = file
        .path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let document = |answer| Expected {
        answer,
        ordered: true,
        variables_declared: true,
        tsv: extension == "tsv",
    };
    match extension.as_str() {
        "srx" => read_result_document(&file.path, QueryResultsFormat::Xml).map(document),
        "srj" => read_result_document(&file.path, QueryResultsFormat::Json).map(document),
        "tsv" => read_result_document(&file.path, QueryResultsFormat::Tsv).map(document),
        "csv" => read_csv(&file.path).map(document),
        _ if rdf_format(&file.path).is_some() => {
            let triples = read_triples(file).map_err(|e| e.to_string())?;
            let graph: Graph = triples.iter().collect();
            match read_result_set(&graph)? {
                Some(expected) => Ok(expected),
                None => Ok(Expected {
                    answer: Answer::Graph(triples),
                    ordered: false,
                    variables_declared: true,
                    tsv: false,
                }),
            }
        }
        _ => Err(format!("unknown result file type: {}", file.path.display())),
    }
}

fn read_result_document(path: &Path, format: QueryResultsFormat) -> Result<Answer, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parsed = QueryResultsParser::from_format(format)
        .for_reader(BufReader::new(file))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match parsed {
        ReaderQueryResultsParserOutput::Boolean(value) => Ok(Answer::Boolean(value)),
        ReaderQueryResultsParserOutput::Solutions(solutions) => {
            let variables = solutions.variables().to_vec();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution.map_err(|e| format!("{}: {e}", path.display()))?;
                rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
            }
            Ok(Answer::Solutions(Solutions { variables, rows }))
        }
    }
}

/// Reads a SPARQL CSV result document (RFC 4180 quoting; CRLF or LF line ends).
fn read_csv(path: &Path) -> Result<Answer, String> {
    let mut text = String::new();
    File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut records = parse_csv(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if records.is_empty() {
        return Err(format!("{}: empty CSV file", path.display()));
    }
    let header = records.remove(0);
    let variables = header
        .iter()
        .map(|name| Variable::new(name).map_err(|e| format!("CSV header {name:?}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = records
        .into_iter()
        .map(|record| {
            if record.len() != variables.len() {
                return Err(format!(
                    "CSV row has {} cells, header {}",
                    record.len(),
                    variables.len()
                ));
            }
            Ok(record.iter().map(|cell| csv_cell_term(cell)).collect())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Answer::Solutions(Solutions { variables, rows }))
}

fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at_field_start = true;
            }
            _ => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err("unterminated quoted CSV field".into());
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

fn csv_cell_term(cell: &str) -> Option<Term> {
    if cell.is_empty() {
        None
    } else if let Some(label) = cell.strip_prefix("_:") {
        Some(BlankNode::new(label).unwrap_or_default().into())
    } else {
        Some(Literal::new_simple_literal(cell).into())
    }
}

/// What an answer looks like after a round trip through SPARQL CSV, which keeps only IRI
/// strings, lexical forms and blank node labels: the form in which CSV expectations are read.
/// An empty literal and an unbound value are both an empty cell.
pub fn csv_projection(solutions: &Solutions) -> Solutions {
    let cell = |term: &Option<Term>| match term {
        None => None,
        Some(Term::NamedNode(node)) => csv_cell_term_literal(node.as_str()),
        Some(Term::BlankNode(node)) => Some(node.clone().into()),
        Some(Term::Literal(literal)) => csv_cell_term_literal(literal.value()),
        #[allow(unreachable_patterns)]
        Some(other) => Some(Literal::new_simple_literal(other.to_string()).into()),
    };
    Solutions {
        variables: solutions.variables.clone(),
        rows: solutions
            .rows
            .iter()
            .map(|row| row.iter().map(cell).collect())
            .collect(),
    }
}

/// An IRI or lexical form as a CSV cell: unlike [`csv_cell_term`] it never reads `_:` as a
/// blank node, since the value was not one.
fn csv_cell_term_literal(value: &str) -> Option<Term> {
    (!value.is_empty()).then(|| Literal::new_simple_literal(value).into())
}

mod rs {
    use oxrdf::NamedNodeRef;

    macro_rules! terms {
        ($($name:ident = $local:literal;)*) => {
            $(pub const $name: NamedNodeRef<'static> = NamedNodeRef::new_unchecked(
                concat!("http://www.w3.org/2001/sw/DataAccess/tests/result-set#", $local)
            );)*
        };
    }

    terms! {
        RESULT_SET = "ResultSet";
        RESULT_VARIABLE = "resultVariable";
        SOLUTION = "solution";
        BINDING = "binding";
        VARIABLE = "variable";
        VALUE = "value";
        INDEX = "index";
        BOOLEAN = "boolean";
    }
}

/// Reads a result set written in the DAWG result-set vocabulary, or `None` if the graph
/// has no `rs:ResultSet`.
fn read_result_set(graph: &Graph) -> Result<Option<Expected>, String> {
    let Some(set) = graph
        .subjects_for_predicate_object(rdf::TYPE, rs::RESULT_SET)
        .next()
    else {
        return Ok(None);
    };
    if let Some(value) = graph.object_for_subject_predicate(set, rs::BOOLEAN) {
        let value = match value {
            TermRef::Literal(l) if l.datatype() == xsd::BOOLEAN || l.datatype() == xsd::STRING => {
                match l.value() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    other => return Err(format!("rs:boolean {other:?}")),
                }
            }
            other => return Err(format!("rs:boolean {other}")),
        };
        return Ok(Some(Expected {
            answer: Answer::Boolean(value),
            ordered: false,
            variables_declared: true,
            tsv: false,
        }));
    }

    let mut variables = Vec::new();
    for name in graph.objects_for_subject_predicate(set, rs::RESULT_VARIABLE) {
        variables.push(variable(name)?);
    }
    let variables_declared = !variables.is_empty();

    let mut solutions = Vec::new();
    for solution in graph.objects_for_subject_predicate(set, rs::SOLUTION) {
        let solution = subject(solution)?;
        let index = match graph.object_for_subject_predicate(solution, rs::INDEX) {
            Some(TermRef::Literal(l)) => Some(
                l.value()
                    .parse::<i64>()
                    .map_err(|_| format!("rs:index {:?}", l.value()))?,
            ),
            Some(other) => return Err(format!("rs:index {other}")),
            None => None,
        };
        let mut bindings = Vec::new();
        for binding in graph.objects_for_subject_predicate(solution, rs::BINDING) {
            let binding = subject(binding)?;
            let name = graph
                .object_for_subject_predicate(binding, rs::VARIABLE)
                .ok_or("rs:binding without rs:variable")?;
            let value = graph
                .object_for_subject_predicate(binding, rs::VALUE)
                .ok_or("rs:binding without rs:value")?;
            let name = variable(name)?;
            if !variables.contains(&name) {
                variables.push(name.clone());
            }
            bindings.push((name, value.into_owned()));
        }
        solutions.push((index, bindings));
    }
    // A graph has no order: sort the variables so that reports are reproducible.
    variables.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let ordered = !solutions.is_empty() && solutions.iter().all(|(index, _)| index.is_some());
    if ordered {
        solutions.sort_by_key(|(index, _)| *index);
    }
    let rows = solutions
        .into_iter()
        .map(|(_, bindings)| {
            variables
                .iter()
                .map(|v| {
                    bindings
                        .iter()
                        .find(|(name, _)| name == v)
                        .map(|(_, value)| value.clone())
                })
                .collect()
        })
        .collect();
    Ok(Some(Expected {
        answer: Answer::Solutions(Solutions { variables, rows }),
        ordered,
        variables_declared,
        tsv: false,
    }))
}

fn variable(name: TermRef<'_>) -> Result<Variable, String> {
    match name {
        TermRef::Literal(l) => {
            Variable::new(l.value()).map_err(|e| format!("variable {:?}: {e}", l.value()))
        }
        other => Err(format!("variable name {other} is not a literal")),
    }
}

fn subject(term: TermRef<'_>) -> Result<NamedOrBlankNodeRef<'_>, String> {
    match term {
        TermRef::NamedNode(n) => Ok(n.into()),
        TermRef::BlankNode(n) => Ok(n.into()),
        other => Err(format!("{other} should be a node")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        let records = parse_csv("a,b\r\n\"x,\"\"y\"\"\",\r\n_:b,z\n").unwrap_or_default();
        assert_eq!(
            records,
            vec![
                vec!["a".to_owned(), "b".to_owned()],
                vec!["x,\"y\"".to_owned(), String::new()],
                vec!["_:b".to_owned(), "z".to_owned()],
            ]
        );
    }
}
