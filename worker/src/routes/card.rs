//! `/{ds}/card`: the dataset's CARD section (FORMAT.md §7), as JSON (the
//! section's members, unknown ones kept) or as a page. Reads the header and
//! that section only; both usually sit in the first 16 KiB, already held.

use crate::conneg::Format;
use crate::datasets;
use crate::driver::Session;
use crate::http::{Ctx, Reply, etag};
use crate::http_error::HttpError;
use crate::pages;
use rete_core::format::card::Card;

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
        Format::Html => pages::dataset::page(name, &dataset.entry, &serde_json::to_value(&card).map_err(|e| HttpError::Internal(e.to_string()))?).into_bytes(),
        _ => {
            let mut bytes = serde_json::to_vec_pretty(&card).map_err(|e| HttpError::Internal(e.to_string()))?;
            bytes.push(b'\n');
            bytes
        }
    };
    Ok(Reply::ok(format, bytes).cacheable(&tag, ctx.config.cache_max_age_s))
}
