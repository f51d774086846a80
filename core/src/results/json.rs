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
//! A query's own solutions are written from the store's ids
//! ([`JsonSolutionsWriter::serialize_next`]): each stored term's JSON comes
//! from its dictionary bytes without a `Term` being built, the IRI's
//! `String` and the row's `Vec` of terms that were a third of LUBM q14's
//! Worker CPU (docs/BENCHMARK.md "Session 21").

use crate::FormatError;
use crate::format::term::{LiteralParts, TermKind, corrupt_term, decode_term, encoded_kind, literal_parts};
use crate::sparql::{QuerySolution, Solutions, Variable};
use json_event_parser::write_escaped_json_string;
use oxrdf::vocab::xsd;
use oxrdf::{BaseDirection, TermRef};
use std::io::{self, Write};

/// Writes a solution sequence as SPARQL JSON, one row at a time.
pub struct JsonSolutionsWriter<W: Write> {
    out: W,
    /// The row being put together.
    row: JsonRow,
    /// No row written yet (the next is not preceded by a comma).
    first: bool,
}

impl<W: Write> JsonSolutionsWriter<W> {
    /// Writes the head (`vars`) and opens the bindings.
    pub fn start(mut out: W, variables: &[Variable]) -> io::Result<Self> {
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(br#"{"head":{"vars":["#);
        let mut keys = Vec::with_capacity(variables.len());
        for (i, variable) in variables.iter().enumerate() {
            if i > 0 {
                head.push(b',');
            }
            write_escaped_json_string(variable.as_str(), &mut head)?;
            let mut key = Vec::new();
            write_escaped_json_string(variable.as_str(), &mut key)?;
            key.push(b':');
            keys.push(key);
        }
        head.extend_from_slice(br#"]},"results":{"bindings":["#);
        out.write_all(&head)?;
        Ok(Self { out, row: JsonRow { bytes: Vec::new(), keys, bound: false }, first: true })
    }

    /// Writes one solution: its bound variables, in the solution's order.
    pub fn serialize(&mut self, solution: &QuerySolution) -> io::Result<()> {
        let row = self.begin_row();
        for (variable, term) in solution {
            row.separate();
            write_escaped_json_string(variable.as_str(), &mut row.bytes)?;
            row.bytes.push(b':');
            write_term(&mut row.bytes, term.as_ref());
        }
        self.end_row()
    }

    /// Writes the next solution of `solutions` from the dictionary's bytes
    /// ([`Solutions::next_json`]), the same row [`Self::serialize`] writes
    /// for it; `None` at the end.
    pub fn serialize_next(&mut self, solutions: &mut Solutions<'_>) -> Option<Result<(), super::WriteError>> {
        Some(match solutions.next_json(self.begin_row())? {
            Ok(()) => self.end_row().map_err(Into::into),
            Err(error) => Err(error.into()),
        })
    }

    /// Starts a row: anything put together before and not written is dropped.
    fn begin_row(&mut self) -> &mut JsonRow {
        let row = &mut self.row;
        row.bytes.clear();
        if !self.first {
            row.bytes.push(b',');
        }
        row.bytes.push(b'{');
        row.bound = false;
        row
    }

    fn end_row(&mut self) -> io::Result<()> {
        self.row.bytes.push(b'}');
        self.first = false;
        self.out.write_all(&self.row.bytes)
    }

    /// Closes the bindings and the document; gives the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(b"]}}")?;
        Ok(self.out)
    }
}

/// A SPARQL JSON row being put together, for a solution source that writes
/// its bindings itself ([`Solutions::next_json`]).
pub struct JsonRow {
    bytes: Vec<u8>,
    /// Each variable's key, escaped, with its colon: `"x":`.
    keys: Vec<Vec<u8>>,
    /// A binding is written (the next is preceded by a comma).
    bound: bool,
}

impl JsonRow {
    fn separate(&mut self) {
        if self.bound {
            self.bytes.push(b',');
        }
        self.bound = true;
    }

    /// Binds the variable at `column` (of the writer's variables) to `term`.
    pub fn term(&mut self, column: usize, term: TermRef<'_>) {
        self.key(column);
        write_term(&mut self.bytes, term);
    }

