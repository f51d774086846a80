//! Server-rendered HTML for people: one page frame, escaping, and RDF terms
//! as links to their resource view. Plain HTML that works without
//! JavaScript; the site (issue 8) may replace these pages.

use oxrdf::{Term, TermRef};
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes a query parameter value.
pub fn encode_param(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The resource view URL of an IRI in a dataset (path only).
pub fn resource_href(dataset: &str, iri: &str) -> String {
    format!("/{dataset}/resource?iri={}", encode_param(iri))
}

/// The top of a page, up to the start of `<main>`.
pub fn head(title: &str, dataset: Option<&str>) -> String {
    let nav = match dataset {
        Some(name) => format!(
            r#"<a href="/">datasets</a> › <a href="/{name}/card">{name}</a> · <a href="/{name}/sparql">sparql</a> · <a href="/{name}/summary">summary</a>"#,
            name = escape(name)
        ),
        None => r#"<a href="/">datasets</a>"#.to_owned(),
    };
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · rete</title>
<style>body{{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:0 1rem 3rem}}nav{{padding:.8rem 0;border-bottom:1px solid #ddd}}
table{{border-collapse:collapse;margin:.5rem 0}}td,th{{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}}
th{{background:#f4f4f4}}td.n{{text-align:right}}code,pre,textarea{{font:13px/1.4 ui-monospace,monospace}}textarea{{width:100%;box-sizing:border-box}}
.lit{{color:#063}}.dt{{color:#777;font-size:85%}}a{{color:#03c}}</style></head>
<body><nav>{nav}</nav><main><h1>{title}</h1>
"#,
        title = escape(title)
    )
}

/// The end of a page.
pub const FOOT: &str = "</main></body></html>\n";

/// A term for a table cell: IRIs link to their resource view.
pub fn term(dataset: &str, term: TermRef<'_>) -> String {
    match term {
        TermRef::NamedNode(node) => format!(r#"<a href="{}">{}</a>"#, escape(&resource_href(dataset, node.as_str())), escape(node.as_str())),
        TermRef::BlankNode(node) => format!("<code>_:{}</code>", escape(node.as_str())),
        TermRef::Literal(literal) => {
            let mut cell = format!(r#"<span class="lit">{}</span>"#, escape(literal.value()));
            if let Some(language) = literal.language() {
                let _ = write!(cell, r#" <span class="dt">@{}</span>"#, escape(language));
            } else if literal.datatype() != oxrdf::vocab::xsd::STRING {
                let _ = write!(cell, r#" <span class="dt">^^{}</span>"#, escape(literal.datatype().as_str()));
            }
            cell
        }
        #[allow(unreachable_patterns)]
        other => escape(&other.to_string()),
    }
}

/// An owned term for a table cell.
pub fn owned_term(dataset: &str, value: &Term) -> String {
    term(dataset, value.as_ref())
}

/// A form posting nothing: a GET query box for a dataset's endpoint.
pub fn query_form(dataset: &str, query: &str) -> String {
    format!(
        r#"<form method="get" action="/{dataset}/sparql"><textarea name="query" rows="10" aria-label="SPARQL query">{query}</textarea>
<p><label>format <select name="format"><option value="html">HTML</option><option value="json">SPARQL JSON</option><option value="xml">SPARQL XML</option><option value="csv">CSV</option><option value="tsv">TSV</option><option value="ttl">Turtle</option><option value="nt">N-Triples</option><option value="jsonld">JSON-LD</option></select></label>
<button type="submit">Run</button></p></form>
"#,
        dataset = escape(dataset),
        query = escape(query)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_links() {
        assert_eq!(escape(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let node = oxrdf::NamedNode::new_unchecked("http://x/a?b=c&d");
        let cell = term("ds", node.as_ref().into());
        assert!(cell.contains("/ds/resource?iri=http%3A%2F%2Fx%2Fa%3Fb%3Dc%26d"), "{cell}");
    }
}
