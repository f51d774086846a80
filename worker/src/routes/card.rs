//! `/{ds}/card`: the dataset's CARD section (FORMAT.md §7), as JSON (the
//! section's members, unknown ones kept, plus the dataset name, version,
//! content hash and file size), as VoID + DCAT Turtle (also served at
//! `/{ds}/.well-known/void`), or as a page. Reads the header and that section
//! only; both usually sit in the first 16 KiB, already held.

use crate::answer::{VOID, triples_to_bytes};
use crate::conneg::Format;
use crate::datasets;
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::pages;
use crate::preamble;
use crate::session::Session;
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Literal, NamedNode, Term, Triple};
use rete_core::format::axioms;
use rete_core::format::card::Card;
use rete_core::results::ResultFormat;

const DCAT: &str = "http://www.w3.org/ns/dcat#";
const DCTERMS: &str = "http://purl.org/dc/terms/";
const TURTLE: Format = Format::Rdf(ResultFormat::Turtle);

/// Reads the dataset's card.
pub async fn read(session: &mut Session) -> Result<Card, HttpError> {
    Ok(session.run(async |store| store.card()).await??)
}

/// The dataset page (`/{ds}`, and the HTML of card and summary), with the
/// tier-0 coherence check when the file has its CLASS AXIOMS section (a few
/// KB, usually inside the first read already held).
pub async fn page(session: &mut Session, name: &str) -> Result<Vec<u8>, HttpError> {
    let card = serde_json::to_value(read(session).await?).map_err(|e| HttpError::Internal(e.to_string()))?;
    let check = match axioms::sections(&session.dataset().file.header, false) {
        Some(_) => Some(super::graph::schema_check(session).await?),
        None => None,
    };
    Ok(pages::dataset::page(name, &session.dataset().entry, &card, check.as_ref()).into_bytes())
}

/// GET `/{ds}/card`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json, Format::Html, TURTLE])?;
    respond(ctx, name, format).await
}

/// GET `/{ds}/.well-known/void`: the card as VoID + DCAT Turtle.
pub async fn void(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[TURTLE])?;
    respond(ctx, name, format).await
}

async fn respond(ctx: &Ctx, name: &str, format: Format) -> Result<Reply, HttpError> {
    let origin = ctx.origin();
    preamble::serve(ctx, name, &["card", format.name(), &origin], async |mut session| {
        if format == Format::Html {
            return Ok(Reply::ok(format, page(&mut session, name).await?));
        }
        let card = read(&mut session).await?;
        let dataset = session.dataset();
        let bytes = match format {
            Format::Rdf(rf) => triples_to_bytes(&void_triples(&origin, name, &dataset.entry, &card), rf, &[("void", VOID), ("dcat", DCAT), ("dcterms", DCTERMS), ("xsd", "http://www.w3.org/2001/XMLSchema#")])
                .map_err(|e| HttpError::Internal(format!("writing the VoID description failed: {e}")))?,
            _ => {
                let mut body = serde_json::to_value(&card).map_err(|e| HttpError::Internal(e.to_string()))?;
                if let Some(members) = body.as_object_mut() {
                    members.insert("dataset".into(), name.into());
                    members.insert("version".into(), dataset.entry.version.clone().into());
                    members.insert("content_hash".into(), dataset.file.header.content_hash_hex().into());
                    members.insert("file_bytes".into(), dataset.file.header.file_length.into());
                }
                let mut bytes = serde_json::to_vec_pretty(&body).map_err(|e| HttpError::Internal(e.to_string()))?;
                bytes.push(b'\n');
                bytes
            }
        };
        Ok(Reply::ok(format, bytes))
    })
    .await
}

