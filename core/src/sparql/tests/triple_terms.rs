//! RDF 1.2 triple terms (FORMAT.md §5.1, kind 0x06) stored in a file and met
//! by SPARQL 1.2: patterns inside them, the functions that build and take
//! them apart, and every result format (JSON-LD refuses them by name).

use super::*;
use crate::results::WriteError;

const TRIPLES: &str = r#"
VERSION "1.2"
PREFIX : <http://example.org/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
:alice :knows :bob {| :since 2019 |} .
:claim rdf:reifies <<( :bob :says <<( :alice :age "030"^^<http://www.w3.org/2001/XMLSchema#integer> )>> )>> .
:g1 { :other rdf:reifies <<( _:b :knows :carol )>> . }
"#;

fn triple_store() -> Store<Vec<u8>> {
    Store::open(fixture::from_trig(TRIPLES), 1 << 20).unwrap()
}

const TRUE: &str = "\"true\"^^<http://www.w3.org/2001/XMLSchema#boolean>";
const RDF: &str = "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ";

fn triple_rows(query: &str) -> BTreeSet<Vec<String>> {
    let store = triple_store();
    let query = &format!("{RDF}{query}");
    let plain: BTreeSet<_> = rows_with(&store, query, &QueryOptions::default()).into_iter().collect();
    let hooked: BTreeSet<_> = rows_with(&store, query, &QueryOptions { budget: roomy(), ..QueryOptions::default() }).into_iter().collect();
    assert_eq!(plain, hooked, "{query}");
    plain
}

#[test]
fn a_file_with_triple_terms_is_format_2_with_bit_0() {
    let header = triple_store().header().clone();
    assert_eq!((header.major_version, header.minor_version), (2, 0));
    assert!(header.has_triple_terms());
    // The plain fixture has numbers (value-ordered, FORMAT.md §5.1.1) and the
    // test writer's coding bytes (§6.1) but no triple terms.
    use crate::format::header::{FEATURE_RESTART_CODINGS, FEATURE_VALUE_ORDER};
    let plain = store().header().clone();
    assert_eq!((plain.major_version, plain.minor_version, plain.required_features), (2, 0, FEATURE_VALUE_ORDER | FEATURE_RESTART_CODINGS));
}

#[test]
fn patterns_match_inside_stored_triple_terms() {
    // The annotation's reifier is a fresh blank node.
    let rows = triple_rows("SELECT ?s ?o (isBLANK(?r) AS ?anonymous) WHERE { ?r rdf:reifies <<( ?s :knows ?o )>> }");
    assert_eq!(rows, set(&[&["<:alice>", "<:bob>", TRUE]]));
    // Nested, with the stored lexical form kept.
    assert_eq!(triple_rows("SELECT ?v WHERE { :claim rdf:reifies <<( :bob :says <<( :alice :age ?v )>> )>> }"), set(&[&["\"030\"^^<http://www.w3.org/2001/XMLSchema#integer>"]]));
    // The annotation syntax, and a triple term given in full.
    assert_eq!(triple_rows("SELECT ?y WHERE { :alice :knows :bob {| :since ?y |} }"), set(&[&["\"2019\"^^<http://www.w3.org/2001/XMLSchema#integer>"]]));
    assert_eq!(triple_rows("SELECT ?r WHERE { ?r rdf:reifies <<( :bob :says <<( :alice :age \"030\"^^xsd:integer )>> )>> }"), set(&[&["<:claim>"]]));
    // The same triple term with another lexical form is another term.
    assert!(triple_rows("SELECT ?r WHERE { ?r rdf:reifies <<( :bob :says <<( :alice :age 30 )>> )>> }").is_empty());
    // VALUES too: a triple term is equal to another only with the same terms as parts.
    assert_eq!(triple_rows("SELECT ?r WHERE { VALUES ?t { <<( :bob :says <<( :alice :age \"030\"^^xsd:integer )>> )>> <<( :bob :says <<( :alice :age 30 )>> )>> } ?r rdf:reifies ?t }"), set(&[&["<:claim>"]]));
    // GRAPH ?g reaches a triple term with a blank node inside.
    assert_eq!(triple_rows("SELECT ?g (isBLANK(?b) AS ?blank) WHERE { GRAPH ?g { ?r rdf:reifies <<( ?b :knows :carol )>> } }"), set(&[&["<:g1>", TRUE]]));
}

#[test]
fn functions_build_and_take_apart_triple_terms() {
    let rows = triple_rows("SELECT (isTRIPLE(?t) AS ?is) (SUBJECT(?t) AS ?s) (PREDICATE(OBJECT(?t)) AS ?p) (TRIPLE(:bob, :says, OBJECT(?t)) = ?t AS ?same) WHERE { :claim rdf:reifies ?t }");
    assert_eq!(rows, set(&[&[TRUE, "<:bob>", "<:age>", TRUE]]));
}

#[test]
fn every_format_but_json_ld_writes_triple_terms() {
    let store = triple_store();
    let construct = &format!("{RDF}CONSTRUCT {{ ?r :about ?t }} WHERE {{ :claim rdf:reifies ?t BIND(:claim AS ?r) }}");
    for (format, fragment) in [
        (ResultFormat::NTriples, "<http://example.org/claim> <http://example.org/about> <<( <http://example.org/bob> <http://example.org/says> <<( "),
        (ResultFormat::Turtle, "<<( "),
        (ResultFormat::NQuads, "<<( "),
        (ResultFormat::TriG, "<<( "),
        (ResultFormat::RdfXml, "rdf:parseType=\"Triple\""),
    ] {
        let bytes = write_answer(run(&store, construct, &QueryOptions::default()).unwrap(), format, Vec::new()).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains(fragment), "{format}: {text}");
    }
    let error = write_answer(run(&store, construct, &QueryOptions::default()).unwrap(), ResultFormat::JsonLd, Vec::new()).unwrap_err();
    assert!(matches!(error, WriteError::TripleTermsUnsupported { .. }), "{error}");
    assert_eq!(error.to_string(), "jsonld cannot hold RDF 1.2 triple terms, which this answer has; use nt, ttl, nq, trig or rdf");
    let select = &format!("{RDF}SELECT ?t WHERE {{ :claim rdf:reifies ?t }}");
    for (format, fragment) in [
        (ResultFormat::Json, r#"{"type":"triple","value":{"subject":{"type":"uri","value":"http://example.org/bob"}"#),
        (ResultFormat::Xml, "<triple><subject><uri>http://example.org/bob</uri></subject>"),
        (ResultFormat::Tsv, "<<( <http://example.org/bob> <http://example.org/says> <<( "),
        (ResultFormat::Csv, "http://example.org/bob http://example.org/says http://example.org/alice"),
    ] {
        let bytes = write_answer(run(&store, select, &QueryOptions::default()).unwrap(), format, Vec::new()).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains(fragment), "{format}: {text}");
    }
}
