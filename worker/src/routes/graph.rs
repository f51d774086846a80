//! `/{ds}/reach`, `/{ds}/path`, `/{ds}/check`: the graph questions of
//! `rete reach`, `rete path` and `rete check` (core's graph machines, the
//! same JSON as the CLI's `--json`: `rete_core::graph::answer`), read in
//! rounds by the session like a query and held to the same budgets (rounds,
//! bytes, R2 requests, time, block cache: a 422 naming the limit). Their
//! `rounds`, `requests` and `bytes` are the request's, as in the `x-rete-*`
//! headers: the pointer and the open included. Browsers get a page.

use crate::conneg::Format;
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::pages;
use crate::preamble;
use crate::session::Session;
use oxrdf::{NamedNode, Term};
use rete_core::graph::check::{Check, Tier};
use rete_core::graph::path::{Path, PathOptions};
use rete_core::graph::reach::{Reach, ReachOptions};
use rete_core::graph::{Direction, Machine, answer, parse_node};
use rete_core::read::RoundStats;

const FORMATS: [Format; 2] = [Format::Json, Format::Html];

/// GET `/{ds}/reach?from=IRI[&from=IRI]…&via=IRI[&via=IRI]…[&inverse|&undirected][&max-depth=N]`.
pub async fn reach(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &FORMATS)?;
    let seeds = nodes(ctx, "from")?;
    let predicates = predicates(ctx)?;
    if seeds.is_empty() || predicates.is_empty() {
        return Err(HttpError::BadRequest(format!("give at least one from= (a seed IRI) and one via= (a predicate IRI): /{name}/reach?from=IRI&via=IRI")));
    }
    let direction = match (flag(ctx, "inverse")?, flag(ctx, "undirected")?) {
        (true, true) => return Err(HttpError::BadRequest("inverse and undirected exclude each other".into())),
        (true, false) => Direction::Inverse,
        (false, true) => Direction::Both,
        (false, false) => Direction::Forward,
    };
    let options = ReachOptions { predicates, direction, max_depth: max_depth(ctx)?, members: false, parallel: false };
    let question = ctx.url.query().unwrap_or_default().to_owned();
    preamble::serve(ctx, name, &["reach", format.name(), &question], async |mut session| {
        let results = run(&mut session, &mut Reach::new(seeds.clone(), options)).await?;
        reply(format, name, pages::graph::Question::Reach, answer::reach(&seeds, &results, stats(ctx)))
    })
    .await
}

/// GET `/{ds}/path?from=IRI&to=IRI[&via=IRI]…[&undirected][&max-depth=N]`.
pub async fn path(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &FORMATS)?;
    let (Some(from), Some(to)) = (node(ctx, "from")?, node(ctx, "to")?) else {
        return Err(HttpError::BadRequest(format!("give from= and to= (IRIs or _:labels): /{name}/path?from=IRI&to=IRI")));
    };
    let options = PathOptions { predicates: predicates(ctx)?, undirected: flag(ctx, "undirected")?, max_depth: max_depth(ctx)?, unidirectional: false };
    let question = ctx.url.query().unwrap_or_default().to_owned();
    preamble::serve(ctx, name, &["path", format.name(), &question], async |mut session| {
        let found = run(&mut session, &mut Path::new(from, to, options)).await?;
        reply(format, name, pages::graph::Question::Path, answer::path(&found, stats(ctx)))
    })
    .await
}

/// GET `/{ds}/check[?tier=0|1|2]` (tier 0 when absent).
pub async fn check(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &FORMATS)?;
    let tier = match ctx.param("tier") {
        None => Tier::Schema,
        Some(text) => text.parse().ok().and_then(Tier::from_number).ok_or_else(|| HttpError::BadRequest(format!("tier={text:?}: the tiers are 0 (schema), 1 (selective) and 2 (whole graph)")))?,
    };
    preamble::serve(ctx, name, &["check", format.name(), &(tier as u8).to_string()], async |mut session| {
        let report = run(&mut session, &mut Check::new(tier)).await?;
        reply(format, name, pages::graph::Question::Check, answer::check(tier, &report, stats(ctx)))
    })
    .await
}

/// The tier-0 check's JSON (the dataset page shows it).
pub async fn schema_check(session: &mut Session) -> Result<serde_json::Value, HttpError> {
    let report = run(session, &mut Check::new(Tier::Schema)).await?;
    Ok(answer::check(Tier::Schema, &report, RoundStats::default()))
}

/// Runs a graph machine to its end in the session's rounds.
async fn run<M: Machine>(session: &mut Session, machine: &mut M) -> Result<M::Output, HttpError> {
    let outcome = session.run(async |store| machine.step(store)).await?;
    session.store().release_fed();
    outcome?.ok_or_else(|| HttpError::Internal("a graph step neither finished nor missed a block".into()))
}

/// What the request read so far (the `x-rete-*` counters).
fn stats(ctx: &Ctx) -> RoundStats {
    RoundStats { rounds: ctx.usage.round_count(), requests: ctx.usage.reads.get(), bytes: ctx.usage.bytes.get() }
}

fn reply(format: Format, name: &str, question: pages::graph::Question, answer: serde_json::Value) -> Result<Reply, HttpError> {
    let bytes = match format {
        Format::Html => pages::graph::page(name, question, &answer).into_bytes(),
        _ => {
            let mut bytes = serde_json::to_vec(&answer).map_err(|e| HttpError::Internal(e.to_string()))?;
            bytes.push(b'\n');
            bytes
        }
    };
    Ok(Reply::ok(format, bytes))
}

/// Every value of parameter `key`, each an IRI (angle brackets optional) or `_:label`.
fn nodes(ctx: &Ctx, key: &str) -> Result<Vec<Term>, HttpError> {
    ctx.url.query_pairs().filter(|(k, _)| k == key).map(|(_, value)| parse_node(&value).map_err(|reason| HttpError::BadRequest(format!("{key}=: {reason}")))).collect()
}

/// The node of parameter `key` (the last when repeated).
fn node(ctx: &Ctx, key: &str) -> Result<Option<Term>, HttpError> {
    Ok(nodes(ctx, key)?.pop())
}

/// The `via=` predicates.
fn predicates(ctx: &Ctx) -> Result<Vec<NamedNode>, HttpError> {
    nodes(ctx, "via")?.into_iter().map(|term| NamedNode::try_from(term).map_err(|_| HttpError::BadRequest("via=: a predicate is an IRI, not a blank node".into()))).collect()
}

/// A flag: present (`&inverse`, `&inverse=true`, `=1`) or absent (`=false`, `=0`).
fn flag(ctx: &Ctx, key: &str) -> Result<bool, HttpError> {
    match ctx.param(key).as_deref() {
        None | Some("false" | "0") => Ok(false),
        Some("" | "true" | "1") => Ok(true),
        Some(other) => Err(HttpError::BadRequest(format!("{key}={other:?}: a flag is present, true, 1, false or 0"))),
    }
}

/// `max-depth=N`: the most hops, none when absent.
fn max_depth(ctx: &Ctx) -> Result<Option<u32>, HttpError> {
    ctx.param("max-depth").map(|text| text.parse().map_err(|_| HttpError::BadRequest(format!("max-depth={text:?} is not a number of hops")))).transpose()
}