/// The card as VoID and DCAT: the dataset node is `{origin}/{ds}/card#dataset`
/// (the same node the Service Description names), partitions are fragment
/// IRIs of the card so the output is the same on every request.
fn void_triples(origin: &str, name: &str, entry: &datasets::VersionEntry, card: &Card) -> Vec<Triple> {
    let card_url = format!("{origin}/{name}/card");
    let node = |fragment: &str| NamedNode::new_unchecked(format!("{card_url}#{fragment}"));
    let term = |namespace: &str, local: &str| NamedNode::new_unchecked(format!("{namespace}{local}"));
    let count = |value: u64| Term::from(Literal::new_typed_literal(value.to_string(), xsd::INTEGER));
    // An IRI when the value is one (a licence URL), else a plain literal.
    let iri_or_text = |value: &str| match NamedNode::new(value) {
        Ok(iri) if value.contains(':') => Term::from(iri),
        _ => Literal::new_simple_literal(value).into(),
    };
    let dataset = node("dataset");
    let mut triples = Vec::new();
    let mut add = |s: &NamedNode, p: NamedNode, o: Term| triples.push(Triple::new(s.clone(), p, o));
    add(&dataset, rdf::TYPE.into(), term(VOID, "Dataset").into());
    add(&dataset, rdf::TYPE.into(), term(DCAT, "Dataset").into());
    for (local, value) in [("title", &card.title), ("description", &card.description)] {
        if let Some(value) = value {
            add(&dataset, term(DCTERMS, local), Literal::new_simple_literal(value).into());
        }
    }
    for (local, value) in [("license", &card.license), ("publisher", &card.publisher), ("source", &card.source)] {
        if let Some(value) = value {
            add(&dataset, term(DCTERMS, local), iri_or_text(value));
        }
    }
    if let Some(built_at) = &card.built_at {
        add(&dataset, term(DCTERMS, "modified"), Literal::new_typed_literal(built_at, xsd::DATE_TIME).into());
    }
    if let Some(base) = &card.base_iri {
        add(&dataset, term(VOID, "uriSpace"), Literal::new_simple_literal(base).into());
    }
    let endpoint = NamedNode::new_unchecked(format!("{origin}/{name}/sparql"));
    add(&dataset, term(VOID, "sparqlEndpoint"), endpoint.clone().into());
    add(&dataset, term(VOID, "triples"), count(card.quads));
    add(&dataset, term(VOID, "distinctSubjects"), count(card.subjects));
    add(&dataset, term(VOID, "distinctObjects"), count(card.objects));
    add(&dataset, term(VOID, "properties"), count(card.predicates.len() as u64 + card.predicates_more));
    add(&dataset, term(VOID, "classes"), count(card.classes.len() as u64 + card.classes_more));
    for namespace in &card.namespaces {
        if let Ok(iri) = NamedNode::new(namespace.iri.as_str()) {
            add(&dataset, term(VOID, "vocabulary"), iri.into());
        }
    }
    for (i, predicate) in card.predicates.iter().enumerate() {
        let Ok(iri) = NamedNode::new(predicate.iri.as_str()) else { continue };
        let partition = node(&format!("property{i}"));
        add(&dataset, term(VOID, "propertyPartition"), partition.clone().into());
        add(&partition, term(VOID, "property"), iri.into());
        add(&partition, term(VOID, "triples"), count(predicate.quads));
    }
    for (i, class) in card.classes.iter().enumerate() {
        let Ok(iri) = NamedNode::new(class.iri.as_str()) else { continue };
        let partition = node(&format!("class{i}"));
        add(&dataset, term(VOID, "classPartition"), partition.clone().into());
        add(&partition, term(VOID, "class"), iri.into());
        add(&partition, term(VOID, "entities"), count(class.instances));
    }
    let distribution = node("sparql");
    add(&dataset, term(DCAT, "distribution"), distribution.clone().into());
    add(&distribution, rdf::TYPE.into(), term(DCAT, "Distribution").into());
    add(&distribution, term(DCAT, "accessURL"), endpoint.into());
    add(&distribution, term(DCAT, "mediaType"), Literal::new_simple_literal("application/sparql-results+json").into());
    add(&distribution, term(DCAT, "byteSize"), Literal::new_typed_literal(entry.bytes.to_string(), xsd::DECIMAL).into());
    add(&distribution, term(DCTERMS, "identifier"), Literal::new_simple_literal(&entry.version).into());
    // Grouped by subject, so Turtle writes each node once.
    triples.sort_by_cached_key(|t| t.subject.to_string());
    triples
}

