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
//! A string of at least 16 bytes of ASCII from 0x20 on without `"` or `\`
//! (LUBM's IRIs, most lexical forms) is checked and copied 16 bytes at a
//! time in one pass ([`copy_plain_string`]); any other is checked to be
//! UTF-8 and then escaped, two more walks over its bytes, each of whose
//! loads and stores costs the Worker's wasm a bounds check (issue 14,
//! docs/BENCHMARK.md "Session 24").

use crate::FormatError;
use crate::format::term::{LiteralParts, TermKind, corrupt_term, decode_term, encoded_kind, literal_parts};
use crate::read::{SHORT, extend_short};
use crate::sparql::{QuerySolution, Solutions, Variable};
use json_event_parser::write_escaped_json_string;
use oxrdf::vocab::xsd;
use oxrdf::{BaseDirection, TermRef};
use std::io::{self, Write};
use std::str::Utf8Error;

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
            keys.push(Key::new(key));
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
    keys: Vec<Key>,
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
            Some(key) => extend_short(&mut self.bytes, key.bytes(), key.padded.first_chunk()),
            None => self.bytes.extend_from_slice(br#""":"#),
        }
    }
}

/// A variable's key as a row writes it (`"x":`), followed by zeros up to
/// [`SHORT`] bytes, so that a short key is appended as one copy of fixed
/// length (`extend_short`: each binding of each row writes its key).
struct Key {
    padded: Vec<u8>,
    length: usize,
}

impl Key {
    fn new(mut key: Vec<u8>) -> Self {
        let length = key.len();
        key.resize(length.max(SHORT), 0);
        Self { padded: key, length }
    }

    fn bytes(&self) -> &[u8] {
        &self.padded[..self.length]
    }
}

