//! SPARQL 1.1 Query Results JSON for solutions, written by rete itself: each
//! row is put together in a buffer of its own and handed to the writer with
//! one `write_all`. sparesults' serializer builds a vector of JSON events per
//! row and feeds each through json-event-parser's state machine, a dozen or
//! more small writes per term; in the Worker's wasm each of those writes goes
//! through a `RefCell<Vec<u8>>`, and the event machinery was a quarter of LUBM
//! q14's CPU (76,490 rows; issue 14, docs/BENCHMARK.md "Session 18"). The
//! bytes are sparesults' own, key order and spacing included (the tests below
//! compare them), and strings are escaped by the serializer sparesults uses
//! (json-event-parser's `write_escaped_json_string`, vendor/README.md).

use crate::sparql::{QuerySolution, Variable};
use json_event_parser::write_escaped_json_string;
use oxrdf::vocab::xsd;
use oxrdf::{BaseDirection, TermRef};
use std::io::{self, Write};

/// Writes a solution sequence as SPARQL JSON, one row at a time.
pub struct JsonSolutionsWriter<W: Write> {
    out: W,
    /// The row being put together.
    row: Vec<u8>,
    /// No row written yet (the next is not preceded by a comma).
    first: bool,
}

impl<W: Write> JsonSolutionsWriter<W> {
    /// Writes the head (`vars`) and opens the bindings.
    pub fn start(mut out: W, variables: &[Variable]) -> io::Result<Self> {
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(br#"{"head":{"vars":["#);
        for (i, variable) in variables.iter().enumerate() {
            if i > 0 {
                head.push(b',');
            }
            write_escaped_json_string(variable.as_str(), &mut head)?;
        }
        head.extend_from_slice(br#"]},"results":{"bindings":["#);
        out.write_all(&head)?;
        Ok(Self { out, row: Vec::new(), first: true })
    }

    /// Writes one solution: its bound variables, in the solution's order.
    pub fn serialize(&mut self, solution: &QuerySolution) -> io::Result<()> {
        let row = &mut self.row;
        row.clear();
        if !self.first {
            row.push(b',');
        }
        self.first = false;
        row.push(b'{');
        for (i, (variable, term)) in solution.iter().enumerate() {
            if i > 0 {
                row.push(b',');
            }
            write_escaped_json_string(variable.as_str(), &mut *row)?;
            row.push(b':');
            write_term(row, term.as_ref())?;
        }
        row.push(b'}');
        self.out.write_all(row)
    }

    /// Closes the bindings and the document; gives the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(b"]}}")?;
        Ok(self.out)
    }
}

/// One RDF term as a SPARQL JSON object, keys in sparesults' order.
fn write_term(row: &mut Vec<u8>, term: TermRef<'_>) -> io::Result<()> {
    match term {
        TermRef::NamedNode(node) => {
            row.extend_from_slice(br#"{"type":"uri","value":"#);
            write_escaped_json_string(node.as_str(), &mut *row)?;
        }
        TermRef::BlankNode(node) => {
            row.extend_from_slice(br#"{"type":"bnode","value":"#);
            write_escaped_json_string(node.as_str(), &mut *row)?;
        }
        TermRef::Literal(literal) => {
            row.extend_from_slice(br#"{"type":"literal","value":"#);
            write_escaped_json_string(literal.value(), &mut *row)?;
            if let Some(language) = literal.language() {
                row.extend_from_slice(br#","xml:lang":"#);
                write_escaped_json_string(language, &mut *row)?;
                match literal.direction() {
                    Some(BaseDirection::Ltr) => row.extend_from_slice(br#","its:dir":"ltr""#),
                    Some(BaseDirection::Rtl) => row.extend_from_slice(br#","its:dir":"rtl""#),
                    None => {}
                }
            } else if literal.datatype() != xsd::STRING {
                row.extend_from_slice(br#","datatype":"#);
                write_escaped_json_string(literal.datatype().as_str(), &mut *row)?;
            }
        }
        TermRef::Triple(triple) => {
            row.extend_from_slice(br#"{"type":"triple","value":{"subject":"#);
            write_term(row, triple.subject.as_ref().into())?;
            row.extend_from_slice(br#","predicate":"#);
            write_term(row, triple.predicate.as_ref().into())?;
            row.extend_from_slice(br#","object":"#);
            write_term(row, triple.object.as_ref())?;
            row.push(b'}');
        }
    }
    row.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use oxrdf::{BlankNode, Literal, NamedNode, Term, Triple};
    use sparesults::{QueryResultsFormat, QueryResultsSerializer};
    use std::sync::Arc;

    fn ours(variables: &[Variable], solutions: &[QuerySolution]) -> Vec<u8> {
        let mut writer = JsonSolutionsWriter::start(Vec::new(), variables).unwrap();
        for solution in solutions {
            writer.serialize(solution).unwrap();
        }
        writer.finish().unwrap()
    }

    fn sparesults(variables: &[Variable], solutions: &[QuerySolution]) -> Vec<u8> {
        let mut writer = QueryResultsSerializer::from_format(QueryResultsFormat::Json).serialize_solutions_to_writer(Vec::new(), variables.to_vec()).unwrap();
        for solution in solutions {
            writer.serialize(solution).unwrap();
        }
        writer.finish().unwrap()
    }

    fn terms() -> Vec<Term> {
        let iri = |s: &str| NamedNode::new_unchecked(s);
        let strings = ["", "plain", "quote \" and \\ backslash", "lines\nand\ttabs\r\u{8}\u{c}", "\u{0}\u{1f}\u{7f}", "é ü 日本 🦀", "a long enough string to cross the eight-byte words\"at an odd place"];
        let mut terms: Vec<Term> = vec![iri("http://example.org/s").into(), iri("http://ex.org/a\"b").into(), BlankNode::new_unchecked("b0").into()];
        for s in strings {
            terms.push(Literal::new_simple_literal(s).into());
            terms.push(Literal::new_language_tagged_literal_unchecked(s, "en-GB").into());
            terms.push(Literal::new_directional_language_tagged_literal_unchecked(s, "ar", BaseDirection::Rtl).into());
            terms.push(Literal::new_directional_language_tagged_literal_unchecked(s, "en", BaseDirection::Ltr).into());
            terms.push(Literal::new_typed_literal(s, xsd::INTEGER).into());
            terms.push(Literal::new_typed_literal(s, iri("http://ex.org/type\"\n")).into());
        }
        let inner = Triple::new(iri("http://ex.org/s"), iri("http://ex.org/p"), Literal::new_language_tagged_literal_unchecked("x", "fr"));
        terms.push(Triple::new(BlankNode::new_unchecked("t"), iri("http://ex.org/q"), inner).into());
        terms
    }

    #[test]
    fn writes_what_sparesults_writes() {
        let variables: Vec<Variable> = ["s", "o", "x"].map(Variable::new_unchecked).to_vec();
        let shared: Arc<[Variable]> = variables.clone().into();
        let terms = terms();
        // Every term in every column, with the other columns bound, unbound or both.
        let mut solutions = Vec::new();
        for (i, term) in terms.iter().enumerate() {
            let other = terms[(i * 7 + 3) % terms.len()].clone();
            solutions.push(QuerySolution::from((shared.clone(), vec![Some(term.clone()), None, Some(other.clone())])));
            solutions.push(QuerySolution::from((shared.clone(), vec![None, Some(term.clone()), None])));
            solutions.push(QuerySolution::from((shared.clone(), vec![Some(other), None, Some(term.clone())])));
        }
        solutions.push(QuerySolution::from((shared.clone(), vec![None, None, None])));
        assert_eq!(String::from_utf8(ours(&variables, &solutions)).unwrap(), String::from_utf8(sparesults(&variables, &solutions)).unwrap());
        for n in 0..3 {
            assert_eq!(ours(&variables, &solutions[..n]), sparesults(&variables, &solutions[..n]), "{n} rows");
        }
        assert_eq!(ours(&[], &[]), sparesults(&[], &[]));
        let empty: Arc<[Variable]> = Vec::new().into();
        let unit = [QuerySolution::from((empty.clone(), Vec::new())), QuerySolution::from((empty, Vec::new()))];
        assert_eq!(ours(&[], &unit), sparesults(&[], &unit));
    }

    #[test]
    fn one_write_per_row() {
        struct Counting(usize);
        impl Write for Counting {
            fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
                self.0 += 1;
                Ok(bytes.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let variables: Arc<[Variable]> = vec![Variable::new_unchecked("s"), Variable::new_unchecked("o")].into();
        let mut writer = JsonSolutionsWriter::start(Counting(0), &variables).unwrap();
        for term in terms() {
            writer.serialize(&QuerySolution::from((variables.clone(), vec![Some(term.clone()), Some(term)]))).unwrap();
        }
        assert_eq!(writer.finish().unwrap().0, 1 + terms().len() + 1);
    }
}
