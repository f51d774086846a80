//! Every way a request can fail, mapped to one status and one JSON body in
//! one place. Messages use the CLI's wording; nothing here is a blanket 500.

use rete_core::sparql::{Limit, QueryError, SyntaxError};
use rete_core::{FormatError, ReadError};
use serde_json::{Value, json};

/// A request that cannot be answered with what was asked.
#[derive(Debug)]
pub enum HttpError {
    /// 404: no such dataset, route or resource.
    NotFound(String),
    /// 405: the route exists, the method does not.
    MethodNotAllowed { allowed: &'static str },
    /// 400: a parameter is missing or invalid.
    BadRequest(String),
    /// 400: the query is not SPARQL 1.1 (with the position).
    Syntax(SyntaxError),
    /// 403: a SPARQL Update request; the endpoint only reads.
    ReadOnly,
    /// 406: no format the client accepts; lists those on offer.
    NotAcceptable { offered: Vec<String> },
    /// 406: the answer holds RDF 1.2 triple terms, which the negotiated
    /// format (JSON-LD) cannot write.
    TripleTermsNotAcceptable { format: &'static str, offered: Vec<String> },
    /// 413: the query text is longer than allowed.
    TooLarge { max_bytes: u64 },
    /// 415: a POST body of a type the protocol does not define.
    UnsupportedMediaType(String),
    /// 422: a limit of the per-request budget was reached.
    Budget { limit: &'static str, max: u64, message: String },
    /// 501: the query uses something the engine does not evaluate.
    Unsupported(String),
    /// 500: the file's bytes are invalid (logged).
    Corrupt(String),
    /// 502: R2 failed or answered something unexpected.
    Storage(String),
    /// 503: the dataset changed during the request; a retry will see the new version.
    Changed(String),
    /// 503: every query slot of the isolate stayed busy.
    Busy(String),
    /// 500: the Worker's own configuration is wrong (a var).
    Config(String),
    /// 500: evaluation failed for another reason.
    Internal(String),
}

impl HttpError {
    /// The status code.
    pub fn status(&self) -> u16 {
        match self {
            Self::NotFound(_) => 404,
            Self::MethodNotAllowed { .. } => 405,
            Self::BadRequest(_) | Self::Syntax(_) => 400,
            Self::ReadOnly => 403,
            Self::NotAcceptable { .. } | Self::TripleTermsNotAcceptable { .. } => 406,
            Self::TooLarge { .. } => 413,
            Self::UnsupportedMediaType(_) => 415,
            Self::Budget { .. } => 422,
            Self::Unsupported(_) => 501,
            Self::Corrupt(_) | Self::Config(_) | Self::Internal(_) => 500,
            Self::Storage(_) => 502,
            Self::Changed(_) | Self::Busy(_) => 503,
        }
    }

    /// The short kind, the body's `error` member.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotFound(_) => "not-found",
            Self::MethodNotAllowed { .. } => "method-not-allowed",
            Self::BadRequest(_) => "bad-request",
            Self::Syntax(_) => "syntax",
            Self::ReadOnly => "read-only",
            Self::NotAcceptable { .. } | Self::TripleTermsNotAcceptable { .. } => "not-acceptable",
            Self::TooLarge { .. } => "query-too-large",
            Self::UnsupportedMediaType(_) => "unsupported-media-type",
            Self::Budget { .. } => "budget",
            Self::Unsupported(_) => "unsupported",
            Self::Corrupt(_) => "corrupt-file",
            Self::Storage(_) => "storage",
            Self::Changed(_) => "dataset-changed",
            Self::Busy(_) => "busy",
            Self::Config(_) => "configuration",
            Self::Internal(_) => "internal",
        }
    }

    /// A sentence for a person.
    pub fn message(&self) -> String {
        match self {
            Self::NotFound(m) | Self::BadRequest(m) | Self::Unsupported(m) | Self::Corrupt(m) | Self::Storage(m) | Self::Changed(m) | Self::Busy(m) | Self::Internal(m) => m.clone(),
            Self::MethodNotAllowed { allowed } => format!("method not allowed here; use {allowed}"),
            Self::ReadOnly => "this endpoint is read-only: SPARQL Update is not supported (send a query instead)".into(),
            Self::Syntax(error) => error.to_string(),
            Self::NotAcceptable { offered } => format!("none of the types in Accept can be served here; available: {}", offered.join(", ")),
            Self::TripleTermsNotAcceptable { format, offered } => format!("{format} cannot hold RDF 1.2 triple terms, which this answer has; available: {}", offered.join(", ")),
            Self::TooLarge { max_bytes } => format!("the query is longer than {max_bytes} bytes"),
            Self::UnsupportedMediaType(m) => m.clone(),
            Self::Budget { message, .. } => message.clone(),
            Self::Config(m) => format!("worker misconfigured: {m}"),
        }
    }

    /// The JSON body: `{"error": kind, "status": N, "message": …}` plus what
    /// the kind carries (a syntax error's position, a budget's limit).
    pub fn body(&self) -> Value {
        let mut body = json!({"error": self.kind(), "status": self.status(), "message": self.message()});
        match self {
            Self::Syntax(error) => {
                if let Some(at) = error.location() {
                    body["line"] = json!(at.line + 1);
                    body["column"] = json!(at.column + 1);
                    body["offset"] = json!(at.offset);
                }
                if let Some(pointer) = error.pointer() {
                    body["pointer"] = json!(pointer);
                }
                body["reason"] = json!(error.message());
            }
            Self::Budget { limit, max, .. } => {
                body["limit"] = json!(limit);
                body["max"] = json!(max);
            }
            Self::NotAcceptable { offered } | Self::TripleTermsNotAcceptable { offered, .. } => body["available"] = json!(offered),
            Self::MethodNotAllowed { allowed } => body["allowed"] = json!(allowed),
            _ => {}
        }
        body
    }

    /// Extra headers: `Allow` for 405, `x-rete-limit` for a budget.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::MethodNotAllowed { allowed } => vec![("allow", (*allowed).to_owned())],
            Self::Budget { limit, .. } => vec![("x-rete-limit", (*limit).to_owned())],
            Self::Changed(_) | Self::Busy(_) => vec![("retry-after", "1".to_owned())],
            _ => Vec::new(),
        }
    }

    /// 406 for an answer holding triple terms that `format` cannot write,
    /// naming the formats of `offers` that can.
    pub fn triple_terms(format: crate::conneg::Format, offers: &[crate::conneg::Format]) -> Self {
        let media_type = |f: &crate::conneg::Format| f.media_types().first().map(|m| (*m).to_owned());
        Self::TripleTermsNotAcceptable {
            format: format.media_types().first().copied().unwrap_or("this format"),
            offered: offers.iter().filter(|f| f.holds_triple_terms()).filter_map(media_type).collect(),
        }
    }

    /// A budget of the Worker itself (rounds, bytes read, memory), named like the core's limits.
    pub fn worker_budget(limit: &'static str, max: u64, message: String) -> Self {
        Self::Budget { limit, max, message }
    }

    /// 422 `cpu`: the runtime said the request nears its CPU time limit
    /// (`is_near_cpu_limit`), so the Worker stops and says so rather than
    /// being killed without an answer.
    pub fn cpu_limit() -> Self {
        Self::Budget { limit: Limit::Cpu.name(), max: 0, message: CPU_MESSAGE.to_owned() }
    }
}

