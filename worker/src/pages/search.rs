//! The search page (`/{ds}/search` as HTML): a form, and the hits as links
//! to their resource pages, best first. The same form sits on the dataset
//! page ([`form`]); the site's script adds suggestions as you type to both.

use super::layout::{self, Kind};
use super::term::{count, escape, resource_href};
use rete_core::search::SearchOutput;
use std::fmt::Write as _;

/// The search form of a dataset: a GET to `/{ds}/search`, so it works
/// without JavaScript. `lang` is kept as a hidden field when the page was
/// asked for one; `limit` when it is not the default.
pub fn form(dataset: &str, query: &str, lang: &Option<String>, limit: usize) -> String {
    let dataset = escape(dataset);
    let mut hidden = String::new();
    if let Some(lang) = lang {
        let _ = write!(hidden, r#"<input type="hidden" name="lang" value="{}">"#, escape(lang));
    }
    if limit != crate::routes::search::DEFAULT_LIMIT {
        let _ = write!(hidden, r#"<input type="hidden" name="limit" value="{limit}">"#);
    }
    format!(
        r#"<form class="search" role="search" method="get" action="/{dataset}/search" data-dataset="{dataset}"><label for="search-q">Find by name</label> <input id="search-q" name="q" type="search" value="{}" autocomplete="off" spellcheck="false" placeholder="a name or its first letters" required>{hidden} <button type="submit">Search</button></form>"#,
        escape(query)
    )
}

/// The page: the form, and the hits when there was a query.
pub fn page(dataset: &str, output: Option<&SearchOutput>, lang: &Option<String>, limit: usize) -> String {
    let title = match output {
        Some(output) => format!("Search: {}", output.query),
        None => "Search".to_owned(),
    };
    let mut page = layout::head(&title, Some(dataset), Kind::Search);
    page.push_str(&form(dataset, output.map_or("", |o| o.query.as_str()), lang, limit));
    page.push('\n');
    if let Some(output) = output {
        results(&mut page, dataset, output);
    }
    page.push_str(layout::FOOT);
    page
}

fn results(page: &mut String, dataset: &str, output: &SearchOutput) {
    if output.results.is_empty() {
        page.push_str("<p class=\"hits-none\">No resource has a label with these words.</p>\n");
    } else {
        page.push_str("<ol class=\"hits\">\n");
        for hit in &output.results {
            let lang = if hit.lang.is_empty() { String::new() } else { format!(r#" <span class="lang">@{}</span>"#, escape(&hit.lang)) };
            let _ = writeln!(
                page,
                r#"<li><a href="{}">{}</a>{lang} <span class="iri" title="score {}">{}</span></li>"#,
                escape(&resource_href(dataset, &hit.iri)),
                escape(&hit.label),
                hit.score,
                escape(&hit.iri)
            );
        }
        page.push_str("</ol>\n");
    }
    let cut = if output.cut { " Some hits may be missing: a word is too common to list every resource it names; add a word." } else { "" };
    let _ = writeln!(
        page,
        "<p class=\"cost\">{} results from {} rounds of reads, {} requests, {} bytes.{cut}</p>",
        count(output.results.len() as u64),
        output.rounds,
        output.requests,
        count(output.bytes)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use rete_core::search::SearchResult;

    #[test]
    fn hits_link_to_their_resource_pages_and_text_is_escaped() {
        let output = SearchOutput {
            query: "linc <b>".into(),
            results: vec![SearchResult { iri: "http://example.org/a?b=1&c".into(), label: "Lincoln <Abe>".into(), lang: "en".into(), score: 40, types: None }],
            cut: true,
            types_cut: false,
            rounds: 3,
            requests: 4,
            bytes: 5_000,
        };
        let page = page("people", Some(&output), &Some("en".into()), 5);
        assert!(page.contains(r#"<a href="/people/resource?iri=http%3A%2F%2Fexample.org%2Fa%3Fb%3D1%26c">Lincoln &lt;Abe&gt;</a> <span class="lang">@en</span>"#), "{page}");
        assert!(page.contains(r#"value="linc &lt;b&gt;""#), "{page}");
        assert!(page.contains(r#"<input type="hidden" name="lang" value="en"><input type="hidden" name="limit" value="5">"#), "{page}");
        assert!(page.contains("Some hits may be missing"), "{page}");
        assert!(page.contains(r#"data-page="search""#), "{page}");
    }

    #[test]
    fn no_query_shows_the_form_alone() {
        let page = page("people", None, &None, crate::routes::search::DEFAULT_LIMIT);
        assert!(page.contains(r#"action="/people/search""#) && !page.contains("type=\"hidden\"") && !page.contains("<ol"), "{page}");
    }
}
