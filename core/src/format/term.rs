//! Term encoding (FORMAT.md §5.1): one kind byte, then the term's text.
//! The byte order of encoded terms defines term ids, so this file is the
//! single place that decides how terms sort: numbers and dates of the
//! value-ordered kinds (§5.1.1) sort by value, everything else by text.

use crate::FormatError;
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BaseDirection, BlankNode, Literal, LiteralRef, NamedNode, NamedOrBlankNode, Term, TermRef, Triple};
use oxsdatatypes::{Date, DateTime, Decimal, Double, Float, Integer};

/// A term's 1-based rank in the dictionary; 0 in the graph column means the default graph.
pub type TermId = u64;

const IRI: u8 = 0x01;
const BLANK_NODE: u8 = 0x02;
const SIMPLE_LITERAL: u8 = 0x03;
const LANGUAGE_LITERAL: u8 = 0x04;
const TYPED_LITERAL: u8 = 0x05;
/// FORMAT.md §5.1: an RDF 1.2 triple term, `06 s 00 p 00 o` (format 2.0).
pub const TRIPLE_TERM: u8 = 0x06;
/// FORMAT.md §5.1: triple terms nest at most this deep.
pub const MAX_TRIPLE_TERM_DEPTH: usize = 32;
/// FORMAT.md §5.1.1: a number (xsd:integer and the types derived from it,
/// decimal, float, double), then an 8-byte key in value order (format 2.0,
/// `required_features` bit 2).
pub const NUMBER: u8 = 0x07;
/// FORMAT.md §5.1.1: an xsd:dateTime or xsd:dateTimeStamp, then a 16-byte key.
pub const DATE_TIME: u8 = 0x08;
/// FORMAT.md §5.1.1: an xsd:date, then a 16-byte key.
pub const DATE: u8 = 0x09;
/// Bytes of the key of the number kind.
pub const NUMBER_KEY_BYTES: usize = 8;
/// Bytes of the key of the date and dateTime kinds.
pub const TIMELINE_KEY_BYTES: usize = 16;

/// How a file encodes typed literals (FORMAT.md §5.1): a file with
/// `required_features` bit 2 encodes numbers and dates in the value-ordered
/// kinds, one without it (every earlier file) as kind 0x05. A reader looks a
/// query's constant up in the encoding its file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralOrder {
    /// Every typed literal is kind 0x05, in the order of its text.
    Lexical,
    /// Numbers and dates of valid lexical forms are kinds 0x07–0x09, by value.
    Value,
}

/// Appends the encoded form of `term` to `out` (cleared first), as the
/// reference writer writes it (numbers and dates by value, §5.1.1).
pub fn encode_term_into(term: TermRef<'_>, out: &mut Vec<u8>) {
    out.clear();
    append_term(term, LiteralOrder::Value, out);
}

/// The encoded form of `term` in a file whose literals are in `order`.
pub fn encode_term_as(term: TermRef<'_>, order: LiteralOrder) -> Vec<u8> {
    let mut out = Vec::new();
    append_term(term, order, &mut out);
    out
}

/// How deep triple terms nest in `term`: 0 for a term that is not a triple
/// term, 1 for one whose object is not one either (FORMAT.md §5.1).
pub fn triple_term_depth(term: TermRef<'_>) -> usize {
    let mut depth = 0;
    let mut term = term;
    while let TermRef::Triple(triple) = term {
        depth += 1;
        term = triple.object.as_ref();
    }
    depth
}

