//! The home page: one row per dataset from its pointer alone (title, size,
//! triples, licence, when published), so listing every dataset opens no file
//! and the page is whole without JavaScript. Title and licence are the card's,
//! copied into the pointer by `rete publish`; a pointer written before that
//! shows the dataset name as its title and no licence.

use super::layout::{self, Kind};
use super::term::{bytes, count, escape};
use crate::datasets::VersionEntry;
use std::fmt::Write as _;

/// A licence cell: a link when it is a URL, shown without its scheme to keep the column narrow.
fn licence(value: &str) -> String {
    match value.strip_prefix("https://").or_else(|| value.strip_prefix("http://")) {
        Some(rest) => format!(r#"<a href="{}">{}</a>"#, escape(value), escape(rest)),
        None => escape(value),
    }
}

/// Search by name in a dataset picked from a list (the site's script adds
/// "all datasets" and suggestions from each that has a search index).
fn search_form(page: &mut String, entries: &[VersionEntry]) {
    let options: String = entries.iter().map(|e| format!(r#"<option value="{0}">{0}</option>"#, escape(&e.name))).collect();
    let _ = writeln!(
        page,
        r#"<h2 id="search-h">Find by name</h2><form class="search" role="search" method="get" action="{}" aria-labelledby="search-h"><label for="search-ds">in</label> <select id="search-ds" name="ds">{options}</select> <label for="search-q">words</label> <input id="search-q" name="q" type="search" autocomplete="off" spellcheck="false" placeholder="a name or its first letters" required> <button type="submit">Search</button></form>"#,
        crate::routes::search::HOME_FORM_PATH
    );
}

/// The page for the listed datasets; `truncated` when the listing stopped at `max`.
pub fn page(entries: &[VersionEntry], truncated: bool, max: usize) -> String {
    let mut page = layout::head("Datasets", None, Kind::Home);
    if entries.is_empty() {
        page.push_str("<p>No dataset is published yet: <code>rete publish FILE --name NAME</code> adds one.</p>\n");
    } else {
        page.push_str(
            "<div class=\"scroll\"><table class=\"datasets\"><caption>Published datasets</caption>\
             <thead><tr><th scope=\"col\">dataset</th><th scope=\"col\">title</th><th scope=\"col\" class=\"n\">triples</th>\
             <th scope=\"col\" class=\"n\">size</th><th scope=\"col\">licence</th><th scope=\"col\">published</th><th scope=\"col\">links</th></tr></thead><tbody>\n",
        );
        for e in entries {
            let _ = writeln!(
                page,
                "<tr data-dataset=\"{n}\"><th scope=\"row\"><a href=\"/{n}\">{n}</a></th><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td>{}</td><td>{}</td><td><a href=\"/{n}/sparql\">query</a> · <a href=\"/{n}/card?format=json\">card</a> · <a href=\"/{n}/summary?format=json\">summary</a></td></tr>",
                escape(e.title.as_deref().unwrap_or(&e.name)),
                count(e.quads),
                bytes(e.bytes),
                e.license.as_deref().map(licence).unwrap_or_default(),
                escape(e.published_at.get(..10).unwrap_or(&e.published_at)),
                n = escape(&e.name)
            );
        }
        page.push_str("</tbody></table></div>\n");
        search_form(&mut page, entries);
    }
    if truncated {
        let _ = writeln!(page, "<p>Only the first {max} datasets are listed.</p>");
    }
    page.push_str(layout::FOOT);
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, title: Option<&str>, license: Option<&str>) -> VersionEntry {
        let version = "0".repeat(32);
        VersionEntry {
            name: name.into(),
            key: format!("datasets/{name}/{version}.rete"),
            version,
            bytes: 2_048,
            quads: 1_500,
            published_at: "2026-11-21T12:00:00.000Z".into(),
            title: title.map(str::to_owned),
            license: license.map(str::to_owned),
            head: None,
        }
    }

    #[test]
    fn rows_show_title_and_licence_from_the_pointer() {
        let page = page(&[entry("units", Some("Units <& kinds>"), Some("https://creativecommons.org/licenses/by/4.0/")), entry("names", None, Some("CC0"))], false, 10);
        assert!(page.contains("<td>Units &lt;&amp; kinds&gt;</td>"), "{page}");
        assert!(page.contains(r#"<td><a href="https://creativecommons.org/licenses/by/4.0/">creativecommons.org/licenses/by/4.0/</a></td>"#), "{page}");
        // No title recorded: the name stands in; a licence that is not a URL is text.
        assert!(page.contains(r#"<a href="/names">names</a></th><td>names</td>"#), "{page}");
        assert!(page.contains("<td>CC0</td>"), "{page}");
        assert!(page.contains("<td>2026-11-21</td>") && page.contains(&count(1_500)), "{page}");
    }
}