/// One RDF term as a SPARQL JSON object, keys in sparesults' order.
fn write_term(row: &mut Vec<u8>, term: TermRef<'_>) {
    // Checked text is never `Err`.
    let _ = match term {
        TermRef::NamedNode(node) => write_iri(row, Text::Checked(node.as_str())),
        TermRef::BlankNode(node) => write_blank_node(row, Text::Checked(node.as_str())),
        TermRef::Literal(literal) => match literal.language() {
            Some(language) => write_language_literal(row, Text::Checked(literal.value()), language, literal.direction()),
            None => write_typed_literal(row, Text::Checked(literal.value()), literal.datatype().as_str()),
        },
        TermRef::Triple(triple) => {
            row.extend_from_slice(br#"{"type":"triple","value":{"subject":"#);
            write_term(row, triple.subject.as_ref().into());
            row.extend_from_slice(br#","predicate":"#);
            write_term(row, triple.predicate.as_ref().into());
            row.extend_from_slice(br#","object":"#);
            write_term(row, triple.object.as_ref());
            row.extend_from_slice(b"}}");
            Ok(())
        }
    };
}

/// An encoded term (FORMAT.md §5.1) as [`write_term`] writes its decoded
/// term: from the bytes for IRIs, blank nodes and literals, whose text is
/// checked to be UTF-8 as the decode checks it; a triple term is decoded.
fn write_encoded_term(row: &mut Vec<u8>, encoded: &[u8]) -> Result<(), FormatError> {
    let written = match encoded_kind(encoded)? {
        TermKind::Iri => write_iri(row, Text::Unchecked(&encoded[1..])),
        TermKind::BlankNode => write_blank_node(row, Text::Unchecked(&encoded[1..])),
        TermKind::Literal => match literal_parts(encoded)? {
            Some(LiteralParts::Simple { lexical }) => write_typed_literal(row, Text::Unchecked(lexical), xsd::STRING.as_str()),
            Some(LiteralParts::Language { language, direction, lexical }) => write_language_literal(row, Text::Unchecked(lexical), language, direction),
            Some(LiteralParts::Typed { datatype, lexical }) => write_typed_literal(row, Text::Unchecked(lexical), datatype),
            None => {
                write_term(row, decode_term(encoded)?.as_ref());
                Ok(())
            }
        },
        TermKind::TripleTerm => {
            write_term(row, decode_term(encoded)?.as_ref());
            Ok(())
        }
    };
    written.map_err(|_| corrupt_term(encoded, "invalid UTF-8"))
}

/// A string to write: text, or bytes from the dictionary still to be
/// checked to be UTF-8, which only those needing more than a copy are.
#[derive(Clone, Copy)]
enum Text<'a> {
    Checked(&'a str),
    Unchecked(&'a [u8]),
}

fn write_iri(row: &mut Vec<u8>, iri: Text<'_>) -> Result<(), Utf8Error> {
    row.extend_from_slice(br#"{"type":"uri","value":"#);
    write_string(row, iri)?;
    row.push(b'}');
    Ok(())
}

fn write_blank_node(row: &mut Vec<u8>, id: Text<'_>) -> Result<(), Utf8Error> {
    row.extend_from_slice(br#"{"type":"bnode","value":"#);
    write_string(row, id)?;
    row.push(b'}');
    Ok(())
}

fn write_language_literal(row: &mut Vec<u8>, value: Text<'_>, language: &str, direction: Option<BaseDirection>) -> Result<(), Utf8Error> {
    row.extend_from_slice(br#"{"type":"literal","value":"#);
    write_string(row, value)?;
    row.extend_from_slice(br#","xml:lang":"#);
    escape(language, row);
    match direction {
        Some(BaseDirection::Ltr) => row.extend_from_slice(br#","its:dir":"ltr""#),
        Some(BaseDirection::Rtl) => row.extend_from_slice(br#","its:dir":"rtl""#),
        None => {}
    }
    row.push(b'}');
    Ok(())
}

/// A literal without a language tag; `xsd:string` is written without its datatype.
fn write_typed_literal(row: &mut Vec<u8>, value: Text<'_>, datatype: &str) -> Result<(), Utf8Error> {
    row.extend_from_slice(br#"{"type":"literal","value":"#);
    write_string(row, value)?;
    if datatype != xsd::STRING.as_str() {
        row.extend_from_slice(br#","datatype":"#);
        escape(datatype, row);
    }
    row.push(b'}');
    Ok(())
}

/// Writes `text` as a JSON string: copied when it is plain
/// ([`copy_plain_string`]), else checked to be UTF-8 if it was not and
/// escaped; `Err` when unchecked bytes are not UTF-8.
fn write_string(row: &mut Vec<u8>, text: Text<'_>) -> Result<(), Utf8Error> {
    let text = match text {
        Text::Checked(text) if copy_plain_string(row, text.as_bytes()) => return Ok(()),
        Text::Unchecked(bytes) if copy_plain_string(row, bytes) => return Ok(()),
        Text::Checked(text) => text,
        Text::Unchecked(bytes) => std::str::from_utf8(bytes)?,
    };
    escape(text, row);
    Ok(())
}

/// Bytes checked and copied at a time by [`copy_plain_string`].
const LANES: usize = 16;

/// Writes `bytes` in quotes, as they are, when there are at least
/// [`LANES`] of them and each is ASCII from 0x20 on other than `"` and `\`
/// (valid UTF-8 that JSON writes as it is), and says whether it did; else
/// writes nothing. One pass, [`LANES`] bytes at a time (the last ones as
/// the window ending at the last byte), instead of `from_utf8`'s and the
/// escaper's, and the copy of a run of fixed length, which wasm does
/// without calling out of its code (a `memory.copy` is a call into V8).
fn copy_plain_string(row: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let Some(last_window) = bytes.last_chunk::<LANES>() else { return false };
    let (chunks, tail) = bytes.as_chunks::<LANES>();
    let start = row.len();
    row.reserve(bytes.len() + 2);
    row.push(b'"');
    for chunk in chunks {
        if !is_plain(chunk) {
            row.truncate(start);
            return false;
        }
        row.extend_from_slice(chunk);
    }
    if !tail.is_empty() {
        if !is_plain(last_window) {
            row.truncate(start);
            return false;
        }
        // The window's first bytes were just copied: copy it whole over them.
        row.truncate(row.len() - (LANES - tail.len()));
        row.extend_from_slice(last_window);
    }
    row.push(b'"');
    true
}

/// Whether every byte is ASCII from 0x20 on (0x20–0x7F) other than `"` and
/// `\`: as a signed byte ≥ 0x20 (bytes from 0x80 are negative), not equal
/// to either. In the Worker's wasm, with SIMD's 16-byte vectors.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn is_plain(chunk: &[u8; LANES]) -> bool {
    use core::arch::wasm32::{i8x16_eq, i8x16_lt, i8x16_splat, u8x16, u8x16_splat, v128_any_true, v128_or};
    let c = chunk;
    // Compiled to one `v128.load`.
    let bytes = u8x16(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]);
    let control_or_not_ascii = i8x16_lt(bytes, i8x16_splat(0x20));
    let quote_or_backslash = v128_or(i8x16_eq(bytes, u8x16_splat(b'"')), i8x16_eq(bytes, u8x16_splat(b'\\')));
    !v128_any_true(v128_or(control_or_not_ascii, quote_or_backslash))
}

/// Whether every byte is ASCII from 0x20 on (0x20–0x7F) other than `"` and
/// `\`, in two 64-bit words: a byte's high bit is set in the byte (0x80
/// and up) or in the byte less 0x20 (below 0x20; a borrow only comes from
/// such a byte), and `"` and `\` by the "has a zero byte" test, exact for
/// whether any byte is.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn is_plain(chunk: &[u8; LANES]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = ONES * 0x80;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let flags = |x: u64| ((x | x.wrapping_sub(ONES * 0x20)) & HIGHS) | zero_byte(x ^ (ONES * u64::from(b'"'))) | zero_byte(x ^ (ONES * u64::from(b'\\')));
    let (words, _) = chunk.as_chunks::<8>();
    words.iter().fold(0, |found, &word| found | flags(u64::from_le_bytes(word))) == 0
}

/// Escapes `text` into `row` (json-event-parser's escaper, sparesults' own);
/// writing into a `Vec` cannot fail.
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
        let mut terms: Vec<Term> = vec![iri("http://example.org/s").into(), iri("http://www.Department0.University0.edu/UndergraduateStudent100").into(), iri("http://ex.org/a\"b").into(), BlankNode::new_unchecked("b0").into()];
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
        // Keys shorter and longer than the copy of fixed length (`extend_short`).
        let variables: Vec<Variable> = ["s", "o", "a_variable_longer_than_sixteen_bytes"].map(Variable::new_unchecked).to_vec();
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

    /// Strings copied whole or escaped are written as the escaper writes
    /// them, with each byte that stops the copy at every place of strings
    /// shorter than, as long as and longer than the copy's 16 bytes.
    #[test]
    fn plain_strings_are_written_as_the_escaper_writes_them() {
        let stoppers = ["\"", "\\", "\u{0}", "\n", "\u{1f}", "é", "日", "🦀"];
        let mut strings: Vec<String> = Vec::new();
        for length in 0..50 {
            let plain: String = (0..length).map(|i| char::from(b' ' + (i * 7 % 95) as u8)).filter(|c| !matches!(c, '"' | '\\')).collect();
            strings.push(plain.clone());
            for place in 0..=plain.len() {
                for stopper in stoppers {
                    strings.push(format!("{}{stopper}{}", &plain[..place], &plain[place..]));
                }
            }
        }
        strings.push("\u{7f}".repeat(40));
        for string in &strings {
            let mut expected = b"[".to_vec();
            write_escaped_json_string(string, &mut expected).unwrap();
            for text in [Text::Checked(string), Text::Unchecked(string.as_bytes())] {
                let mut row = b"[".to_vec();
                write_string(&mut row, text).unwrap();
                assert_eq!(row, expected, "{string:?}");
            }
        }
        // Bytes that are not UTF-8, wherever they are, are an error.
        for length in [0, 15, 16, 17, 33] {
            for place in 0..=length {
                for bad in [&[0xff][..], &[0xc3], &[0xe6, 0x97], &[0x80]] {
                    let mut bytes = vec![b'a'; length];
                    bytes.splice(place..place, bad.iter().copied());
                    assert!(write_string(&mut Vec::new(), Text::Unchecked(&bytes)).is_err(), "{bytes:?}");
                }
            }
        }
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