/// What a client reads when a request neared the CPU time limit.
const CPU_MESSAGE: &str = "query stopped near the CPU time limit of a request (Cloudflare Workers: 10 ms on the Free plan, 30 s by default on Paid); ask for less, or deploy on the Paid plan (README \"Deploy to Cloudflare\")";

impl From<QueryError> for HttpError {
    fn from(error: QueryError) -> Self {
        match error {
            QueryError::Syntax(error) => Self::Syntax(error),
            QueryError::Unsupported { feature } => Self::Unsupported(format!("unsupported: {feature}")),
            QueryError::Budget { limit: Limit::Cpu, .. } => Self::cpu_limit(),
            QueryError::Budget { limit, max } => {
                let message = QueryError::Budget { limit, max }.to_string();
                Self::Budget { limit: limit_name(limit), max, message }
            }
            QueryError::Read(error) => error.into(),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<ReadError> for HttpError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::Format(error) => error.into(),
            ReadError::Missing(ranges) => Self::Internal(format!("{} byte ranges were still missing after the last round", ranges.len())),
            ReadError::Budget { limit, max } => {
                let message = ReadError::Budget { limit, max }.to_string();
                Self::Budget { limit: limit.name(), max, message }
            }
            other => Self::Storage(other.to_string()),
        }
    }
}

impl From<FormatError> for HttpError {
    fn from(error: FormatError) -> Self {
        Self::Corrupt(error.to_string())
    }
}

fn limit_name(limit: Limit) -> &'static str {
    limit.name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_body_has_the_position() {
        let Err(error) = rete_core::sparql::parse_query("SELECT * WHERE { ?s ?p }", None) else { panic!("parsed") };
        let error = HttpError::from(error);
        assert_eq!(error.status(), 400);
        let body = error.body();
        assert_eq!(body["error"], "syntax");
        assert_eq!(body["line"], 1);
        assert!(body["column"].as_u64().is_some_and(|c| c > 1), "{body}");
        assert!(body["pointer"].as_str().is_some_and(|p| p.ends_with('^')), "{body}");
    }

    #[test]
    fn budget_names_the_limit() {
        let error = HttpError::from(QueryError::Budget { limit: Limit::RowsProduced, max: 10 });
        assert_eq!(error.status(), 422);
        assert_eq!(error.body()["limit"], "rows-produced");
        assert_eq!(error.headers(), vec![("x-rete-limit", "rows-produced".to_owned())]);
    }
}
