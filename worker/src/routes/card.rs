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
use serde::de::IgnoredAny;
use std::collections::HashMap;

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
        let bytes = match format {
            Format::Rdf(rf) => {
                let card = read(&mut session).await?;
                let entry = &session.dataset().entry;
                triples_to_bytes(&void_triples(&origin, name, entry, &card), rf, &[("void", VOID), ("dcat", DCAT), ("dcterms", DCTERMS), ("xsd", "http://www.w3.org/2001/XMLSchema#")])
                    .map_err(|e| HttpError::Internal(format!("writing the VoID description failed: {e}")))?
            }
            _ => {
                let card = session.run(async |store| store.card_json()).await??;
                let dataset = session.dataset();
                let members = [
                    ("dataset", serde_json::Value::from(name)),
                    ("version", dataset.entry.version.as_str().into()),
                    ("content_hash", dataset.file.header.content_hash_hex().into()),
                    ("file_bytes", dataset.file.header.file_length.into()),
                ];
                with_members(&card, &members).map_err(|reason| HttpError::Corrupt(format!("{}: CARD section: {reason}", dataset.file.key)))?
            }
        };
        Ok(Reply::ok(format, bytes))
    })
    .await
}

/// The card's JSON text as the file holds it, with `members` added (or
/// replacing the card's own of that name), on one line: no parse into a
/// [`Card`] and back, the text is only checked to be a JSON object.
fn with_members(card: &[u8], members: &[(&str, serde_json::Value)]) -> Result<Vec<u8>, String> {
    let keys = serde_json::from_slice::<HashMap<String, IgnoredAny>>(card).map_err(|e| format!("not a JSON object: {e}"))?;
    let card = card.trim_ascii();
    let Some(inside) = card.strip_prefix(b"{").and_then(|rest| rest.strip_suffix(b"}")) else {
        return Err("not a JSON object".into());
    };
    let mut bytes = Vec::with_capacity(card.len() + 256);
    if members.iter().any(|(key, _)| keys.contains_key(*key)) {
        // A card naming one of them itself (no writer does): rebuilt, ours win.
        let mut object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(card).map_err(|e| e.to_string())?;
        object.extend(members.iter().map(|(key, value)| ((*key).to_owned(), value.clone())));
        serde_json::to_writer(&mut bytes, &object).map_err(|e| e.to_string())?;
    } else {
        bytes.push(b'{');
        bytes.extend_from_slice(inside);
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 || !keys.is_empty() {
                bytes.push(b',');
            }
            serde_json::to_writer(&mut bytes, key).map_err(|e| e.to_string())?;
            bytes.push(b':');
            serde_json::to_writer(&mut bytes, value).map_err(|e| e.to_string())?;
        }
        bytes.push(b'}');
    }
    bytes.push(b'\n');
    Ok(bytes)
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


#[cfg(test)]
mod tests {
    use super::with_members;
    use serde_json::{Value, json};

    fn members() -> [(&'static str, Value); 2] {
        [("dataset", json!("qudt")), ("file_bytes", json!(7))]
    }

    fn parsed(bytes: &[u8]) -> Value {
        assert!(bytes.ends_with(b"}\n"), "{}", String::from_utf8_lossy(bytes));
        serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
    }

    #[test]
    fn members_follow_the_cards_own_in_its_order() {
        let bytes = with_members(br#"{"rete_version":"0.1","quads":3,"x":{"a":[1]}}"#, &members()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bytes, b"{\"rete_version\":\"0.1\",\"quads\":3,\"x\":{\"a\":[1]},\"dataset\":\"qudt\",\"file_bytes\":7}\n");
        assert_eq!(parsed(&with_members(b" {} ", &members()).unwrap_or_default()), json!({"dataset": "qudt", "file_bytes": 7}));
    }

    #[test]
    fn a_card_naming_a_member_itself_is_rebuilt_with_ours() {
        let bytes = with_members(br#"{"dataset":"other","quads":3}"#, &members()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed(&bytes), json!({"dataset": "qudt", "quads": 3, "file_bytes": 7}));
    }

    #[test]
    fn text_that_is_not_a_json_object_is_refused() {
        for bad in [&b"[1]"[..], b"{\"a\":", b"", b"{\"a\":1} {}"] {
            assert!(with_members(bad, &members()).is_err_and(|e| e.starts_with("not a JSON object")), "{}", String::from_utf8_lossy(bad));
        }
    }
}