fn append_term(term: TermRef<'_>, order: LiteralOrder, out: &mut Vec<u8>) {
    match term {
        TermRef::NamedNode(node) => {
            out.push(IRI);
            out.extend_from_slice(node.as_str().as_bytes());
        }
        TermRef::BlankNode(node) => {
            out.push(BLANK_NODE);
            out.extend_from_slice(node.as_str().as_bytes());
        }
        TermRef::Literal(literal) => {
            if let Some(language) = literal.language() {
                out.push(LANGUAGE_LITERAL);
                out.extend_from_slice(language.as_bytes());
                // RDF 1.2 base direction, as N-Triples 1.2 writes it: BCP 47 tags never hold "--".
                match literal.direction() {
                    Some(BaseDirection::Ltr) => out.extend_from_slice(b"--ltr"),
                    Some(BaseDirection::Rtl) => out.extend_from_slice(b"--rtl"),
                    None => {}
                }
                out.push(0);
            } else if literal.datatype() == xsd::STRING {
                out.push(SIMPLE_LITERAL);
            } else if let Some((kind, key)) = (order == LiteralOrder::Value).then(|| value_key(literal)).flatten() {
                out.push(kind);
                out.extend_from_slice(key.bytes());
                out.extend_from_slice(literal.datatype().as_str().as_bytes());
                out.push(0);
            } else {
                out.push(TYPED_LITERAL);
                out.extend_from_slice(literal.datatype().as_str().as_bytes());
                out.push(0);
            }
            out.extend_from_slice(literal.value().as_bytes());
        }
        TermRef::Triple(triple) => {
            out.push(TRIPLE_TERM);
            append_term(triple.subject.as_ref().into(), order, out);
            out.push(0);
            append_term(triple.predicate.as_ref().into(), order, out);
            out.push(0);
            append_term(triple.object.as_ref(), order, out);
        }
    }
}

/// The encoded form of `term` as the reference writer writes it. A reader
/// looking a literal up uses its file's order (`Store::encode_term`).
pub fn encode_term<'a>(term: impl Into<TermRef<'a>>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_term_into(term.into(), &mut out);
    out
}

/// A value-ordered key (FORMAT.md §5.1.1): up to 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueKey {
    bytes: [u8; TIMELINE_KEY_BYTES],
    length: usize,
}

impl ValueKey {
    /// The key's bytes, as they follow the kind byte.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.length]
    }

    /// The key of a number: an f64 (the value rounded to nearest) whose
    /// bytes compare as the numbers do, -0 as +0.
    pub fn number(value: f64) -> Self {
        let value = if value == 0.0 { 0.0 } else { value };
        let bits = value.to_bits();
        let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
        let mut bytes = [0; TIMELINE_KEY_BYTES];
        bytes[..NUMBER_KEY_BYTES].copy_from_slice(&ordered.to_be_bytes());
        Self { bytes, length: NUMBER_KEY_BYTES }
    }

    /// The key of a point on XSD's timeline: seconds (in units of 10^-18)
    /// from its origin, as a signed 128-bit integer with the sign bit flipped.
    pub fn timeline(value: i128) -> Self {
        Self { bytes: ((value as u128) ^ (1 << 127)).to_be_bytes(), length: TIMELINE_KEY_BYTES }
    }

    /// The number a number key stands for (`None` for another key).
    pub fn as_number(&self) -> Option<f64> {
        let ordered = u64::from_be_bytes(self.bytes().try_into().ok()?);
        Some(f64::from_bits(if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered }))
    }

    /// The timeline point a date or dateTime key stands for.
    pub fn as_timeline(&self) -> Option<i128> {
        let bytes: [u8; TIMELINE_KEY_BYTES] = self.bytes().try_into().ok()?;
        Some((u128::from_be_bytes(bytes) ^ (1 << 127)) as i128)
    }
}

/// The datatypes SPARQL evaluation (spareval) reads as integers.
const INTEGER_TYPES: [&str; 13] = [
    "integer",
    "byte",
    "short",
    "int",
    "long",
    "unsignedByte",
    "unsignedShort",
    "unsignedInt",
    "unsignedLong",
    "positiveInteger",
    "negativeInteger",
    "nonPositiveInteger",
    "nonNegativeInteger",
];

/// Whether literals of this datatype may take a value-ordered kind (those of
/// an invalid lexical form, and NaN, stay kind 0x05).
pub fn is_value_datatype(iri: &str) -> bool {
    iri.strip_prefix("http://www.w3.org/2001/XMLSchema#")
        .is_some_and(|local| INTEGER_TYPES.contains(&local) || ["double", "float", "decimal", "dateTime", "dateTimeStamp", "date"].contains(&local))
}

