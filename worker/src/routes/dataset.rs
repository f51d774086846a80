//! `GET /{ds}`: the dataset page for people, HTML only (programs read
//! `/{ds}/card`, whose HTML form is this same page). Reads what the card
//! route reads: the header and the CARD section.

use crate::conneg::Format;
use crate::datasets;
use crate::http::{Ctx, Reply, etag};
use crate::http_error::HttpError;
use crate::pages;

/// GET `/{ds}`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Html])?;
    let entry = datasets::pointer(&ctx.r2, &ctx.config, name).await?;
    let tag = etag(&entry.version, &["dataset", format.name()]);
    if ctx.not_modified(&tag) {
        return Ok(Reply::not_modified(&tag, ctx.config.cache_max_age_s));
    }
    let dataset = datasets::open(&ctx.r2, entry).await?;
    let card = super::card::read(ctx, &dataset).await?;
    let card = serde_json::to_value(&card).map_err(|e| HttpError::Internal(e.to_string()))?;
    Ok(Reply::ok(format, pages::dataset::page(name, &dataset.entry, &card).into_bytes()).cacheable(&tag, ctx.config.cache_max_age_s))
}
