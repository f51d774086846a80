//! Writing query answers: SPARQL JSON, XML, CSV and TSV (sparesults) for
//! `SELECT`/`ASK`; N-Triples, Turtle, N-Quads, TriG, JSON-LD and RDF/XML
//! (oxrdfio) for `CONSTRUCT`/`DESCRIBE`. Each solution or triple is written
//! as it is pulled from the evaluator; nothing is collected first. SPARQL
//! JSON rows are rete's own (`json.rs`: one write per row), the same bytes as
//! sparesults'.

mod capped;
mod json;

pub use capped::Capped;
pub use json::{JsonRow, JsonSolutionsWriter};

use crate::sparql::{Answer, QueryError, QuerySolution, Solutions, Triple, Variable};
use oxrdfio::{JsonLdProfileSet, RdfFormat, RdfSerializer};
use sparesults::{QueryResultsFormat, QueryResultsSerializer, WriterSolutionsSerializer};
use std::io::Write;

/// A serialization of query answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResultFormat {
    /// SPARQL 1.1 Query Results JSON.
    Json,
    /// SPARQL Query Results XML.
    Xml,
    /// SPARQL 1.1 Query Results CSV.
    Csv,
    /// SPARQL 1.1 Query Results TSV.
    Tsv,
    /// N-Triples.
    NTriples,
    /// Turtle.
    Turtle,
    /// N-Quads (every triple in the default graph).
    NQuads,
    /// TriG (every triple in the default graph).
    TriG,
    /// JSON-LD 1.1.
    JsonLd,
    /// RDF/XML.
    RdfXml,
}

impl ResultFormat {
    /// Every format, solutions formats first.
    pub const ALL: [Self; 10] = [Self::Json, Self::Xml, Self::Csv, Self::Tsv, Self::NTriples, Self::Turtle, Self::NQuads, Self::TriG, Self::JsonLd, Self::RdfXml];

    /// The format of a short name or file extension: `json`, `xml`, `csv`,
    /// `tsv`, `nt`, `ttl`, `nq`, `trig`, `jsonld`, `rdf` (and a few aliases).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "json" | "srj" => Self::Json,
            "xml" | "srx" => Self::Xml,
            "csv" => Self::Csv,
            "tsv" => Self::Tsv,
            "nt" | "ntriples" | "n-triples" => Self::NTriples,
            "ttl" | "turtle" => Self::Turtle,
            "nq" | "nquads" | "n-quads" => Self::NQuads,
            "trig" => Self::TriG,
            "jsonld" | "json-ld" => Self::JsonLd,
            "rdf" | "rdfxml" | "rdf/xml" | "owl" => Self::RdfXml,
            _ => return None,
        })
    }

    /// The canonical short name (what [`Self::from_name`] reads).
    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Xml => "xml",
            Self::Csv => "csv",
            Self::Tsv => "tsv",
            Self::NTriples => "nt",
            Self::Turtle => "ttl",
            Self::NQuads => "nq",
            Self::TriG => "trig",
            Self::JsonLd => "jsonld",
            Self::RdfXml => "rdf",
        }
    }

    /// The IANA media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Json => "application/sparql-results+json",
            Self::Xml => "application/sparql-results+xml",
            Self::Csv => "text/csv",
            Self::Tsv => "text/tab-separated-values",
            Self::NTriples => "application/n-triples",
            Self::Turtle => "text/turtle",
            Self::NQuads => "application/n-quads",
            Self::TriG => "application/trig",
            Self::JsonLd => "application/ld+json",
            Self::RdfXml => "application/rdf+xml",
        }
    }

    /// Whether the format can write RDF 1.2 triple terms: every one but
    /// JSON-LD 1.1, which has no syntax for them (RDF/XML 1.2 has
    /// `rdf:parseType="Triple"`, the others `<<( s p o )>>` or SPARQL 1.2's results).
    pub fn holds_triple_terms(self) -> bool {
        self != Self::JsonLd
    }

    /// The graph formats that can write triple terms, for messages.
    pub const TRIPLE_TERM_GRAPH_FORMATS: &'static str = "nt, ttl, nq, trig or rdf";

    /// Whether the format holds RDF graphs (`CONSTRUCT`, `DESCRIBE`) rather
    /// than solutions and booleans.
    pub fn is_graph(self) -> bool {
        self.results_format().is_none()
    }

    /// The format used when none is asked for: JSON for solutions and
    /// booleans, N-Triples for graphs.
    pub fn default_for(answer: &Answer<'_>) -> Self {
        match answer {
            Answer::Graph(_) => Self::NTriples,
            _ => Self::Json,
        }
    }

    /// The sparesults format of a solutions format; `None` for graph formats.
    pub fn results_format(self) -> Option<QueryResultsFormat> {
        Some(match self {
            Self::Json => QueryResultsFormat::Json,
            Self::Xml => QueryResultsFormat::Xml,
            Self::Csv => QueryResultsFormat::Csv,
            Self::Tsv => QueryResultsFormat::Tsv,
            _ => return None,
        })
    }

    /// The oxrdfio format of a graph format; `None` for solutions formats.
    pub fn rdf_format(self) -> Option<RdfFormat> {
        Some(match self {
            Self::NTriples => RdfFormat::NTriples,
            Self::Turtle => RdfFormat::Turtle,
            Self::NQuads => RdfFormat::NQuads,
            Self::TriG => RdfFormat::TriG,
            Self::JsonLd => RdfFormat::JsonLd { profile: JsonLdProfileSet::empty() },
            Self::RdfXml => RdfFormat::RdfXml,
            _ => return None,
        })
    }
}

