//! `/{ds}/card`: the dataset's CARD section (FORMAT.md §7), as JSON (the
//! section's members, unknown ones kept) or as a page. Reads the header and
//! that section only; both usually sit in the first 16 KiB, already held.

use crate::conneg::Format;
use crate::datasets;
use crate::driver::Session;
use crate::html::{self, escape};
use crate::http::{Ctx, Reply, etag};
use crate::http_error::HttpError;
use rete_core::format::card::Card;
use std::fmt::Write as _;

/// Reads the card of a dataset for a request (304 handled by the caller).
pub async fn read(ctx: &Ctx, dataset: &datasets::Dataset) -> Result<Card, HttpError> {
    let mut session = Session::new(dataset, &ctx.r2, &ctx.stats, &ctx.config, ctx.deadline_ms).await?;
    Ok(session.run(|store| store.card()).await??)
}

/// GET `/{ds}/card`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json, Format::Html])?;
    let entry = datasets::pointer(&ctx.r2, &ctx.config, name).await?;
    let tag = etag(&entry.version, &["card", format.name()]);
    if ctx.not_modified(&tag) {
        return Ok(Reply::not_modified(&tag, ctx.config.cache_max_age_s));
    }
    let dataset = datasets::open(&ctx.r2, entry).await?;
    let card = read(ctx, &dataset).await?;
    let bytes = match format {
        Format::Html => page(name, &dataset.entry, &card).into_bytes(),
        _ => {
            let mut bytes = serde_json::to_vec_pretty(&card).map_err(|e| HttpError::Internal(e.to_string()))?;
            bytes.push(b'\n');
            bytes
        }
    };
    Ok(Reply::ok(format, bytes).cacheable(&tag, ctx.config.cache_max_age_s))
}

fn page(name: &str, entry: &datasets::VersionEntry, card: &Card) -> String {
    let mut page = html::head(name, Some(name));
    let _ = writeln!(
        page,
        "<table><tr><th>triples</th><td class=n>{}</td></tr><tr><th>terms</th><td class=n>{}</td></tr><tr><th>named graphs</th><td class=n>{}</td></tr>\
         <tr><th>version</th><td><code>{}</code></td></tr><tr><th>file</th><td class=n>{} bytes</td></tr><tr><th>published</th><td>{}</td></tr><tr><th>built by</th><td>rete {}</td></tr></table>",
        card.quads,
        card.terms,
        card.graphs,
        escape(&entry.version),
        entry.bytes,
        escape(&entry.published_at),
        escape(&card.rete_version)
    );
    page.push_str("<h2>Classes</h2><table><tr><th>class</th><th>instances</th></tr>\n");
    for class in &card.classes {
        let _ = writeln!(page, "<tr><td><a href=\"{}\">{}</a></td><td class=n>{}</td></tr>", escape(&html::resource_href(name, &class.iri)), escape(&class.iri), class.instances);
    }
    if card.classes_more > 0 {
        let _ = writeln!(page, "<tr><td>… and {} more</td><td></td></tr>", card.classes_more);
    }
    page.push_str("</table><h2>Predicates</h2><table><tr><th>predicate</th><th>triples</th></tr>\n");
    for predicate in &card.predicates {
        let _ = writeln!(page, "<tr><td><a href=\"{}\">{}</a></td><td class=n>{}</td></tr>", escape(&html::resource_href(name, &predicate.iri)), escape(&predicate.iri), predicate.quads);
    }
    if card.predicates_more > 0 {
        let _ = writeln!(page, "<tr><td>… and {} more</td><td></td></tr>", card.predicates_more);
    }
    page.push_str("</table><h2>Sources</h2><ul>\n");
    for source in &card.sources {
        let _ = writeln!(page, "<li>{} ({} bytes)</li>", escape(&source.name), source.bytes);
    }
    page.push_str("</ul>\n");
    page.push_str(html::FOOT);
    page
}
