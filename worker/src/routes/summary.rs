//! `/{ds}/summary`: the dataset at a glance, from its SUMMARY section
//! (FORMAT.md §10). Without `level`, the schema level and the list of
//! community levels; with `?level=N`, that level's super-nodes and
//! super-edges, each node linking to `/{ds}/summary/members`, which pages
//! through its members from the MEMBERS section (FORMAT.md §11). Files built
//! before SUMMARY existed answer with the card's classes and no levels.

use crate::conneg::Format;
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::preamble;
use crate::session::Session;
use rete_core::format::summary::{Overview, Schema, SchemaClass, Summary};
use serde_json::{Value, json};

/// GET `/{ds}/summary[?level=N]`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json, Format::Html])?;
    let level = match ctx.param("level") {
        None => None,
        Some(text) => Some(text.parse::<usize>().map_err(|_| HttpError::BadRequest(format!("level={text:?} is not a level number (0 is the coarsest)")))?),
    };
    let level_text = level.map(|l| l.to_string()).unwrap_or_default();
    preamble::serve(ctx, name, &["summary", format.name(), &level_text], async |mut session| {
        let version = session.dataset().entry.version.clone();
        let body = match level {
            None => overview(name, &version, &read_overview(&mut session).await?),
            Some(level) => level_json(name, &version, &read(&mut session).await?, level)?,
        };
        // The dataset page holds the summary picture, drawn from this route's JSON.
        let bytes = if format == Format::Html { super::card::page(&mut session, name).await? } else { json_bytes(&body)? };
        Ok(Reply::ok(format, bytes))
    })
    .await
}

/// GET `/{ds}/summary/members?level=N&node=K[&page=P]`: one page of a super-node's members.
pub async fn members(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json])?;
    let number = |key: &str, default: Option<u64>| -> Result<u64, HttpError> {
        match (ctx.param(key), default) {
            (Some(text), _) => text.parse().map_err(|_| HttpError::BadRequest(format!("{key}={text:?} is not a number"))),
            (None, Some(default)) => Ok(default),
            (None, None) => Err(HttpError::BadRequest(format!("missing {key}=; use /{name}/summary?level=N to find the nodes"))),
        }
    };
    let (level, node, page) = (number("level", None)?, number("node", None)?, number("page", Some(0))?);
    let etag_parts = [level.to_string(), node.to_string(), page.to_string()];
    preamble::serve(ctx, name, &["members", &etag_parts[0], &etag_parts[1], &etag_parts[2]], async |mut session| {
        let summary = session.run(async |store| store.summary()).await??.unwrap_or_default();
        let levels = summary.levels.len();
        let found = summary.levels.get(level as usize).ok_or_else(|| HttpError::NotFound(no_level(name, level as usize, levels)))?;
        let found = found.nodes.get(node as usize).ok_or_else(|| HttpError::NotFound(format!("{name} summary level {level} has nodes 0 to {}; there is no node {node}", found.nodes.len().saturating_sub(1))))?;
        if page >= found.members.pages.max(1) {
            return Err(HttpError::NotFound(format!("node {node} of level {level} has {} pages of members (0 to {}); there is no page {page}", found.members.pages, found.members.pages.saturating_sub(1))));
        }
        let pages = found.members.pages;
        let ids = if pages == 0 { Vec::new() } else { session.run(async |store| store.member_page(&found.members, page)).await?? };
        let terms = session.run(async |store| store.terms(&ids)).await??;
        let members: Vec<String> = terms
            .into_iter()
            .map(|term| match term {
                oxrdf::Term::NamedNode(iri) => iri.into_string(),
                other => other.to_string(),
            })
            .collect();
        let next = (page + 1 < pages).then(|| members_url(name, level as usize, node as u32, page + 1));
        let body = json!({
            "dataset": name,
            "version": session.dataset().entry.version,
            "level": level,
            "node": node,
            "size": found.size,
            "page": page,
            "pages": pages,
            "members": members,
            "next": next,
        });
        Ok(Reply::ok(Format::Json, json_bytes(&body)?))
    })
    .await
}

/// The SUMMARY section, or for older files one made from the card's classes.
async fn read(session: &mut Session) -> Result<Summary, HttpError> {
    match session.run(async |store| store.summary()).await?? {
        Some(summary) => Ok(summary),
        None => from_card(session).await,
    }
}

/// The SUMMARY section's overview (its levels counted, not decoded), or for
/// older files one made from the card's classes.
async fn read_overview(session: &mut Session) -> Result<Overview, HttpError> {
    if let Some(overview) = session.run(async |store| store.summary_overview()).await?? {
        return Ok(overview);
    }
    let summary = from_card(session).await?;
    Ok(Overview { schema: summary.schema, levels: Vec::new(), note: summary.note })
}

/// A summary of a file built before SUMMARY existed: the card's classes, no levels.
async fn from_card(session: &mut Session) -> Result<Summary, HttpError> {
    let card = super::card::read(session).await?;
    let classes = card.classes.iter().map(|c| SchemaClass { iri: c.iri.clone(), label: c.label.clone(), instances: c.instances }).collect();
    Ok(Summary {
        schema: Schema { classes, classes_more: card.classes_more, ..Schema::default() },
        note: Some("this file has no SUMMARY section (built before rete wrote one): classes come from the card".into()),
        ..Summary::default()
    })
}

fn overview(name: &str, version: &str, summary: &Overview) -> Value {
    let levels: Vec<Value> = summary.levels.iter().enumerate().map(|(i, l)| json!({"level": i, "nodes": l.nodes, "edges": l.edges, "communities": l.communities})).collect();
    let mut body = json!({"dataset": name, "version": version, "schema": summary.schema, "levels": levels});
    if let Some(note) = &summary.note {
        body["note"] = note.as_str().into();
    }
    body
}

fn level_json(name: &str, version: &str, summary: &Summary, level: usize) -> Result<Value, HttpError> {
    let found = summary.levels.get(level).ok_or_else(|| HttpError::NotFound(no_level(name, level, summary.levels.len())))?;
    let nodes: Vec<Value> = found
        .nodes
        .iter()
        .map(|n| json!({"id": n.id, "size": n.size, "label": n.label, "iri": n.iri, "parent": n.parent, "members": members_url(name, level, n.id, 0)}))
        .collect();
    Ok(json!({
        "dataset": name,
        "version": version,
        "level": level,
        "levels": summary.levels.len(),
        "communities": found.communities,
        "nodes": nodes,
        "edges": found.edges,
        "edges_more": found.edges_more,
    }))
}

fn members_url(name: &str, level: usize, node: u32, page: u64) -> String {
    let page = if page > 0 { format!("&page={page}") } else { String::new() };
    format!("/{name}/summary/members?level={level}&node={node}{page}")
}

fn no_level(name: &str, level: usize, levels: usize) -> String {
    match levels {
        0 => format!("{name} has no community levels (built with --no-pyramid, too big for the build's memory, or before summaries existed); there is no level {level}"),
        _ => format!("{name} has summary levels 0 to {}; there is no level {level}", levels - 1),
    }
}

fn json_bytes(body: &Value) -> Result<Vec<u8>, HttpError> {
    let mut bytes = serde_json::to_vec_pretty(body).map_err(|e| HttpError::Internal(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}