/// The value-ordered kind and key of a literal (FORMAT.md §5.1.1), `None`
/// for a literal that stays kind 0x05: another datatype, a lexical form
/// SPARQL evaluation does not read as a value of its type (`"abc"^^xsd:integer`),
/// or NaN. Validity is decided by the parsers spareval uses (oxsdatatypes),
/// so a literal has a value-ordered kind exactly when queries see its value.
pub fn value_key(literal: LiteralRef<'_>) -> Option<(u8, ValueKey)> {
    let local = literal.datatype().as_str().strip_prefix("http://www.w3.org/2001/XMLSchema#")?;
    let text = literal.value();
    let number = match local {
        "double" => f64::from(text.parse::<Double>().ok()?),
        "float" => f64::from(f32::from(text.parse::<Float>().ok()?)),
        // Integers and decimals: their exact value rounded to the nearest
        // f64 (Rust's parser rounds correctly), so the key is monotone across
        // every numeric type: a float's or double's value is an f64 already.
        "decimal" => text.parse::<Decimal>().ok().and(text.parse::<f64>().ok())?,
        _ if INTEGER_TYPES.contains(&local) => text.parse::<Integer>().ok().and(text.parse::<f64>().ok())?,
        "dateTime" | "dateTimeStamp" => return Some((DATE_TIME, timeline_key(text.parse::<DateTime>().ok()?.to_be_bytes()))),
        "date" => return Some((DATE, timeline_key(text.parse::<Date>().ok()?.to_be_bytes()))),
        _ => return None,
    };
    (!number.is_nan()).then(|| (NUMBER, ValueKey::number(number)))
}

/// oxsdatatypes' timestamp bytes: the timeline value (i128, big-endian, in
/// units of 10^-18 s, timezone applied; a value without timezone as if UTC),
/// then the timezone.
fn timeline_key(bytes: [u8; 18]) -> ValueKey {
    let mut value = [0; TIMELINE_KEY_BYTES];
    value.copy_from_slice(&bytes[..TIMELINE_KEY_BYTES]);
    ValueKey::timeline(i128::from_be_bytes(value))
}

/// The value-ordered kind and key an encoded term starts with (FORMAT.md
/// §5.1.1), `None` for a term of another kind.
pub fn encoded_value_key(encoded: &[u8]) -> Option<(u8, ValueKey)> {
    let (&kind, rest) = encoded.split_first()?;
    let length = key_length(kind)?;
    let mut bytes = [0; TIMELINE_KEY_BYTES];
    bytes[..length].copy_from_slice(rest.get(..length)?);
    Some((kind, ValueKey { bytes, length }))
}

/// The key bytes that follow a value-ordered kind byte, `None` for another kind.
pub fn key_length(kind: u8) -> Option<usize> {
    match kind {
        NUMBER => Some(NUMBER_KEY_BYTES),
        DATE_TIME | DATE => Some(TIMELINE_KEY_BYTES),
        _ => None,
    }
}

/// Whether an encoded term is or holds (in a triple term) a literal of a
/// value-ordered kind: a file with one needs `required_features` bit 2.
pub fn has_value_order(encoded: &[u8]) -> bool {
    match encoded.first() {
        Some(&kind) if key_length(kind).is_some() => true,
        Some(&TRIPLE_TERM) => split_triple_term(encoded).is_some_and(|[_, _, object]| has_value_order(object)),
        _ => false,
    }
}

/// Decodes an encoded term read from the file.
pub fn decode_term(bytes: &[u8]) -> Result<Term, FormatError> {
    decode_nested(bytes, 0).map_err(|reason| FormatError::corrupt("term", 0, format!("{reason} in {:?}", preview(bytes))))
}

/// A term's kind, from the first byte of its encoded form (FORMAT.md §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermKind {
    /// 0x01.
    Iri,
    /// 0x02.
    BlankNode,
    /// 0x03–0x05, and the value-ordered 0x07–0x09 (§5.1.1).
    Literal,
    /// 0x06.
    TripleTerm,
}