    /// Binds the variable at `column` to the term encoded as `encoded`
    /// (FORMAT.md §5.1), written as [`Self::term`] writes the decoded term,
    /// with the same checks as the decode, without building it.
    pub fn encoded_term(&mut self, column: usize, encoded: &[u8]) -> Result<(), FormatError> {
        self.key(column);
        write_encoded_term(&mut self.bytes, encoded)
    }

    fn key(&mut self, column: usize) {
        self.separate();
        match self.keys.get(column) {
            Some(key) => self.bytes.extend_from_slice(key),
            None => self.bytes.extend_from_slice(br#""":"#),
        }
    }
}

/// One RDF term as a SPARQL JSON object, keys in sparesults' order.
fn write_term(row: &mut Vec<u8>, term: TermRef<'_>) {
    match term {
        TermRef::NamedNode(node) => write_iri(row, node.as_str()),
        TermRef::BlankNode(node) => write_blank_node(row, node.as_str()),
        TermRef::Literal(literal) => match literal.language() {
            Some(language) => write_language_literal(row, literal.value(), language, literal.direction()),
            None => write_typed_literal(row, literal.value(), literal.datatype().as_str()),
        },
        TermRef::Triple(triple) => {
            row.extend_from_slice(br#"{"type":"triple","value":{"subject":"#);
            write_term(row, triple.subject.as_ref().into());
            row.extend_from_slice(br#","predicate":"#);
            write_term(row, triple.predicate.as_ref().into());
            row.extend_from_slice(br#","object":"#);
            write_term(row, triple.object.as_ref());
            row.extend_from_slice(b"}}");
        }
    }
}

/// An encoded term (FORMAT.md §5.1) as [`write_term`] writes its decoded
/// term: from the bytes for IRIs, blank nodes and literals, whose text is
/// checked to be UTF-8 as the decode checks it; a triple term is decoded.
fn write_encoded_term(row: &mut Vec<u8>, encoded: &[u8]) -> Result<(), FormatError> {
    let text = |bytes| std::str::from_utf8(bytes).map_err(|_| corrupt_term(encoded, "invalid UTF-8"));
    match literal_parts(encoded)? {
        Some(LiteralParts::Simple { lexical }) => write_typed_literal(row, text(lexical)?, xsd::STRING.as_str()),
        Some(LiteralParts::Language { language, direction, lexical }) => write_language_literal(row, text(lexical)?, language, direction),
        Some(LiteralParts::Typed { datatype, lexical }) => write_typed_literal(row, text(lexical)?, datatype),
        None => match encoded_kind(encoded)? {
            TermKind::Iri => write_iri(row, text(&encoded[1..])?),
            TermKind::BlankNode => write_blank_node(row, text(&encoded[1..])?),
            TermKind::Literal | TermKind::TripleTerm => write_term(row, decode_term(encoded)?.as_ref()),
        },
    }
    Ok(())
}

fn write_iri(row: &mut Vec<u8>, iri: &str) {
    row.extend_from_slice(br#"{"type":"uri","value":"#);
    escape(iri, row);
    row.push(b'}');
}

fn write_blank_node(row: &mut Vec<u8>, id: &str) {
    row.extend_from_slice(br#"{"type":"bnode","value":"#);
    escape(id, row);
    row.push(b'}');
}

fn write_language_literal(row: &mut Vec<u8>, value: &str, language: &str, direction: Option<BaseDirection>) {
    row.extend_from_slice(br#"{"type":"literal","value":"#);
    escape(value, row);
    row.extend_from_slice(br#","xml:lang":"#);
    escape(language, row);
    match direction {
        Some(BaseDirection::Ltr) => row.extend_from_slice(br#","its:dir":"ltr""#),
        Some(BaseDirection::Rtl) => row.extend_from_slice(br#","its:dir":"rtl""#),
        None => {}
    }
    row.push(b'}');
}

/// A literal without a language tag; `xsd:string` is written without its datatype.
fn write_typed_literal(row: &mut Vec<u8>, value: &str, datatype: &str) {
    row.extend_from_slice(br#"{"type":"literal","value":"#);
    escape(value, row);
    if datatype != xsd::STRING.as_str() {
        row.extend_from_slice(br#","datatype":"#);
        escape(datatype, row);
    }
    row.push(b'}');
}

/// Escapes `text` into `row`; writing into a `Vec` cannot fail.
fn escape(text: &str, row: &mut Vec<u8>) {
    let _ = write_escaped_json_string(text, row);
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
