//! LANG, DATATYPE, isIRI, isBlank, isLiteral, STRLEN and STR of a stored
//! term, answered from its encoded form (FORMAT.md §5.1) without decoding it
//! (spareval's `QueryableDataset::internal_term_function`, vendor/README.md
//! change 10; LANG and DATATYPE also as terms, `internal_function_term`,
//! changes 21 and 23), and CONTAINS/STRSTARTS/STRENDS of it with a constant string
//! tested on its text as stored (`internal_string_test`, change 19). Scans
//! that ask for the language or datatype of every literal spent most of their
//! time building literals only to read their tags, `STR(?code) = "km/h"`
//! built each literal (its datatype IRI, its value) only to keep its lexical
//! form, and `CONTAINS(?label, "Katze")` built each label (its text and tag
//! copied) only to search it.

use crate::FormatError;
use crate::format::term::{LiteralParts, TermKind, encoded_kind, literal_parts};
use oxrdf::NamedNode;
use oxrdf::vocab::{rdf, xsd};
use spareval::{ExpressionTerm, StringLiteralRef, StringTest, TermFunction, TermFunctionAnswer, value_may_change_datatype};

/// What `function` gives on the term encoded as `encoded`: exactly what it
/// gives on the decoded term's value (for DATATYPE, the datatype as stored,
/// which spareval checks, see `TermFunction::Datatype`).
pub(crate) fn answer(function: TermFunction, encoded: &[u8]) -> Result<TermFunctionAnswer, FormatError> {
    let value = TermFunctionAnswer::Value;
    let is = |kind: TermKind| Ok(value(ExpressionTerm::BooleanLiteral((encoded_kind(encoded)? == kind).into())));
    match function {
        TermFunction::IsIri => is(TermKind::Iri),
        TermFunction::IsBlank => is(TermKind::BlankNode),
        TermFunction::IsLiteral => is(TermKind::Literal),
        TermFunction::Lang => Ok(match language(encoded)? {
            Some(language) => value(ExpressionTerm::StringLiteral(language.into())),
            None => TermFunctionAnswer::Error,
        }),
        TermFunction::Datatype => Ok(match datatype(encoded)? {
            Some(datatype) => value(ExpressionTerm::NamedNode(NamedNode::new_unchecked(datatype))),
            None => TermFunctionAnswer::Error,
        }),
        TermFunction::StrLen => match literal_parts(encoded)? {
            Some(LiteralParts::Simple { lexical } | LiteralParts::Language { lexical, .. }) => string_length(encoded, lexical),
            // A literal typed xsd:string decodes as a simple one.
            Some(LiteralParts::Typed { datatype, lexical }) if datatype == xsd::STRING.as_str() => string_length(encoded, lexical),
            Some(LiteralParts::Typed { .. }) | None => Ok(TermFunctionAnswer::Error),
        },
        TermFunction::Str => match encoded_kind(encoded)? {
            TermKind::Iri => text(encoded, encoded.get(1..).unwrap_or_default()).map(string),
            TermKind::Literal => match literal_parts(encoded)? {
                Some(LiteralParts::Simple { lexical } | LiteralParts::Language { lexical, .. } | LiteralParts::Typed { lexical, .. }) => text(encoded, lexical).map(string),
                None => Ok(TermFunctionAnswer::Error),
            },
            _ => Ok(TermFunctionAnswer::Error),
        },
        _ => Ok(TermFunctionAnswer::Unanswered),
    }
}

/// LANG of the term encoded as `encoded`: its language tag, `""` for a
/// literal without one, `None` (an error) for a term that is no literal.
pub(crate) fn language(encoded: &[u8]) -> Result<Option<&str>, FormatError> {
    Ok(match literal_parts(encoded)? {
        Some(LiteralParts::Language { language, .. }) => Some(language),
        Some(LiteralParts::Simple { .. } | LiteralParts::Typed { .. }) => Some(""),
        None => None,
    })
}

/// DATATYPE of the term encoded as `encoded` as stored: its datatype's IRI
/// (`xsd:string` for a simple literal, `rdf:langString` or
/// `rdf:dirLangString` for a tagged one), `None` (an error) for a term that
/// is no literal.
pub(crate) fn datatype(encoded: &[u8]) -> Result<Option<&str>, FormatError> {
    Ok(match literal_parts(encoded)? {
        Some(LiteralParts::Simple { .. }) => Some(xsd::STRING.as_str()),
        Some(LiteralParts::Language { direction: None, .. }) => Some(rdf::LANG_STRING.as_str()),
        Some(LiteralParts::Language { direction: Some(_), .. }) => Some(rdf::DIR_LANG_STRING.as_str()),
        Some(LiteralParts::Typed { datatype, .. }) => Some(datatype),
        None => None,
    })
}

/// DATATYPE of the term encoded as `encoded` as its value has it: the
/// datatype as stored, `None` for a term that is no literal and for a
/// datatype whose values may have another (`"1"^^xsd:int` is an
/// `xsd:integer` value; spareval decides those from the value).
pub(crate) fn datatype_as_value(encoded: &[u8]) -> Result<Option<&str>, FormatError> {
    Ok(datatype(encoded)?.filter(|datatype| !value_may_change_datatype(datatype)))
}

/// `test` of the term encoded as `encoded` when it is a string literal
/// (simple, `xsd:string` or language-tagged), with its text as stored:
/// exactly what `test` gives on the decoded literal's string and language.
pub(crate) fn string_test(encoded: &[u8], test: &StringTest<'_>) -> Result<TermFunctionAnswer, FormatError> {
    let literal = match literal_parts(encoded)? {
        Some(LiteralParts::Simple { lexical }) => StringLiteralRef { value: text(encoded, lexical)?, language: None, direction: None },
        // A literal typed xsd:string decodes as a simple one.
        Some(LiteralParts::Typed { datatype, lexical }) if datatype == xsd::STRING.as_str() => StringLiteralRef { value: text(encoded, lexical)?, language: None, direction: None },
        Some(LiteralParts::Language { language, direction, lexical }) => StringLiteralRef { value: text(encoded, lexical)?, language: Some(language), direction },
        Some(LiteralParts::Typed { .. }) | None => return Ok(TermFunctionAnswer::Error),
    };
    Ok(match test(literal) {
        Some(found) => TermFunctionAnswer::Value(ExpressionTerm::BooleanLiteral(found.into())),
        None => TermFunctionAnswer::Error,
    })
}

fn string(text: &str) -> TermFunctionAnswer {
    TermFunctionAnswer::Value(ExpressionTerm::StringLiteral(text.to_owned()))
}

/// Stored text, checked as the term's decode checks it.
fn text<'t>(encoded: &[u8], bytes: &'t [u8]) -> Result<&'t str, FormatError> {
    std::str::from_utf8(bytes).map_err(|_| FormatError::corrupt("term", 0, format!("invalid UTF-8 in {:?}", String::from_utf8_lossy(&encoded[..encoded.len().min(60)]))))
}

/// STRLEN: the lexical form's length in characters.
fn string_length(encoded: &[u8], lexical: &[u8]) -> Result<TermFunctionAnswer, FormatError> {
    Ok(match i64::try_from(text(encoded, lexical)?.chars().count()) {
        Ok(length) => TermFunctionAnswer::Value(ExpressionTerm::IntegerLiteral(length.into())),
        Err(_) => TermFunctionAnswer::Error,
    })
}