/// The parts of an encoded literal as stored, without decoding its text:
/// for answers that need one part (LANG, DATATYPE, STRLEN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralParts<'a> {
    /// Kind 0x03, `xsd:string`.
    Simple {
        /// The lexical form's bytes (UTF-8 unchecked).
        lexical: &'a [u8],
    },
    /// Kind 0x04.
    Language {
        /// The tag, without its `--ltr`/`--rtl` suffix.
        language: &'a str,
        /// The base direction that suffix gives.
        direction: Option<BaseDirection>,
        /// The lexical form's bytes (UTF-8 unchecked).
        lexical: &'a [u8],
    },
    /// Kind 0x05, or a value-ordered kind (0x07–0x09, its key skipped).
    Typed {
        /// The datatype IRI.
        datatype: &'a str,
        /// The lexical form's bytes (UTF-8 unchecked).
        lexical: &'a [u8],
    },
}

/// The kind of an encoded term.
pub fn encoded_kind(bytes: &[u8]) -> Result<TermKind, FormatError> {
    Ok(match bytes.first() {
        Some(&IRI) => TermKind::Iri,
        Some(&BLANK_NODE) => TermKind::BlankNode,
        Some(&(SIMPLE_LITERAL | LANGUAGE_LITERAL | TYPED_LITERAL | NUMBER | DATE_TIME | DATE)) => TermKind::Literal,
        Some(&TRIPLE_TERM) => TermKind::TripleTerm,
        Some(_) => return Err(corrupt_term(bytes, "unknown term kind")),
        None => return Err(corrupt_term(bytes, "empty term")),
    })
}

/// The parts of an encoded literal (`None` for another kind of term),
/// checked as [`decode_term`] checks them except the lexical form's UTF-8,
/// which is left to whoever reads it.
pub fn literal_parts(bytes: &[u8]) -> Result<Option<LiteralParts<'_>>, FormatError> {
    let Some((&kind, rest)) = bytes.split_first() else { return Err(corrupt_term(bytes, "empty term")) };
    // §5.1.1: a value-ordered literal is kind 0x05 after its key.
    let (kind, rest) = match key_length(kind) {
        Some(length) => (TYPED_LITERAL, rest.get(length..).ok_or_else(|| corrupt_term(bytes, "value-ordered literal shorter than its key"))?),
        None => (kind, rest),
    };
    let head = |what: &'static str| {
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| corrupt_term(bytes, what))?;
        let head = std::str::from_utf8(&rest[..end]).map_err(|_| corrupt_term(bytes, "invalid UTF-8"))?;
        Ok::<_, FormatError>((head, &rest[end + 1..]))
    };
    Ok(Some(match kind {
        SIMPLE_LITERAL => LiteralParts::Simple { lexical: rest },
        LANGUAGE_LITERAL => {
            let (tag, lexical) = head("language tag without separator")?;
            let (language, direction) = match split_direction(tag) {
                Some((language, "ltr")) => (language, Some(BaseDirection::Ltr)),
                Some((language, "rtl")) => (language, Some(BaseDirection::Rtl)),
                Some(_) => return Err(corrupt_term(bytes, "unknown base direction")),
                None => (tag, None),
            };
            LiteralParts::Language { language, direction, lexical }
        }
        TYPED_LITERAL => {
            let (datatype, lexical) = head("datatype without separator")?;
            if datatype == rdf::LANG_STRING.as_str() {
                return Err(corrupt_term(bytes, "rdf:langString without a language tag"));
            }
            LiteralParts::Typed { datatype, lexical }
        }
        _ => {
            encoded_kind(bytes)?;
            return Ok(None);
        }
    }))
}

pub(crate) fn corrupt_term(bytes: &[u8], reason: &str) -> FormatError {
    FormatError::corrupt("term", 0, format!("{reason} in {:?}", preview(bytes)))
}

/// The encoded subject, predicate and object of an encoded triple term
/// (FORMAT.md §5.1), without checking them; `None` when `bytes` is not one.
pub fn split_triple_term(bytes: &[u8]) -> Option<[&[u8]; 3]> {
    let rest = bytes.strip_prefix(&[TRIPLE_TERM])?;
    let (subject, rest) = rest.split_at(rest.iter().position(|&b| b == 0)?);
    let rest = rest.get(1..)?;
    let (predicate, rest) = rest.split_at(rest.iter().position(|&b| b == 0)?);
    Some([subject, predicate, rest.get(1..)?])
}

