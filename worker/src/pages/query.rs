//! The query page: `/{ds}/sparql` as HTML. Without a query it is a form
//! holding a starting query (with the card's prefixes); with `?query=` it is
//! the same form followed by the results table, written row by row as the
//! answer streams. The site's script turns the form into an editor that runs
//! queries in place; without the script the form GETs this page again.

use super::layout::{self, Kind};
use super::term::{count, escape};
use serde_json::Value;
use std::fmt::Write as _;

/// Prefixes a starting query declares when the card lists no namespaces.
const COMMON_PREFIXES: [(&str, &str); 6] = [
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
    ("dcterms", "http://purl.org/dc/terms/"),
];

/// At most this many of the card's namespaces become PREFIX lines.
const MAX_PREFIXES: usize = 12;

/// A first query for a dataset: the card's namespaces (`namespaces`
/// [{prefix, iri}], else common ones) as PREFIX lines, then ten triples,
/// from the named graphs when the dataset has some.
pub fn starting_query(card: &Value) -> String {
    let mut text = String::new();
    let namespaces: Vec<(&str, &str)> = card
        .get("namespaces")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(|n| Some((n.get("prefix")?.as_str()?, n.get("iri")?.as_str()?))).take(MAX_PREFIXES).collect())
        .unwrap_or_default();
    let prefixes = if namespaces.is_empty() { COMMON_PREFIXES.to_vec() } else { namespaces };
    for (prefix, iri) in prefixes {
        let _ = writeln!(text, "PREFIX {prefix}: <{iri}>");
    }
    if card.get("graphs").and_then(Value::as_u64).unwrap_or(0) > 0 {
        text.push_str("SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 10\n");
    } else {
        text.push_str("SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10\n");
    }
    text
}

/// A query listing a class's instances in the default graph and in every named graph
/// (a dataset may keep all its triples in named graphs). site/src/summary.ts asks the same.
pub fn instances_query(class: &str) -> String {
    format!("SELECT DISTINCT ?instance WHERE {{ {{ ?instance a <{class}> }} UNION {{ GRAPH ?g {{ ?instance a <{class}> }} }} }} LIMIT 100")
}

/// The query form, GETting `/{ds}/sparql`.
pub fn form(dataset: &str, query: &str) -> String {
    const FORMATS: [(&str, &str); 8] = [
        ("html", "this page"),
        ("json", "SPARQL JSON"),
        ("xml", "SPARQL XML"),
        ("csv", "CSV"),
        ("tsv", "TSV"),
        ("ttl", "Turtle (CONSTRUCT)"),
        ("nt", "N-Triples (CONSTRUCT)"),
        ("jsonld", "JSON-LD (CONSTRUCT)"),
    ];
    let options: String = FORMATS.iter().map(|(value, label)| format!("<option value=\"{value}\">{label}</option>")).collect();
    format!(
        "<form class=\"query\" method=\"get\" action=\"/{dataset}/sparql\">\
         <label for=\"query\">SPARQL query</label>\
         <textarea id=\"query\" name=\"query\" rows=\"12\" spellcheck=\"false\" autocapitalize=\"off\">{query}</textarea>\
         <div class=\"controls\"><label>Results as <select name=\"format\">{options}</select></label> <button type=\"submit\">Run</button></div></form>\n",
        dataset = escape(dataset),
        query = escape(query)
    )
}

/// The query page without a query: the form and the endpoint's counts.
pub fn endpoint(dataset: &str, card: &Value, quads: u64, terms: u64, graphs: usize) -> String {
    let mut page = layout::head(&format!("Query {dataset}"), Some(dataset), Kind::Query);
    page.push_str(&form(dataset, &starting_query(card)));
    page.push_str("<section id=\"results\" aria-label=\"results\"></section>\n");
    let _ = writeln!(
        page,
        "<p>{} triples, {} terms, {graphs} named graphs. Programs use this URL as a SPARQL 1.1 endpoint; its <a href=\"?format=ttl\">service description</a> lists the formats.</p>",
        count(quads),
        count(terms),
    );
    page.push_str(layout::FOOT);
    page
}

/// The query page with a query, up to where its results begin.
pub fn results_top(dataset: &str, query: &str) -> String {
    let mut page = layout::head(&format!("Query {dataset}"), Some(dataset), Kind::Query);
    page.push_str(&form(dataset, query));
    page.push_str("<section id=\"results\" aria-label=\"results\">\n");
    page
}

/// The head of a results table, one column per name (`?var`, or subject/predicate/object).
pub fn table_top(columns: &[String]) -> String {
    let mut top = String::from("<div class=\"scroll\"><table class=\"results\"><thead><tr>");
    for column in columns {
        let _ = write!(top, "<th scope=\"col\">{}</th>", escape(column));
    }
    top.push_str("</tr></thead><tbody>\n");
    top
}

/// A results row of rendered cells.
pub fn row(cells: &[String]) -> String {
    let mut row = String::from("<tr>");
    for cell in cells {
        let _ = write!(row, "<td>{cell}</td>");
    }
    row.push_str("</tr>\n");
    row
}

/// The end of a results table and of the page: `rows` `noun`s (solutions, triples).
pub fn table_end(rows: u64, noun: &str) -> String {
    format!("</tbody></table></div><p class=\"count\">{} {noun}</p></section>\n{}", count(rows), layout::FOOT)
}

/// An ASK answer and the end of the page.
pub fn boolean(value: bool) -> String {
    format!("<p class=\"count\">Answer: <strong>{value}</strong></p></section>\n{}", layout::FOOT)
}

/// The query page for a query the endpoint refused: the form holding it, and the
/// error's message with its position (`body` is the error's JSON body: `message`,
/// and for a syntax error `line`, `column`, 1-based, and `pointer`).
pub fn error_page(dataset: &str, query: &str, body: &Value) -> String {
    let mut page = results_top(dataset, query);
    page.push_str("<div class=\"error\" role=\"alert\">");
    if let (Some(line), Some(column)) = (body.get("line").and_then(Value::as_u64), body.get("column").and_then(Value::as_u64)) {
        let _ = write!(page, "<p class=\"where\">At line {line}, column {column}:</p>");
    }
    let message = body.get("message").and_then(Value::as_str).unwrap_or("the query was refused");
    let pointer = body.get("pointer").and_then(Value::as_str).map(|p| format!("\n{p}")).unwrap_or_default();
    let _ = write!(page, "<pre>{}{}</pre></div></section>\n{}", escape(message), escape(&pointer), layout::FOOT);
    page
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn starting_query_uses_the_card() {
        let with = starting_query(&json!({"namespaces": [{"prefix": "unit", "iri": "http://qudt.org/vocab/unit/", "terms": 9}], "graphs": 7}));
        assert_eq!(with, "PREFIX unit: <http://qudt.org/vocab/unit/>\nSELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 10\n");
        let without = starting_query(&json!({"graphs": 0}));
        assert!(without.starts_with("PREFIX rdf: ") && without.ends_with("SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10\n"), "{without}");
    }

    #[test]
    fn error_page_names_the_position() {
        let page = error_page("ds", "SELEC *", &json!({"message": "invalid query at line 1 column 1: expected <x>", "line": 1, "column": 1, "pointer": "SELEC *\n^"}));
        assert!(page.contains(">SELEC *</textarea>") && page.contains("At line 1, column 1:") && page.contains("expected &lt;x&gt;\nSELEC *\n^</pre>"), "{page}");
    }
}
