//! Term encoding (FORMAT.md §5.1): one kind byte, then the term's text.
//! The byte order of encoded terms defines term ids, so this file is the
//! single place that decides how terms sort.

use crate::FormatError;
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BaseDirection, BlankNode, Literal, NamedNode, Term, TermRef};

/// A term's 1-based rank in the dictionary; 0 in the graph column means the default graph.
pub type TermId = u64;

const IRI: u8 = 0x01;
const BLANK_NODE: u8 = 0x02;
const SIMPLE_LITERAL: u8 = 0x03;
const LANGUAGE_LITERAL: u8 = 0x04;
const TYPED_LITERAL: u8 = 0x05;

/// Appends the encoded form of `term` to `out` (cleared first).
pub fn encode_term_into(term: TermRef<'_>, out: &mut Vec<u8>) {
    out.clear();
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
        #[allow(unreachable_patterns)]
        _ => out.push(0),
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
    let bad = |reason: &str| FormatError::corrupt("term", 0, format!("{reason} in {:?}", preview(bytes)));
    let (&kind, rest) = bytes.split_first().ok_or_else(|| bad("empty term"))?;
    let text = std::str::from_utf8(rest).map_err(|_| bad("invalid UTF-8"))?;
    Ok(match kind {
        IRI => NamedNode::new_unchecked(text).into(),
        BLANK_NODE => BlankNode::new_unchecked(text).into(),
        SIMPLE_LITERAL => Literal::new_simple_literal(text).into(),
        LANGUAGE_LITERAL => {
            let (language, value) = text.split_once('\0').ok_or_else(|| bad("language tag without separator"))?;
            match language.split_once("--") {
                Some((language, "ltr")) => Literal::new_directional_language_tagged_literal_unchecked(value, language, BaseDirection::Ltr).into(),
                Some((language, "rtl")) => Literal::new_directional_language_tagged_literal_unchecked(value, language, BaseDirection::Rtl).into(),
                Some(_) => return Err(bad("unknown base direction")),
                None => Literal::new_language_tagged_literal_unchecked(value, language).into(),
            }
        }
        TYPED_LITERAL => {
            let (datatype, value) = text.split_once('\0').ok_or_else(|| bad("datatype without separator"))?;
            if datatype == rdf::LANG_STRING.as_str() {
                return Err(bad("rdf:langString without a language tag"));
            }
            Literal::new_typed_literal(value, NamedNode::new_unchecked(datatype)).into()
        }
        _ => return Err(bad("unknown term kind")),
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

    #[test]
    fn rejects_garbage() {
        assert!(decode_term(&[]).is_err());
        assert!(decode_term(&[9, b'a']).is_err());
        assert!(decode_term(&[4, b'f', b'r']).is_err());
        assert!(decode_term(&[1, 0xff]).is_err());
    }
}
