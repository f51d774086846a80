//! `/{ds}/summary`: the dataset at a glance. Until files carry a SUMMARY
//! section (issue 7), this is the schema level the CARD already holds:
//! counts, classes and predicates; `levels` is empty and `?level=N` is 404.

use crate::conneg::Format;
use crate::datasets;
use crate::http::{Ctx, Reply, etag};
use crate::http_error::HttpError;
use crate::pages;
use serde_json::json;

/// GET `/{ds}/summary[?level=N]`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json, Format::Html])?;
    let level = ctx.param("level");
    let entry = datasets::pointer(&ctx.r2, &ctx.config, name).await?;
    let tag = etag(&entry.version, &["summary", format.name(), level.as_deref().unwrap_or("")]);
    if ctx.not_modified(&tag) {
        return Ok(Reply::not_modified(&tag, ctx.config.cache_max_age_s));
    }
    let dataset = datasets::open(&ctx.r2, entry).await?;
    if let Some(level) = level {
        return Err(HttpError::NotFound(format!("{name} has no summary level {level:?}: this file carries no SUMMARY section, only the card's counts")));
    }
    let card = super::card::read(ctx, &dataset).await?;
    let bytes = match format {
        // The dataset page holds the summary picture, drawn from this route's JSON.
        Format::Html => pages::dataset::page(name, &dataset.entry, &serde_json::to_value(&card).map_err(|e| HttpError::Internal(e.to_string()))?).into_bytes(),
        _ => {
            let body = json!({
                "dataset": name,
                "version": dataset.entry.version,
                "quads": card.quads,
                "terms": card.terms,
                "graphs": card.graphs,
                "classes": card.classes,
                "classes_more": card.classes_more,
                "predicates": card.predicates,
                "predicates_more": card.predicates_more,
                "levels": [],
            });
            let mut bytes = serde_json::to_vec_pretty(&body).map_err(|e| HttpError::Internal(e.to_string()))?;
            bytes.push(b'\n');
            bytes
        }
    };
    Ok(Reply::ok(format, bytes).cacheable(&tag, ctx.config.cache_max_age_s))
}