/// Decodes a term found `depth` triple terms deep.
fn decode_nested(bytes: &[u8], depth: usize) -> Result<Term, &'static str> {
    let (&kind, rest) = bytes.split_first().ok_or("empty term")?;
    if kind == TRIPLE_TERM {
        if depth >= MAX_TRIPLE_TERM_DEPTH {
            return Err("triple terms nested more than 32 deep");
        }
        let [subject, predicate, object] = split_triple_term(bytes).ok_or("triple term without its three parts")?;
        let subject = match decode_nested(subject, depth + 1)? {
            Term::NamedNode(node) => NamedOrBlankNode::from(node),
            Term::BlankNode(node) => node.into(),
            _ => return Err("triple term whose subject is not an IRI or blank node"),
        };
        let Term::NamedNode(predicate) = decode_nested(predicate, depth + 1)? else { return Err("triple term whose predicate is not an IRI") };
        return Ok(Triple::new(subject, predicate, decode_nested(object, depth + 1)?).into());
    }
    let (kind, rest) = match key_length(kind) {
        Some(length) => (TYPED_LITERAL, rest.get(length..).ok_or("value-ordered literal shorter than its key")?),
        None => (kind, rest),
    };
    let text = std::str::from_utf8(rest).map_err(|_| "invalid UTF-8")?;
    Ok(match kind {
        IRI => NamedNode::new_unchecked(text).into(),
        BLANK_NODE => BlankNode::new_unchecked(text).into(),
        SIMPLE_LITERAL => Literal::new_simple_literal(text).into(),
        LANGUAGE_LITERAL => {
            let (language, value) = split_nul(text).ok_or("language tag without separator")?;
            match split_direction(language) {
                Some((language, "ltr")) => Literal::new_directional_language_tagged_literal_unchecked(value, language, BaseDirection::Ltr).into(),
                Some((language, "rtl")) => Literal::new_directional_language_tagged_literal_unchecked(value, language, BaseDirection::Rtl).into(),
                Some(_) => return Err("unknown base direction"),
                None => Literal::new_language_tagged_literal_unchecked(value, language).into(),
            }
        }
        TYPED_LITERAL => {
            let (datatype, value) = split_nul(text).ok_or("datatype without separator")?;
            if datatype == rdf::LANG_STRING.as_str() {
                return Err("rdf:langString without a language tag");
            }
            Literal::new_typed_literal(value, NamedNode::new_unchecked(datatype)).into()
        }
        _ => return Err("unknown term kind"),
    })
}

/// A literal's tag or datatype and its lexical form, split at the first NUL
/// (FORMAT.md §5.1). A byte loop: the tag or datatype before it is short, and
/// `str::split_once('\0')` set up a character searcher per decoded literal
/// (issue 14).
fn split_nul(text: &str) -> Option<(&str, &str)> {
    let at = text.bytes().position(|byte| byte == 0)?;
    text.get(..at).zip(text.get(at + 1..))
}

/// A language tag and its `--ltr`/`--rtl` suffix (FORMAT.md §5.1), if any.
/// A byte search: `str::split_once("--")` built a substring searcher for
/// each decoded literal, a twentieth of a DESCRIBE's work (issue 14).
fn split_direction(tag: &str) -> Option<(&str, &str)> {
    let at = tag.as_bytes().windows(2).position(|pair| pair == b"--")?;
    tag.get(..at).zip(tag.get(at + 2..))
}

/// Whether an encoded term is an IRI (usable as a predicate or class).
pub fn is_iri(encoded: &[u8]) -> bool {
    encoded.first() == Some(&IRI)
}

