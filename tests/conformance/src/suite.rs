//! Where the W3C test files live, and the one mapping from test-suite IRIs to local files.
//!
//! Manifests are parsed with their official W3C IRIs as base IRI, so every IRI the harness
//! handles (tests, queries, data files, expected results, `FROM` graphs, named-graph names)
//! is the IRI the suite was written against: expected results such as `<data-g1.ttl>` in
//! `sparql10/graph` then come out exactly as an engine must produce them.
//! [`Suite::local_path`] is the only place that turns such an IRI into a file of the local
//! copy (`shared/sparql-tests/sparql/...`, byte-for-byte from `w3c/rdf-tests`).

use std::path::{Path, PathBuf};

/// Official IRI of the SPARQL 1.0 ("data-r2") suite, stored under `sparql/sparql10/`.
pub const SPARQL10_IRI: &str = "http://www.w3.org/2001/sw/DataAccess/tests/data-r2/";
/// Official IRI of the SPARQL 1.1 suite, stored under `sparql/sparql11/`.
pub const SPARQL11_IRI: &str = "http://www.w3.org/2009/sparql/docs/tests/data-sparql11/";

/// IRI prefix → folder under `sparql/`.
const PREFIXES: [(&str, &str); 2] = [(SPARQL10_IRI, "sparql10/"), (SPARQL11_IRI, "sparql11/")];

/// Manifests that together list every test of the suite (820 tests).
pub const ENTRY_MANIFESTS: [&str; 3] = [
    "sparql10/manifest.ttl",
    "sparql11/manifest-sparql11-query.ttl",
    "sparql11/manifest-sparql11-results.ttl",
];

/// Every test directory, in the order of the entry manifests.
pub const DIRECTORIES: [&str; 44] = [
    "sparql10/basic",
    "sparql10/triple-match",
    "sparql10/open-world",
    "sparql10/algebra",
    "sparql10/bnode-coreference",
    "sparql10/optional",
    "sparql10/optional-filter",
    "sparql10/graph",
    "sparql10/dataset",
    "sparql10/type-promotion",
    "sparql10/cast",
    "sparql10/boolean-effective-value",
    "sparql10/bound",
    "sparql10/expr-builtin",
    "sparql10/expr-ops",
    "sparql10/expr-equals",
    "sparql10/regex",
    "sparql10/i18n",
    "sparql10/construct",
    "sparql10/ask",
    "sparql10/distinct",
    "sparql10/sort",
    "sparql10/solution-seq",
    "sparql10/reduced",
    "sparql10/syntax-sparql1",
    "sparql10/syntax-sparql2",
    "sparql10/syntax-sparql3",
    "sparql10/syntax-sparql4",
    "sparql10/syntax-sparql5",
    "sparql11/aggregates",
    "sparql11/bind",
    "sparql11/bindings",
    "sparql11/cast",
    "sparql11/construct",
    "sparql11/exists",
    "sparql11/functions",
    "sparql11/grouping",
    "sparql11/negation",
    "sparql11/project-expression",
    "sparql11/property-path",
    "sparql11/subquery",
    "sparql11/syntax-query",
    "sparql11/csv-tsv-res",
    "sparql11/json-res",
];

/// The local copy of the test suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The folder holding `sparql/sparql10` and `sparql/sparql11`.
    root: PathBuf,
}

impl Suite {
    /// Uses the test suite at `root` (the folder that holds `sparql/`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Finds the suite: `$RETE_SPARQL_TESTS` if set, else `<repo>/../shared/sparql-tests`
    /// (CI clones the repo with `shared/` beside it).
    pub fn locate() -> Result<Self, String> {
        let root = match std::env::var_os("RETE_SPARQL_TESTS") {
            Some(dir) => PathBuf::from(dir),
            None => repo_root().join("../shared/sparql-tests"),
        };
        if root.join("sparql").is_dir() {
            Ok(Self::new(root))
        } else {
            Err(format!(
                "SPARQL test suite not found at {} (set RETE_SPARQL_TESTS to the folder holding sparql/)",
                root.display()
            ))
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The local file for a test-suite IRI (fragment ignored), or `None` when the IRI is not
    /// part of the suite. The file may not exist.
    pub fn local_path(&self, iri: &str) -> Option<PathBuf> {
        let relative = suite_relative(iri)?;
        let relative = relative.split('#').next().unwrap_or_default();
        if relative.split('/').any(|segment| segment == "..") {
            return None;
        }
        Some(self.root.join("sparql").join(relative))
    }
}

/// The repository root, from this crate's location (`<repo>/tests/conformance`).
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// `http://www.w3.org/2001/sw/DataAccess/tests/data-r2/basic/manifest#x` → `sparql10/basic/manifest#x`.
/// Used for file lookup and for short test names in reports.
pub fn suite_relative(iri: &str) -> Option<String> {
    PREFIXES.iter().find_map(|(prefix, folder)| {
        iri.strip_prefix(prefix)
            .map(|rest| format!("{folder}{rest}"))
    })
}

/// `sparql10/basic/manifest.ttl` → its official IRI.
pub fn official_iri(relative: &str) -> Option<String> {
    PREFIXES.iter().find_map(|(prefix, folder)| {
        relative
            .strip_prefix(folder)
            .map(|rest| format!("{prefix}{rest}"))
    })
}

/// Short form of a test-suite IRI for messages; other IRIs are returned unchanged.
pub fn short(iri: &str) -> String {
    suite_relative(iri).unwrap_or_else(|| iri.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_both_suites() {
        let suite = Suite::new("/s");
        assert_eq!(
            suite
                .local_path("http://www.w3.org/2001/sw/DataAccess/tests/data-r2/graph/data-g1.ttl"),
            Some(PathBuf::from("/s/sparql/sparql10/graph/data-g1.ttl"))
        );
        assert_eq!(
            suite.local_path(
                "http://www.w3.org/2009/sparql/docs/tests/data-sparql11/bind/manifest#bind01"
            ),
            Some(PathBuf::from("/s/sparql/sparql11/bind/manifest"))
        );
        assert_eq!(suite.local_path("http://example.org/data.ttl"), None);
        assert_eq!(
            official_iri("sparql11/bind/manifest.ttl").as_deref(),
            Some("http://www.w3.org/2009/sparql/docs/tests/data-sparql11/bind/manifest.ttl")
        );
    }
}
