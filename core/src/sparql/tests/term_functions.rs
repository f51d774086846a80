//! LANG, DATATYPE, isIRI, isBlank, isLiteral, STRLEN and STR answered from encoded
//! terms, and CONTAINS, STRSTARTS and STRENDS tested on their text as stored
//! (`term_functions.rs`), give what spareval gives from the decoded values: the same queries over the same data, against spareval over an
//! in-memory `oxrdf::Dataset`, which builds every value.

use super::*;

const TERMS: &str = r#"
VERSION "1.2"
PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
:s :p :o , _:b , "chat" , "Katze"@de , "Köter"@de-at , "عربي"@ar--rtl , "01"^^xsd:integer , "7"^^xsd:int ,
   "seven"^^xsd:int , "2020-01-01T00:00:00Z"^^xsd:dateTimeStamp , "x"^^:custom , "typed"^^xsd:string ,
   "true"^^xsd:boolean , "maybe"^^xsd:boolean , "" , ""@en , "de" , xsd:integer , <<( :a :b "c"@fr )>> .
"#;

const QUERIES: &[&str] = &[
    "SELECT ?o (LANG(?o) AS ?lang) (DATATYPE(?o) AS ?datatype) (STRLEN(?o) AS ?length) { :s :p ?o }",
    "SELECT ?o (isIRI(?o) AS ?iri) (isBlank(?o) AS ?blank) (isLiteral(?o) AS ?literal) (LANGMATCHES(LANG(?o), \"de\") AS ?german) { :s :p ?o }",
    "SELECT ?o { :s :p ?o FILTER(isLiteral(?o) && LANG(?o) = \"\") }",
    "SELECT ?lang (COUNT(*) AS ?n) { ?s ?p ?o FILTER(isLiteral(?o)) } GROUP BY (LANG(?o) AS ?lang)",
    "SELECT ?datatype (COUNT(*) AS ?n) { ?s ?p ?o BIND(DATATYPE(?o) AS ?datatype) } GROUP BY ?datatype",
    "SELECT ?o { :s :p ?o FILTER(STRLEN(?o) > 4) }",
    "SELECT ?o (STR(?o) AS ?str) (STR(:s) AS ?iri) { :s :p ?o }",
    "SELECT ?o { :s :p ?o FILTER(STR(?o) = \"01\" || STR(?o) = \"http://example.org/o\" || STR(?o) = \"Köter\") }",
    "SELECT ?o { :s :p ?o FILTER(!isIRI(?o) && !isBlank(?o) && !isLiteral(?o)) }",
    "SELECT (LANG(COALESCE(?missing, ?o)) AS ?lang) { :s :p ?o FILTER(isLiteral(?o)) }",
    // LANG and DATATYPE as terms (`internal_function_term`): "de", "" and
    // xsd:integer are stored terms, "de-at" and xsd:boolean are not; xsd:int
    // literals' DATATYPE is decided by their values.
    "SELECT ?o ?same { :s :p ?o , ?same FILTER(sameTerm(LANG(?o), ?same)) }",
    "SELECT ?o ?same { :s :p ?o , ?same FILTER(sameTerm(DATATYPE(?o), ?same)) }",
    "SELECT ?datatype (COUNT(*) AS ?n) { :s :p ?o FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?datatype) } GROUP BY ?datatype",
    "SELECT ?o ?datatype { :s :p ?o BIND(DATATYPE(?o) AS ?datatype) FILTER(!BOUND(?datatype) || ?datatype != xsd:boolean) }",
    "SELECT ?lang (COUNT(*) AS ?n) { :s :p ?o BIND(LANG(?o) AS ?lang) FILTER(BOUND(?lang) && STRLEN(?lang) < 5) } GROUP BY ?lang",
    "SELECT (DATATYPE(\"1\"^^<http://www.w3.org/2001/XMLSchema#short>) AS ?d) (LANG(\"absent\"@nl) AS ?l) (isIRI(:nowhere) AS ?i) {}",
    "SELECT ?o { :s :p ?o FILTER(CONTAINS(?o, \"t\")) }",
    "SELECT ?o (CONTAINS(?o, \"\") AS ?empty) (STRSTARTS(?o, \"K\"@de) AS ?de) (STRENDS(?o, \"er\"@de-at) AS ?at) (CONTAINS(?o, \"ب\"@ar--rtl) AS ?rtl) (STRSTARTS(?o, \"ty\"^^xsd:string) AS ?ty) { :s :p ?o }",
    "SELECT (CONTAINS(\"chat\", \"ha\") AS ?stored) (CONTAINS(\"not stored\", \"st\") AS ?computed) (STRENDS(COALESCE(?missing, :s), \"s\") AS ?iri) {}",
];

fn reference(query: &str) -> BTreeSet<Vec<String>> {
    spareval_rows(TERMS, query)
}

#[test]
fn term_functions_from_encoded_terms_answer_as_values_do() {
    let store = Store::open(fixture::from_trig(TERMS), 1 << 20).unwrap();
    for query in QUERIES {
        let expected = reference(query);
        assert!(!expected.is_empty(), "{query}");
        for options in [QueryOptions::default(), QueryOptions { budget: roomy(), ..QueryOptions::default() }] {
            let got: BTreeSet<_> = rows_with(&store, query, &options).into_iter().collect();
            assert_eq!(got, expected, "{query}");
        }
    }
    // What the encoded answers are, spelled out for a few terms.
    let rows = reference(QUERIES[0]);
    let row = |object: &str| rows.iter().find(|r| r[0] == object).unwrap_or_else(|| panic!("no row for {object}")).clone();
    assert_eq!(row("\"Köter\"@de-at")[1..], ["\"de-at\"", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>", "\"5\"^^<http://www.w3.org/2001/XMLSchema#integer>"]);
    assert_eq!(row("\"عربي\"@ar--rtl")[1..3], ["\"ar\"", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString>"]);
    assert_eq!(row("\"7\"^^<http://www.w3.org/2001/XMLSchema#int>")[2], "<http://www.w3.org/2001/XMLSchema#integer>");
    assert_eq!(row("\"seven\"^^<http://www.w3.org/2001/XMLSchema#int>")[2], "<http://www.w3.org/2001/XMLSchema#int>");
    assert_eq!(row("<:o>")[1..], ["", "", ""], "LANG, DATATYPE and STRLEN of an IRI are errors");
}

#[test]
fn a_corrupt_language_literal_is_an_error_that_names_it() {
    use crate::format::term::literal_parts;
    let error = literal_parts(b"\x04en--up\x00x").unwrap_err().to_string();
    assert!(error.contains("unknown base direction"), "{error}");
    let error = literal_parts(b"\x04en").unwrap_err().to_string();
    assert!(error.contains("language tag without separator"), "{error}");
    let error = literal_parts(b"\x0Ax").unwrap_err().to_string();
    assert!(error.contains("unknown term kind"), "{error}");
    // 0x09 is a date (FORMAT.md §5.1.1): its 16-byte key is missing.
    let error = literal_parts(b"\x09x").unwrap_err().to_string();
    assert!(error.contains("shorter than its key"), "{error}");
    let Err(error) = super::super::term_functions::answer(spareval::TermFunction::StrLen, b"\x03\xff") else { panic!("STRLEN of invalid UTF-8") };
    let error = error.to_string();
    assert!(error.contains("invalid UTF-8"), "{error}");
}
