//! Term encoding (FORMAT.md §5.1): one kind byte, then the term's text.
//! The byte order of encoded terms defines term ids, so this file is the
//! single place that decides how terms sort.

use crate::FormatError;
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BaseDirection, BlankNode, Literal, NamedNode, NamedOrBlankNode, Term, TermRef, Triple};

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

/// Appends the encoded form of `term` to `out` (cleared first).
pub fn encode_term_into(term: TermRef<'_>, out: &mut Vec<u8>) {
    out.clear();
    append_term(term, out);
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

fn append_term(term: TermRef<'_>, out: &mut Vec<u8>) {
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
            } else {
                out.push(TYPED_LITERAL);
                out.extend_from_slice(literal.datatype().as_str().as_bytes());
                out.push(0);
            }
            out.extend_from_slice(literal.value().as_bytes());
        }
        TermRef::Triple(triple) => {
            out.push(TRIPLE_TERM);
            append_term(triple.subject.as_ref().into(), out);
            out.push(0);
            append_term(triple.predicate.as_ref().into(), out);
            out.push(0);
            append_term(triple.object.as_ref(), out);
        }
    }
}

/// The encoded form of `term`.
pub fn encode_term<'a>(term: impl Into<TermRef<'a>>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_term_into(term.into(), &mut out);
    out
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
    /// 0x03–0x05.
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
    /// Kind 0x05.
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
        Some(&(SIMPLE_LITERAL | LANGUAGE_LITERAL | TYPED_LITERAL)) => TermKind::Literal,
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
    let head = |what: &'static str| {
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| corrupt_term(bytes, what))?;
        let head = std::str::from_utf8(&rest[..end]).map_err(|_| corrupt_term(bytes, "invalid UTF-8"))?;
        Ok::<_, FormatError>((head, &rest[end + 1..]))
    };
    Ok(Some(match kind {
        SIMPLE_LITERAL => LiteralParts::Simple { lexical: rest },
        LANGUAGE_LITERAL => {
            let (tag, lexical) = head("language tag without separator")?;
            let (language, direction) = match tag.split_once("--") {
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

fn corrupt_term(bytes: &[u8], reason: &str) -> FormatError {
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
    let text = std::str::from_utf8(rest).map_err(|_| "invalid UTF-8")?;
    Ok(match kind {
        IRI => NamedNode::new_unchecked(text).into(),
        BLANK_NODE => BlankNode::new_unchecked(text).into(),
        SIMPLE_LITERAL => Literal::new_simple_literal(text).into(),
        LANGUAGE_LITERAL => {
            let (language, value) = text.split_once('\0').ok_or("language tag without separator")?;
            match language.split_once("--") {
                Some((language, "ltr")) => Literal::new_directional_language_tagged_literal_unchecked(value, language, BaseDirection::Ltr).into(),
                Some((language, "rtl")) => Literal::new_directional_language_tagged_literal_unchecked(value, language, BaseDirection::Rtl).into(),
                Some(_) => return Err("unknown base direction"),
                None => Literal::new_language_tagged_literal_unchecked(value, language).into(),
            }
        }
        TYPED_LITERAL => {
            let (datatype, value) = text.split_once('\0').ok_or("datatype without separator")?;
            if datatype == rdf::LANG_STRING.as_str() {
                return Err("rdf:langString without a language tag");
            }
            Literal::new_typed_literal(value, NamedNode::new_unchecked(datatype)).into()
        }
        _ => return Err("unknown term kind"),
    })
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

    fn triple(subject: &str, object: Term) -> Triple {
        Triple::new(NamedNode::new_unchecked(subject), NamedNode::new_unchecked("http://a/p"), object)
    }

    #[test]
    fn triple_term_spec_example() {
        let term: Term = Triple::new(NamedNode::new_unchecked("http://a/s"), NamedNode::new_unchecked("http://a/p"), Literal::new_simple_literal("o")).into();
        assert_eq!(encode_term(&term), b"\x06\x01http://a/s\0\x01http://a/p\0\x03o");
        assert_eq!(triple_term_depth(term.as_ref()), 1);
        // Triple terms sort after every other kind, so they hold a file's highest ids.
        assert!(encode_term(&term) > encode_term(&Literal::new_typed_literal("1", xsd::INTEGER)));
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
