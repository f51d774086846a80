//! The Worker's settings, parsed from `wrangler.toml` `[vars]` on every
//! request (their text read once per isolate, `lib.rs`; vars are strings; a
//! missing one takes its default, a malformed one is a configuration error
//! answered with 500 rather than silently ignored).

use std::collections::BTreeMap;

/// Every setting, with its var name in the comment.
#[derive(Debug, Clone)]
pub struct Config {
    /// `MAX_QUADS_SCANNED`: quads one evaluation may read.
    pub max_quads_scanned: u64,
    /// `MAX_ROWS_PRODUCED`: solutions or triples one answer may hold.
    pub max_rows_produced: u64,
    /// `MAX_STEPS`: units of evaluation work (joins, lookups, decodes).
    pub max_steps: u64,
    /// `MAX_COMPUTED_BYTES`: bytes of values built by expressions.
    pub max_computed_bytes: u64,
    /// `MAX_TIME_MS`: wall-clock time of one request, checked between
    /// rounds and while evaluating (with the runtime's CPU-limit signal).
    pub max_time_ms: u64,
    /// `MAX_ROUNDS`: sequential rounds of block reads for one request (core's
    /// limit; the pointer and the open, a fixed few rounds, are not counted).
    pub max_rounds: u64,
    /// `MAX_READ_BYTES`: bytes read from R2 by one request.
    pub max_read_bytes: u64,
    /// `MAX_SUBREQUESTS`: R2 operations and Cache API calls of one request
    /// (Workers cap both together: 50 on the Free plan, 1,000 on Paid).
    pub max_subrequests: u64,
    /// `CACHE_BYTES`: a block cache's budget: the decoded blocks one query
    /// may hold at once, kept in the isolate for the next queries.
    pub cache_bytes: u64,
    /// `COMPRESSED_CACHE_BYTES`: sealed (compressed) blocks kept in the
    /// isolate for all its requests, which decode them again instead of
    /// reading them (0: none kept, a query's blocks stay pinned in its cache).
    pub compressed_cache_bytes: u64,
    /// `MAX_CONCURRENT_QUERIES`: block caches in the isolate; more queries wait.
    pub max_concurrent_queries: u64,
    /// `MAX_QUERY_BYTES`: longest query text (GET parameter or POST body).
    pub max_query_bytes: u64,
    /// `COALESCE_GAP_BYTES`: ranges closer than this are read as one.
    pub coalesce_gap_bytes: u64,
    /// `POINTER_TTL_S`: how long a dataset's `current.json` is reused.
    pub pointer_ttl_s: u64,
    /// `CACHE_MAX_AGE_S`: `Cache-Control: max-age` of successful answers.
    pub cache_max_age_s: u64,
    /// `RESOURCE_PAGE_TRIPLES`: triples per page of a resource view.
    pub resource_page_triples: u64,
    /// `BASE_IRIS`: JSON object, dataset name → base IRI (see README "Base-IRI mode").
    pub base_iris: BTreeMap<String, String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_quads_scanned: 5_000_000,
            max_rows_produced: 100_000,
            max_steps: 10_000_000,
            max_computed_bytes: 16 << 20,
            max_time_ms: 20_000,
            max_rounds: rete_core::read::DEFAULT_MAX_ROUNDS,
            max_read_bytes: 64 << 20,
            max_subrequests: 50,
            cache_bytes: 16 << 20,
            compressed_cache_bytes: 16 << 20,
            max_concurrent_queries: 2,
            max_query_bytes: 64 << 10,
            coalesce_gap_bytes: 32 << 10,
            pointer_ttl_s: 5,
            cache_max_age_s: 60,
            resource_page_triples: 500,
            base_iris: BTreeMap::new(),
        }
    }
}

impl Config {
    /// Reads every setting through `var`, which returns a var's text if set.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut config = Self::default();
        let numbers: [(&str, &mut u64); 16] = [
            ("MAX_QUADS_SCANNED", &mut config.max_quads_scanned),
            ("MAX_ROWS_PRODUCED", &mut config.max_rows_produced),
            ("MAX_STEPS", &mut config.max_steps),
            ("MAX_COMPUTED_BYTES", &mut config.max_computed_bytes),
            ("MAX_TIME_MS", &mut config.max_time_ms),
            ("MAX_ROUNDS", &mut config.max_rounds),
            ("MAX_READ_BYTES", &mut config.max_read_bytes),
            ("MAX_SUBREQUESTS", &mut config.max_subrequests),
            ("CACHE_BYTES", &mut config.cache_bytes),
            ("COMPRESSED_CACHE_BYTES", &mut config.compressed_cache_bytes),
            ("MAX_CONCURRENT_QUERIES", &mut config.max_concurrent_queries),
            ("MAX_QUERY_BYTES", &mut config.max_query_bytes),
            ("COALESCE_GAP_BYTES", &mut config.coalesce_gap_bytes),
            ("POINTER_TTL_S", &mut config.pointer_ttl_s),
            ("CACHE_MAX_AGE_S", &mut config.cache_max_age_s),
            ("RESOURCE_PAGE_TRIPLES", &mut config.resource_page_triples),
        ];
        for (name, slot) in numbers {
            if let Some(text) = var(name) {
                *slot = text.trim().replace('_', "").parse().map_err(|_| format!("var {name} = {text:?} is not a whole number"))?;
            }
        }
        if config.resource_page_triples == 0 {
            return Err("var RESOURCE_PAGE_TRIPLES must be at least 1".into());
        }
        if let Some(text) = var("BASE_IRIS").filter(|t| !t.trim().is_empty()) {
            config.base_iris = serde_json::from_str(&text).map_err(|e| format!("var BASE_IRIS is not a JSON object of dataset name to base IRI: {e}"))?;
            for (name, base) in &config.base_iris {
                if oxrdf::NamedNode::new(base.as_str()).is_err() {
                    return Err(format!("var BASE_IRIS: base of {name:?} is not an absolute IRI: {base:?}"));
                }
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let config = Config::from_vars(|name| match name {
            "MAX_ROWS_PRODUCED" => Some("1_000".into()),
            "BASE_IRIS" => Some(r#"{"qudt": "http://qudt.org/"}"#.into()),
            _ => None,
        })
        .unwrap_or_default();
        assert_eq!(config.max_rows_produced, 1000);
        assert_eq!(config.max_steps, Config::default().max_steps);
        assert_eq!(config.base_iris.get("qudt").map(String::as_str), Some("http://qudt.org/"));
    }

    #[test]
    fn malformed_vars_are_named() {
        let error = Config::from_vars(|name| (name == "MAX_STEPS").then(|| "lots".into())).err().unwrap_or_default();
        assert!(error.contains("MAX_STEPS"), "{error}");
        let error = Config::from_vars(|name| (name == "BASE_IRIS").then(|| r#"{"x": "relative/"}"#.into())).err().unwrap_or_default();
        assert!(error.contains("BASE_IRIS"), "{error}");
    }
}
