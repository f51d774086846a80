//! What every dataset route does first, written once: read the dataset's
//! pointer, compute the answer's ETag, answer 304 when the client has it,
//! else open the file and a [`Session`] on it; and mark what the route
//! answers as cacheable under that ETag. A route is then one function of a
//! session:
//!
//! ```ignore
//! pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
//!     let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json])?;
//!     preamble::serve(ctx, name, &["my-route", format.name()], async |mut session| {
//!         let card = session.run(async |store| store.card()).await??;
//!         Ok(Reply::ok(format, serde_json::to_vec(&card).unwrap_or_default()))
//!     })
//!     .await
//! }
//! ```

use crate::datasets;
use crate::http::{Ctx, Reply, etag};
use crate::http_error::HttpError;
use crate::session::Session;

/// Answers a request about dataset `name` with `answer`, run on a session
/// unless the client already holds the answer. `etag_parts` name what
/// besides the file's version shapes the body (route, format, query, page…).
pub async fn serve(ctx: &Ctx, name: &str, etag_parts: &[&str], answer: impl AsyncFnOnce(Session) -> Result<Reply, HttpError>) -> Result<Reply, HttpError> {
    let entry = datasets::pointer(ctx, name).await?;
    let tag = etag(&entry.version, etag_parts);
    if ctx.not_modified(&tag) {
        return Ok(Reply::not_modified(&tag, ctx.config.cache_max_age_s));
    }
    let dataset = datasets::open(ctx, entry).await?;
    let (name, key) = (dataset.name.clone(), dataset.entry.key.clone());
    let session = Session::open(ctx, dataset).await?;
    match answer(session).await {
        Ok(reply) => Ok(reply.cacheable(&tag, ctx.config.cache_max_age_s)),
        // Bytes that failed a check may have been damaged on the way (R2, the
        // network): the isolate lets go of everything it kept of the file, so
        // the next request reads it afresh rather than the kept damage.
        Err(error @ HttpError::Corrupt(_)) => {
            datasets::forget(&name, &key);
            Err(error)
        }
        Err(error) => Err(error),
    }
}
