//! `GET /{ds}`: the dataset page for people, HTML only (programs read
//! `/{ds}/card`, whose HTML form is this same page). Reads what the card
//! route reads: the header and the CARD section.

use crate::conneg::Format;
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::preamble;

/// GET `/{ds}`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Html])?;
    preamble::serve(ctx, name, &["dataset", format.name()], async |mut session| Ok(Reply::ok(format, super::card::page(&mut session, name).await?))).await
}