impl std::fmt::Display for ResultFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Writing an answer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Evaluation failed while the answer was being written; what was
    /// written before is incomplete.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The writer failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The format cannot hold this kind of answer (e.g. Turtle for `SELECT`).
    #[error("{format} cannot hold {answer}; use {suggestion}")]
    FormatMismatch {
        /// The format asked for.
        format: ResultFormat,
        /// What the query returned: "SELECT solutions", "an ASK boolean", "a graph".
        answer: &'static str,
        /// The formats that can.
        suggestion: &'static str,
    },
    /// The answer holds an RDF 1.2 triple term, which JSON-LD 1.1 has no way
    /// to write; what was written before is incomplete.
    #[error("{format} cannot hold RDF 1.2 triple terms, which this answer has; use {suggestion}")]
    TripleTermsUnsupported {
        /// The format asked for.
        format: ResultFormat,
        /// The formats that can.
        suggestion: &'static str,
    },
}

const SOLUTION_FORMATS: &str = "json, xml, csv or tsv";
const GRAPH_FORMATS: &str = "nt, ttl, nq, trig, jsonld or rdf";

/// Writes an answer in `format`, pulling solutions or triples one at a time.
pub fn write_answer<W: Write>(answer: Answer<'_>, format: ResultFormat, out: W) -> Result<W, WriteError> {
    match answer {
        Answer::Solutions(mut solutions) => {
            let mut writer = SolutionsWriter::start(out, format, solutions.variables().to_vec())?;
            while let Some(written) = writer.serialize_next(&mut solutions) {
                written?;
            }
            Ok(writer.finish()?)
        }
        Answer::Boolean(value) => write_boolean(out, format, value),
        Answer::Graph(triples) => write_triples(out, format, triples),
    }
}

/// Writes solutions one at a time in a solutions format: SPARQL JSON by
/// [`JsonSolutionsWriter`], XML, CSV and TSV by sparesults. Hosts that write
/// row by row (the Worker, between rows) use it as [`write_answer`] does.
pub enum SolutionsWriter<W: Write> {
    /// SPARQL JSON.
    Json(JsonSolutionsWriter<W>),
    /// XML, CSV or TSV.
    Sparesults(WriterSolutionsSerializer<W>),
}

impl<W: Write> SolutionsWriter<W> {
    /// Writes what comes before the first solution; a graph format is a [`WriteError::FormatMismatch`].
    pub fn start(out: W, format: ResultFormat, variables: Vec<Variable>) -> Result<Self, WriteError> {
        Ok(match format.results_format().ok_or(WriteError::FormatMismatch { format, answer: "SELECT solutions", suggestion: SOLUTION_FORMATS })? {
            QueryResultsFormat::Json => Self::Json(JsonSolutionsWriter::start(out, &variables)?),
            other => Self::Sparesults(QueryResultsSerializer::from_format(other).serialize_solutions_to_writer(out, variables)?),
        })
    }

    /// Writes one solution.
    pub fn serialize(&mut self, solution: &QuerySolution) -> std::io::Result<()> {
        match self {
            Self::Json(writer) => writer.serialize(solution),
            Self::Sparesults(writer) => writer.serialize(solution),
        }
    }

    /// Writes the next solution of `solutions`; `None` at the end. SPARQL
    /// JSON is written from the dictionary's bytes
    /// ([`JsonSolutionsWriter::serialize_next`]), the other formats from
    /// the solution's terms.
    pub fn serialize_next(&mut self, solutions: &mut Solutions<'_>) -> Option<Result<(), WriteError>> {
        match self {
            Self::Json(writer) => writer.serialize_next(solutions),
            Self::Sparesults(writer) => Some(match solutions.next()? {
                Ok(solution) => writer.serialize(&solution).map_err(Into::into),
                Err(error) => Err(error.into()),
            }),
        }
    }

    /// Writes what comes after the last solution; gives the writer back.
    pub fn finish(self) -> std::io::Result<W> {
        match self {
            Self::Json(writer) => writer.finish(),
            Self::Sparesults(writer) => writer.finish(),
        }
    }
}

/// Writes an `ASK` answer (SPARQL JSON, XML, CSV or TSV).
pub fn write_boolean<W: Write>(out: W, format: ResultFormat, value: bool) -> Result<W, WriteError> {
    let results_format = format.results_format().ok_or(WriteError::FormatMismatch { format, answer: "an ASK boolean", suggestion: SOLUTION_FORMATS })?;
    Ok(QueryResultsSerializer::from_format(results_format).serialize_boolean_to_writer(out, value)?)
}

/// Writes triples (N-Triples, Turtle, N-Quads, TriG, JSON-LD or RDF/XML).
pub fn write_triples<W: Write>(out: W, format: ResultFormat, triples: impl IntoIterator<Item = Result<Triple, QueryError>>) -> Result<W, WriteError> {
    let rdf_format = format.rdf_format().ok_or(WriteError::FormatMismatch { format, answer: "a graph", suggestion: GRAPH_FORMATS })?;
    let mut serializer = RdfSerializer::from_format(rdf_format).for_writer(out);
    for triple in triples {
        let triple = triple?;
        if !format.holds_triple_terms() && triple.object.is_triple() {
            return Err(WriteError::TripleTermsUnsupported { format, suggestion: ResultFormat::TRIPLE_TERM_GRAPH_FORMATS });
        }
        serializer.serialize_triple(&triple)?;
    }
    Ok(serializer.finish()?)
}
