//! The dataset page (`/{ds}`, and the HTML form of `/{ds}/card` and
//! `/{ds}/summary`): the card rendered, with the top classes and predicates
//! as bar charts, a query box, and a place for the summary picture that the
//! site's script draws from `/{ds}/summary`.
//!
//! The card is read as JSON members by name, not as the Rust struct: members
//! a newer card carries (title, languages, namespaces, …) show up when
//! present and are skipped when absent, with no change here.

use super::layout::{self, Kind};
use super::query;
use super::term::{bytes, count, escape, iri_link, query_href};
use crate::datasets::VersionEntry;
use serde_json::Value;
use std::fmt::Write as _;

/// Rows shown per list (classes, predicates, languages, …); the card JSON has them all.
const ROWS: usize = 20;

fn text<'a>(card: &'a Value, member: &str) -> Option<&'a str> {
    card.get(member).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn number(card: &Value, member: &str) -> Option<u64> {
    card.get(member).and_then(Value::as_u64)
}

fn list<'a>(card: &'a Value, member: &str) -> &'a [Value] {
    card.get(member).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A value that may be an IRI or URL: a link when it looks like one.
fn link_or_text(value: &str) -> String {
    if value.starts_with("http://") || value.starts_with("https://") {
        format!(r#"<a href="{0}">{0}</a>"#, escape(value))
    } else {
        escape(value)
    }
}

/// The page for a dataset's card (`card` is the card's JSON; `check` the
/// tier-0 coherence check's, when the file has its axioms).
pub fn page(name: &str, entry: &VersionEntry, card: &Value, check: Option<&Value>) -> String {
    let title = text(card, "title").unwrap_or(name);
    let mut page = layout::head(title, Some(name), Kind::Dataset);
    if let Some(description) = text(card, "description") {
        let _ = writeln!(page, "<p class=\"description\">{}</p>", escape(description));
    }
    // A file with a label search index (its card says so) gets a search box first.
    if card.get("search").is_some_and(|search| !search.is_null()) {
        let _ = writeln!(page, "{}", super::search::form(name, "", &None, crate::routes::search::DEFAULT_LIMIT));
    }
    facts(&mut page, name, entry, card);
    let _ = writeln!(
        page,
        "<section aria-labelledby=\"query-h\"><h2 id=\"query-h\">Query</h2>{}</section>",
        query::form(name, &query::starting_query(card))
    );
    summary_section(&mut page, name);
    page.push_str(&super::graph::check_section(name, check));
    classes(&mut page, name, card);
    bars(&mut page, name, "Predicates", "predicate", "triples", list(card, "predicates"), "quads", number(card, "predicates_more"));
    languages(&mut page, card);
    bars(&mut page, name, "Datatypes", "datatype", "literals", list(card, "datatypes"), "literals", number(card, "datatypes_more"));
    namespaces(&mut page, card);
    let sources = list(card, "sources");
    if !sources.is_empty() {
        page.push_str("<section aria-labelledby=\"sources-h\"><h2 id=\"sources-h\">Sources</h2><ul>\n");
        for source in sources {
            let _ = writeln!(page, "<li><code>{}</code> ({})</li>", escape(text(source, "name").unwrap_or("?")), bytes(number(source, "bytes").unwrap_or(0)));
        }
        page.push_str("</ul></section>\n");
    }
    page.push_str(layout::FOOT);
    page
}

/// The facts table: counts, file, provenance.
fn facts(page: &mut String, name: &str, entry: &VersionEntry, card: &Value) {
    let mut rows: Vec<(&str, String)> = Vec::new();
    for (label, member) in [("triples", "quads"), ("subjects", "subjects"), ("objects", "objects"), ("terms", "terms"), ("named graphs", "graphs")] {
        if let Some(value) = number(card, member) {
            rows.push((label, count(value)));
        }
    }
    for (label, member) in [("licence", "license"), ("source", "source"), ("publisher", "publisher"), ("base IRI", "base_iri")] {
        if let Some(value) = text(card, member) {
            rows.push((label, link_or_text(value)));
        }
    }
    rows.push(("file", format!("{} · <a href=\"/{}/card?format=json\">card JSON</a>", bytes(entry.bytes), escape(name))));
    rows.push(("version", format!("<code>{}</code>", escape(&entry.version))));
    if !entry.published_at.is_empty() {
        rows.push(("published", escape(&entry.published_at)));
    }
    if let Some(built) = text(card, "built_at") {
        rows.push(("built", escape(built)));
    }
    if let Some(version) = text(card, "rete_version") {
        rows.push(("built by", format!("rete {}", escape(version))));
    }
    page.push_str("<table class=\"facts\"><caption>About this dataset</caption><tbody>\n");
    for (label, value) in rows {
        let _ = writeln!(page, "<tr><th scope=\"row\">{label}</th><td>{value}</td></tr>");
    }
    page.push_str("</tbody></table>\n");
}

/// Where the script draws the summary graph; without it, a pointer to the JSON.
fn summary_section(page: &mut String, name: &str) {
    let _ = writeln!(
        page,
        "<section aria-labelledby=\"summary-h\" id=\"summary\"><h2 id=\"summary-h\">Summary</h2>\
         <div class=\"summary\" data-summary=\"/{n}/summary\"><p class=\"noscript\">The schema graph and community graph are drawn by the page's script; \
         their data is <a href=\"/{n}/summary?format=json\">the summary JSON</a>.</p></div></section>",
        n = escape(name)
    );
}

/// A bar of `value` out of `max`, as a cell (width in % of the column).
fn bar(value: u64, max: u64) -> String {
    let percent = if max == 0 { 0.0 } else { value as f64 * 100.0 / max as f64 };
    format!("<td class=\"n bar\"><span class=\"bar\" style=\"width:{percent:.1}%\"></span><span class=\"v\">{}</span></td>", count(value))
}

/// A table of IRIs with counts drawn as bars, the largest first as in the card.
#[allow(clippy::too_many_arguments)]
fn bars(page: &mut String, name: &str, heading: &str, what: &str, unit: &str, rows: &[Value], count_member: &str, more: Option<u64>) {
    if rows.is_empty() {
        return;
    }
    let id = what.to_owned() + "s-h";
    let _ = writeln!(
        page,
        "<section aria-labelledby=\"{id}\"><h2 id=\"{id}\">{heading}</h2><div class=\"scroll\"><table class=\"bars\"><thead><tr><th scope=\"col\">{what}</th><th scope=\"col\" class=\"n\">{unit}</th></tr></thead><tbody>"
    );
    let max = rows.iter().filter_map(|r| number(r, count_member)).max().unwrap_or(0);
    for row in rows.iter().take(ROWS) {
        let Some(iri) = text(row, "iri") else { continue };
        let label = text(row, "label").map(|l| format!(" <span class=\"label\">{}</span>", escape(l))).unwrap_or_default();
        let _ = writeln!(page, "<tr><td>{}{label}</td>{}</tr>", iri_link(name, iri), bar(number(row, count_member).unwrap_or(0), max));
    }
    page.push_str("</tbody></table></div>");
    let hidden = (rows.len().saturating_sub(ROWS) as u64) + more.unwrap_or(0);
    if hidden > 0 {
        let _ = write!(page, "<p>… and {} more in the card JSON.</p>", count(hidden));
    }
    page.push_str("</section>\n");
}

/// Classes as bars, each with its example instances and a query listing them all.
fn classes(page: &mut String, name: &str, card: &Value) {
    let rows = list(card, "classes");
    if rows.is_empty() {
        return;
    }
    page.push_str(
        "<section aria-labelledby=\"classes-h\"><h2 id=\"classes-h\">Classes</h2><div class=\"scroll\"><table class=\"bars\"><thead><tr>\
         <th scope=\"col\">class</th><th scope=\"col\" class=\"n\">instances</th><th scope=\"col\">examples</th></tr></thead><tbody>\n",
    );
    let max = rows.iter().filter_map(|r| number(r, "instances")).max().unwrap_or(0);
    for row in rows.iter().take(ROWS) {
        let Some(iri) = text(row, "iri") else { continue };
        let label = text(row, "label").map(|l| format!(" <span class=\"label\">{}</span>", escape(l))).unwrap_or_default();
        let mut examples: Vec<String> = list(row, "examples").iter().filter_map(Value::as_str).take(3).map(|e| iri_link(name, e)).collect();
        examples.push(format!("<a href=\"{}\">all…</a>", escape(&query_href(name, &query::instances_query(iri)))));
        let _ = writeln!(page, "<tr><td>{}{label}</td>{}<td class=\"examples\">{}</td></tr>", iri_link(name, iri), bar(number(row, "instances").unwrap_or(0), max), examples.join(" "));
    }
    page.push_str("</tbody></table></div>");
    let hidden = (rows.len().saturating_sub(ROWS) as u64) + number(card, "classes_more").unwrap_or(0);
    if hidden > 0 {
        let _ = write!(page, "<p>… and {} more in the card JSON.</p>", count(hidden));
    }
    page.push_str("</section>\n");
}

fn languages(page: &mut String, card: &Value) {
    let rows = list(card, "languages");
    if rows.is_empty() {
        return;
    }
    page.push_str("<section aria-labelledby=\"languages-h\"><h2 id=\"languages-h\">Languages</h2><table class=\"bars\"><thead><tr><th scope=\"col\">tag</th><th scope=\"col\" class=\"n\">literals</th></tr></thead><tbody>\n");
    let max = rows.iter().filter_map(|r| number(r, "literals")).max().unwrap_or(0);
    for row in rows.iter().take(ROWS) {
        let _ = writeln!(page, "<tr><td><code>{}</code></td>{}</tr>", escape(text(row, "tag").unwrap_or("?")), bar(number(row, "literals").unwrap_or(0), max));
    }
    page.push_str("</tbody></table>");
    let hidden = (rows.len().saturating_sub(ROWS) as u64) + number(card, "languages_more").unwrap_or(0);
    if hidden > 0 {
        let _ = write!(page, "<p>… and {} more in the card JSON.</p>", count(hidden));
    }
    page.push_str("</section>\n");
}

fn namespaces(page: &mut String, card: &Value) {
    let rows = list(card, "namespaces");
    if rows.is_empty() {
        return;
    }
    page.push_str("<section aria-labelledby=\"namespaces-h\"><h2 id=\"namespaces-h\">Namespaces</h2><div class=\"scroll\"><table><thead><tr><th scope=\"col\">prefix</th><th scope=\"col\">IRI</th><th scope=\"col\" class=\"n\">terms</th></tr></thead><tbody>\n");
    for row in rows {
        let terms = number(row, "terms").map(count).unwrap_or_default();
        let _ = writeln!(page, "<tr><td><code>{}:</code></td><td><code>{}</code></td><td class=\"n\">{terms}</td></tr>", escape(text(row, "prefix").unwrap_or("")), escape(text(row, "iri").unwrap_or("")));
    }
    page.push_str("</tbody></table></div></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> VersionEntry {
        VersionEntry { name: "ds".into(), version: "0".repeat(32), key: "k".into(), bytes: 2_000, quads: 3, published_at: "2026-11-21T00:00:00Z".into(), title: None, license: None, head: None }
    }

    #[test]
    fn renders_todays_card_and_tomorrows_members() {
        let today = json!({"rete_version": "0.1.0", "quads": 3, "terms": 4, "graphs": 0, "predicates": [{"iri": "http://x/p", "quads": 3}], "predicates_more": 0,
                           "classes": [{"iri": "http://x/C", "instances": 2}], "classes_more": 0, "sources": [{"name": "a.nt", "bytes": 10}]});
        let page = page("ds", &entry(), &today, None);
        assert!(page.contains("<h1>ds</h1>") && page.contains("/ds/resource?iri=http%3A%2F%2Fx%2FC"), "{page}");
        assert!(!page.contains("Languages"));

        let tomorrow = json!({"title": "A <title>", "license": "https://creativecommons.org/licenses/by/4.0/", "languages": [{"tag": "en", "literals": 5}],
                              "namespaces": [{"prefix": "x", "iri": "http://x/", "terms": 2}], "quads": 3});
        let page = super::page("ds", &entry(), &tomorrow, None);
        assert!(page.contains("<h1>A &lt;title&gt;</h1>"), "{page}");
        assert!(page.contains(r#"<a href="https://creativecommons.org/licenses/by/4.0/">"#));
        assert!(page.contains("<code>en</code>") && page.contains("PREFIX x: &lt;http://x/&gt;"), "{page}");
    }
}