fn preview(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_kind() {
        let terms: Vec<Term> = vec![
            NamedNode::new_unchecked("http://example.org/é").into(),
            BlankNode::new_unchecked("b0").into(),
            Literal::new_simple_literal("a\0b\n\"").into(),
            Literal::new_language_tagged_literal_unchecked("chat", "fr").into(),
            Literal::new_directional_language_tagged_literal_unchecked("chat", "fr", BaseDirection::Ltr).into(),
            Literal::new_directional_language_tagged_literal_unchecked("قط", "ar", BaseDirection::Rtl).into(),
            Literal::new_typed_literal("01", xsd::INTEGER).into(),
            Literal::new_typed_literal("", NamedNode::new_unchecked("http://x/dt")).into(),
            triple("http://a/s", Literal::new_simple_literal("a\0b").into()).into(),
            Triple::new(BlankNode::new_unchecked("b1"), NamedNode::new_unchecked("http://a/p"), triple("http://a/t", Literal::new_typed_literal("1", xsd::INTEGER).into())).into(),
        ];
        for term in terms {
            assert_eq!(decode_term(&encode_term(&term)).unwrap(), term);
        }
    }

    #[test]
    fn spec_example() {
        let chat = Literal::new_language_tagged_literal_unchecked("chat", "fr");
        assert_eq!(encode_term(&chat), [4, b'f', b'r', 0, b'c', b'h', b'a', b't']);
        // RDF 1.2 base direction: the tag as N-Triples 1.2 spells it (FORMAT.md §5.1).
        let chat = Literal::new_directional_language_tagged_literal_unchecked("chat", "fr", BaseDirection::Ltr);
        assert_eq!(encode_term(&chat), b"\x04fr--ltr\0chat");
        assert!(decode_term(b"\x04fr--up\0chat").is_err());
    }

    fn typed(value: &str, datatype: &str) -> Literal {
        Literal::new_typed_literal(value, NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{datatype}")))
    }

    #[test]
    fn value_ordered_spec_example() {
        // FORMAT.md §5.1.1: 07, the key of 5.0 (0x4014… with the sign bit set), the datatype, 00, "05".
        let mut expected = vec![0x07, 0xC0, 0x14, 0, 0, 0, 0, 0, 0];
        expected.extend_from_slice(b"http://www.w3.org/2001/XMLSchema#integer\x0005");
        assert_eq!(encode_term(&typed("05", "integer")), expected);
        assert_eq!(encode_term_as(typed("05", "integer").as_ref().into(), LiteralOrder::Lexical), b"\x05http://www.w3.org/2001/XMLSchema#integer\x0005");
        // LANG, DATATYPE, isLiteral read the parts after the key (term_functions.rs).
        let encoded = encode_term(&typed("05", "integer"));
        assert_eq!(encoded_kind(&encoded).unwrap(), TermKind::Literal);
        assert_eq!(literal_parts(&encoded).unwrap(), Some(LiteralParts::Typed { datatype: "http://www.w3.org/2001/XMLSchema#integer", lexical: b"05" }));
        assert!(literal_parts(&[DATE, 0x80, 0]).is_err());
        let date = encode_term(&typed("1850-01-01", "date"));
        assert_eq!((date[0], date.len()), (DATE, 1 + 16 + "http://www.w3.org/2001/XMLSchema#date".len() + 1 + 10));
    }

    #[test]
    fn numbers_and_dates_sort_by_value_and_round_trip() {
        let numbers = [
            typed("-INF", "double"),
            typed("-1e300", "double"),
            typed("-7", "byte"),
            typed("-0.5", "decimal"),
            typed("-0.0", "double"),
            typed("0", "integer"),
            typed("0.1", "decimal"),
            typed("0.1", "float"),
            typed("1", "integer"),
            typed("1.0", "decimal"),
            typed("01", "integer"),
            typed("9007199254740993", "integer"),
            typed("123456789012345678.5", "decimal"),
            typed("INF", "double"),
        ];
        let dates = [typed("1850-01-01", "date"), typed("1850-01-01-05:00", "date"), typed("1869-12-31Z", "date"), typed("2000-02-29", "date")];
        let date_times = [typed("1850-01-01T00:00:00+14:00", "dateTime"), typed("1850-01-01T00:00:00", "dateTime"), typed("1850-01-01T00:00:00.5Z", "dateTimeStamp"), typed("24:00:00", "time")];
        for group in [&numbers[..], &dates[..], &date_times[..3]] {
            let encoded: Vec<Vec<u8>> = group.iter().map(encode_term).collect();
            for (pair, terms) in encoded.windows(2).zip(group.windows(2)) {
                // Equal values (0 and -0.0, 1 and 1.0) order by datatype, then text.
                assert!(pair[0][..17.min(pair[0].len())] <= pair[1][..17.min(pair[1].len())], "{} before {}", terms[0], terms[1]);
            }
            for (term, bytes) in group.iter().zip(&encoded) {
                assert!(has_value_order(bytes), "{term}");
                assert_eq!(decode_term(bytes).unwrap(), Term::from(term.clone()));
            }
        }
        // 0.1f32 is above 0.1: the key is the value of the float.
        assert!(encode_term(&typed("0.1", "decimal")) < encode_term(&typed("0.1", "float")));
        // Ill-typed, NaN and other datatypes stay kind 0x05.
        for other in [typed("abc", "integer"), typed("12345678901234567890123.5", "decimal"), typed("99999999999999999999", "integer"), typed("1.5", "integer"), typed("NaN", "double"), typed("2000-13-01", "date"), typed("24:00:00", "time"), typed("1", "boolean")] {
            let bytes = encode_term(&other);
            assert_eq!(bytes[0], TYPED_LITERAL, "{other}");
            assert!(!has_value_order(&bytes));
            assert_eq!(decode_term(&bytes).unwrap(), Term::from(other));
        }
        let nested: Term = triple("http://a/s", typed("1", "integer").into()).into();
        assert!(has_value_order(&encode_term(&nested)));
        assert_eq!(decode_term(&encode_term(&nested)).unwrap(), nested);
        assert!(decode_term(&[NUMBER, 0x80]).is_err());
    }

    #[test]
    fn number_keys_invert() {
        for value in [-1e300, -2.5, 0.0, 1.0, 5.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(ValueKey::number(value).as_number(), Some(value));
        }
        assert_eq!(ValueKey::timeline(-5).as_timeline(), Some(-5));
        assert!(ValueKey::timeline(-5).bytes() < ValueKey::timeline(3).bytes());
    }

    fn triple(subject: &str, object: Term) -> Triple {
        Triple::new(NamedNode::new_unchecked(subject), NamedNode::new_unchecked("http://a/p"), object)
    }

    #[test]
    fn triple_term_spec_example() {
        let term: Term = Triple::new(NamedNode::new_unchecked("http://a/s"), NamedNode::new_unchecked("http://a/p"), Literal::new_simple_literal("o")).into();
        assert_eq!(encode_term(&term), b"\x06\x01http://a/s\0\x01http://a/p\0\x03o");
        assert_eq!(triple_term_depth(term.as_ref()), 1);
        // Triple terms sort after the kinds of format 1 and before the value-ordered kinds (§5.1.1).
        assert!(encode_term(&term) > encode_term(&Literal::new_typed_literal("x", NamedNode::new_unchecked("http://x/dt"))));
        assert!(encode_term(&term) < encode_term(&Literal::new_typed_literal("1", xsd::INTEGER)));
    }

    #[test]
    fn triple_terms_nest_at_most_32_deep() {
        let mut term: Term = NamedNode::new_unchecked("http://a/o").into();
        for _ in 0..MAX_TRIPLE_TERM_DEPTH {
            term = triple("http://a/s", term).into();
        }
        assert_eq!(triple_term_depth(term.as_ref()), 32);
        assert_eq!(decode_term(&encode_term(&term)).unwrap(), term);
        let deeper: Term = triple("http://a/s", term).into();
        let message = decode_term(&encode_term(&deeper)).unwrap_err().to_string();
        assert!(message.contains("nested more than 32 deep"), "{message}");
    }

    #[test]
    fn rejects_bad_triple_terms() {
        for bad in [&b"\x06"[..], b"\x06\x01http://a/s\0\x01http://a/p", b"\x06\x03s\0\x01http://a/p\0\x03o", b"\x06\x01http://a/s\0\x02p\0\x03o", b"\x06\x01http://a/s\0\x01http://a/p\0"] {
            assert!(decode_term(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode_term(&[]).is_err());
        assert!(decode_term(&[9, b'a']).is_err());
        assert!(decode_term(&[4, b'f', b'r']).is_err());
        assert!(decode_term(&[1, 0xff]).is_err());
    }
}
