//! Running tests against an [`Engine`] and collecting the outcomes into a [`Report`].
//!
//! Every problem is confined to its test: unreadable files, engine errors and even engine
//! panics become a failed test with a one-line reason, so one run always reports on the
//! whole suite.

use crate::compare::{compare, query_order};
use crate::engine::{Answer, Engine, PathAndIri};
use crate::expected::{csv_projection, read_expected};
use crate::manifest::{TestCase, TestKind, load_manifest};
use crate::suite::{Suite, official_iri};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

/// Tests that are not run, each with the reason. Only for tests that do not evaluate a query
/// (service, update, ...); the copied suite has none of those, so the list is empty. Engine
/// failures are never skipped: they show up as failures and are tracked by `floor.txt`.
pub const SKIPPED: &[(&str, &str)] = &[];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(String),
    Skipped(String),
}

/// The outcome of one test.
#[derive(Debug, Clone)]
pub struct TestResult {
    /// Short id, e.g. `sparql10/basic/manifest#base-prefix-1`.
    pub id: String,
    pub name: String,
    pub directory: String,
    pub syntax: bool,
    pub outcome: Outcome,
}

/// Outcomes of a run, in manifest order.
#[derive(Debug, Clone)]
pub struct Report {
    pub engine: String,
    pub results: Vec<TestResult>,
}

/// Pass/fail counts of a group of tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Counts {
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }

    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed(_) => self.failed += 1,
            Outcome::Skipped(_) => self.skipped += 1,
        }
    }
}

/// Loads the tests of one directory (e.g. `sparql10/basic`) from its `manifest.ttl`.
pub fn load_directory(suite: &Suite, directory: &str) -> Result<Vec<TestCase>, String> {
    let iri = official_iri(&format!("{directory}/manifest.ttl"))
        .ok_or_else(|| format!("{directory} is not a test-suite directory"))?;
    load_manifest(suite, &iri).map_err(|e| e.to_string())
}

/// Loads every test, through the suite's entry manifests.
pub fn load_all(suite: &Suite) -> Result<Vec<TestCase>, String> {
    let mut tests = Vec::new();
    for entry in crate::suite::ENTRY_MANIFESTS {
        let iri = official_iri(entry).ok_or_else(|| format!("{entry} has no official IRI"))?;
        tests.extend(load_manifest(suite, &iri).map_err(|e| e.to_string())?);
    }
    Ok(tests)
}

/// Runs `tests` one after the other.
pub fn run_tests(engine: &dyn Engine, suite: &Suite, tests: &[TestCase]) -> Report {
    Report {
        engine: engine.name().to_owned(),
        results: tests
            .iter()
            .map(|test| TestResult {
                id: test.short_id(),
                name: test.name.clone(),
                directory: test.directory.clone(),
                syntax: test.is_syntax(),
                outcome: run_test(engine, suite, test),
            })
            .collect(),
    }
}

/// Runs one test.
pub fn run_test(engine: &dyn Engine, suite: &Suite, test: &TestCase) -> Outcome {
    let id = test.short_id();
    if let Some((_, reason)) = SKIPPED.iter().find(|(skipped, _)| *skipped == id) {
        return Outcome::Skipped((*reason).to_owned());
    }
    let result = match &test.kind {
        TestKind::PositiveSyntax | TestKind::NegativeSyntax => run_syntax_test(engine, suite, test),
        TestKind::QueryEvaluation | TestKind::CsvResultFormat => {
            run_evaluation_test(engine, suite, test)
        }
        TestKind::Invalid(reason) => Err(format!("cannot run: {reason}")),
    };
    match result {
        Ok(()) => Outcome::Passed,
        Err(reason) => Outcome::Failed(one_line(&reason)),
    }
}

fn run_syntax_test(engine: &dyn Engine, suite: &Suite, test: &TestCase) -> Result<(), String> {
    let query = read_query(suite, &test.query)?;
    let parsed = guarded(|| engine.parse_only(&query, &test.query))?;
    match (&test.kind, parsed) {
        (TestKind::PositiveSyntax, Err(error)) => Err(format!("valid query rejected: {error}")),
        (TestKind::NegativeSyntax, Ok(())) => Err("invalid query accepted".into()),
        _ => Ok(()),
    }
}

fn run_evaluation_test(engine: &dyn Engine, suite: &Suite, test: &TestCase) -> Result<(), String> {
    let query = read_query(suite, &test.query)?;
    let files = |iris: &[String]| {
        iris.iter()
            .map(|iri| data_file(suite, iri))
            .collect::<Result<Vec<_>, _>>()
    };
    let default_graph = files(&test.data)?;
    let named_graphs = files(&test.graph_data)?;
    let result_iri = test.result.as_deref().ok_or("no expected result")?;
    let expected = read_expected(&data_file(suite, result_iri)?)
        .map_err(|e| format!("cannot read expected results: {e}"))?;

    let resolve = |iri: &str| suite.local_path(iri).filter(|path| path.is_file());
    let answer =
        guarded(|| engine.evaluate(&query, &test.query, &default_graph, &named_graphs, &resolve))?
            .map_err(|e| e.to_string())?;

    let answer = match (&test.kind, answer) {
        (TestKind::CsvResultFormat, Answer::Solutions(solutions)) => {
            Answer::Solutions(csv_projection(&solutions))
        }
        (TestKind::CsvResultFormat, _) => {
            return Err("CSV test: the query did not return solutions".into());
        }
        (_, answer) => answer,
    };
    compare(
        &expected,
        &answer,
        &query_order(&query, &test.query),
        test.lax_cardinality,
    )
}

fn read_query(suite: &Suite, iri: &str) -> Result<String, String> {
    let path = suite
        .local_path(iri)
        .ok_or_else(|| format!("query <{iri}> is outside the suite"))?;
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))
}

fn data_file(suite: &Suite, iri: &str) -> Result<PathAndIri, String> {
    let path: PathBuf = suite
        .local_path(iri)
        .ok_or_else(|| format!("<{iri}> is outside the suite"))?;
    if !path.is_file() {
        return Err(format!("missing file {}", path.display()));
    }
    Ok(PathAndIri {
        path,
        iri: iri.to_owned(),
    })
}

/// Runs engine code, turning a panic into an error for this test only.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("engine panicked: {message}")
    })
}

/// Reasons go on one line of a terminal or a Markdown list.
fn one_line(reason: &str) -> String {
    let flat: String = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 400 {
        format!("{}…", flat.chars().take(400).collect::<String>())
    } else {
        flat
    }
}

impl Report {
    /// Counts per directory, in first-seen order.
    pub fn directories(&self) -> Vec<(String, Counts)> {
        let mut directories: Vec<(String, Counts)> = Vec::new();
        for result in &self.results {
            let index = match directories.iter().position(|(d, _)| *d == result.directory) {
                Some(index) => index,
                None => {
                    directories.push((result.directory.clone(), Counts::default()));
                    directories.len() - 1
                }
            };
            directories[index].1.add(&result.outcome);
        }
        directories
    }

    /// Counts over the tests selected by `filter`.
    pub fn counts(&self, filter: impl Fn(&TestResult) -> bool) -> Counts {
        let mut counts = Counts::default();
        for result in self.results.iter().filter(|r| filter(r)) {
            counts.add(&result.outcome);
        }
        counts
    }

    pub fn failures(&self) -> impl Iterator<Item = (&TestResult, &str)> {
        self.results.iter().filter_map(|r| match &r.outcome {
            Outcome::Failed(reason) => Some((r, reason.as_str())),
            _ => None,
        })
    }

    /// The text report: failing tests, then `dir: P passed, F failed` per directory, the
    /// evaluation/syntax split, and last the plain `N passed, N failed` line CI sums.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (result, reason) in self.failures() {
            out.push_str(&format!("FAIL {}: {reason}\n", result.id));
        }
        for (directory, counts) in self.directories() {
            out.push_str(&format!(
                "{directory}: {} passed, {} failed",
                counts.passed, counts.failed
            ));
            if counts.skipped > 0 {
                out.push_str(&format!(" ({} skipped)", counts.skipped));
            }
            out.push('\n');
        }
        let evaluation = self.counts(|r| !r.syntax);
        let syntax = self.counts(|r| r.syntax);
        let all = self.counts(|_| true);
        out.push_str(&format!(
            "engine {}: evaluation tests {}/{} passed, syntax tests {}/{} passed\n",
            self.engine,
            evaluation.passed,
            evaluation.total(),
            syntax.passed,
            syntax.total()
        ));
        if all.skipped > 0 {
            out.push_str(&format!("{} tests skipped\n", all.skipped));
        }
        out.push_str(&format!("{} passed, {} failed\n", all.passed, all.failed));
        out
    }

    /// The Markdown report written to `docs/CONFORMANCE.md`; `notes` (the
    /// engine's [`Engine::notes`]) closes it.
    pub fn to_markdown(&self, notes: &str) -> String {
        let evaluation = self.counts(|r| !r.syntax);
        let syntax = self.counts(|r| r.syntax);
        let all = self.counts(|_| true);
        let mut out = String::from(MARKDOWN_PREAMBLE);
        out.push_str(&format!("## Results (engine: {})\n\n", self.engine));
        out.push_str("| tests | passed | failed | skipped | total |\n|---|---:|---:|---:|---:|\n");
        for (label, counts) in [
            ("evaluation", evaluation),
            ("syntax", syntax),
            ("**all**", all),
        ] {
            out.push_str(&format!(
                "| {label} | {} | {} | {} | {} |\n",
                counts.passed,
                counts.failed,
                counts.skipped,
                counts.total()
            ));
        }
        out.push_str("\n### Per directory\n\n| directory | passed | failed | skipped |\n|---|---:|---:|---:|\n");
        for (directory, counts) in self.directories() {
            out.push_str(&format!(
                "| {directory} | {} | {} | {} |\n",
                counts.passed, counts.failed, counts.skipped
            ));
        }
        out.push_str("\n### Failing tests\n\n");
        let mut any = false;
        for (result, reason) in self.failures() {
            any = true;
            out.push_str(&format!(
                "- `{}` ({}): {}\n",
                result.id,
                result.name.replace('`', "'"),
                reason.replace('`', "'")
            ));
        }
        if !any {
            out.push_str("None.\n");
        }
        let skipped: Vec<_> = self
            .results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Skipped(reason) => Some((r, reason)),
                _ => None,
            })
            .collect();
        if !skipped.is_empty() {
            out.push_str("\n### Skipped tests\n\n");
            for (result, reason) in skipped {
                out.push_str(&format!("- `{}`: {reason}\n", result.id));
            }
        }
        if !notes.is_empty() {
            out.push('\n');
            out.push_str(notes);
        }
        out
    }
}

const MARKDOWN_PREAMBLE: &str = "# SPARQL conformance

<!-- Generated: RETE_WRITE_CONFORMANCE=1 cargo run -p rete-conformance --release --bin conformance -->

The W3C SPARQL 1.0 (data-r2) and SPARQL 1.1 query test suites (copy in `../shared/sparql-tests`,
see its README): 518 evaluation tests (515 `mf:QueryEvaluationTest`, 3 `mf:CSVResultFormatTest`)
and 302 syntax tests (212 positive, 90 negative). The harness is the crate `tests/conformance`
(`rete-conformance`); it is engine-agnostic, an engine implements its `Engine` trait.

Comparison rules (`tests/conformance/src/compare.rs`):

- Terms compare exactly: lexical forms, datatypes and language tags must match; nothing is
  normalised (`\"01\"^^xsd:integer` ≠ `\"1\"^^xsd:integer`).
- Blank nodes match up to one bijection over the whole result; graphs (CONSTRUCT/DESCRIBE)
  by isomorphism.
- Solutions are a multiset; order counts only under a top-level ORDER BY, checked on the sort
  keys so that ties may come in any order. `mf:LaxCardinality` (REDUCED) ignores duplicates.
- CSV tests compare what survives CSV (IRI strings, lexical forms, blank node labels).
  For TSV expectations the exponent letter of xsd:double is case-insensitive, because
  `csvtsv03.tsv` writes the data's `1.0E6` as `1.0e6`.

Commands:

- `cargo run -p rete-conformance --release --bin conformance [FILTER]`: run (FILTER keeps test
  ids containing it); prints failures, `dir: P passed, F failed` lines and a last line
  `N passed, N failed`. Exits non-zero if a directory or the total passes fewer tests than
  `tests/conformance/floor.txt`; `--update-floor` rewrites that file from the run.
- `cargo test -p rete-conformance`: one test per directory (`tests/sparql.rs`), each held to its
  floor, plus self-checks of the comparison rules (`tests/harness.rs`).
- `RETE_WRITE_CONFORMANCE=1` with the binary rewrites this file.
- `RETE_SPARQL_TESTS=<dir>` points at another copy of the suite (default `<repo>/../shared/sparql-tests`).

Another engine plugs in by implementing `rete_conformance::Engine` (`evaluate` over the test's
files, `parse_only` for syntax tests) and calling `rete_conformance::cli_main(&engine)`; after a
switch of engine, `--update-floor` records its counts. Nothing is skipped (`SKIPPED` in
`src/runner.rs` is empty): every failure below is an engine failure.

";

/// Passing-test floor per directory and in total, stored in `tests/conformance/floor.txt`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Floor {
    pub total: usize,
    pub directories: Vec<(String, usize)>,
}

impl Floor {
    pub fn path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("floor.txt")
    }

    /// Reads `floor.txt`: lines `total N` and `<directory> N`; `#` starts a comment.
    pub fn read() -> Result<Self, String> {
        let path = Self::path();
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut floor = Self::default();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let parsed = line
                .split_once(char::is_whitespace)
                .and_then(|(key, count)| Some((key, count.trim().parse::<usize>().ok()?)));
            match parsed {
                Some(("total", count)) => floor.total = count,
                Some((directory, count)) => floor.directories.push((directory.to_owned(), count)),
                None => {
                    return Err(format!(
                        "{}:{}: expected `<directory> <count>`",
                        path.display(),
                        number + 1
                    ));
                }
            }
        }
        Ok(floor)
    }

    pub fn from_report(report: &Report) -> Self {
        Self {
            total: report.counts(|_| true).passed,
            directories: report
                .directories()
                .into_iter()
                .map(|(directory, counts)| (directory, counts.passed))
                .collect(),
        }
    }

    pub fn write(&self, engine: &str) -> Result<(), String> {
        let mut text = format!(
            "# Minimum passing tests (engine: {engine}). The conformance binary and tests fail below it.\n\
             # Rewrite with: cargo run -p rete-conformance --release --bin conformance -- --update-floor\n\
             total {}\n",
            self.total
        );
        for (directory, count) in &self.directories {
            text.push_str(&format!("{directory} {count}\n"));
        }
        let path = Self::path();
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The floor of one directory (`None` if not recorded).
    pub fn directory(&self, directory: &str) -> Option<usize> {
        self.directories
            .iter()
            .find(|(d, _)| d == directory)
            .map(|(_, count)| *count)
    }

    /// Where `report` passes fewer tests than the floor. With `whole_run` false only the
    /// directories present in the report are checked (not the total).
    pub fn violations(&self, report: &Report, whole_run: bool) -> Vec<String> {
        let mut violations = Vec::new();
        for (directory, counts) in report.directories() {
            match self.directory(&directory) {
                Some(floor) if counts.passed < floor => {
                    violations.push(format!(
                        "{directory}: {} passed, floor is {floor}",
                        counts.passed
                    ));
                }
                Some(_) => {}
                None if counts.passed < counts.total() => {
                    violations.push(format!(
                        "{directory}: not in floor.txt and {} failed",
                        counts.failed
                    ));
                }
                None => {}
            }
        }
        let passed = report.counts(|_| true).passed;
        if whole_run && passed < self.total {
            violations.push(format!("total: {passed} passed, floor is {}", self.total));
        }
        violations
    }
}

/// The conformance binary's `main`, for any engine: runs the whole suite (or the tests whose
/// id contains the optional FILTER argument), prints the report, writes `docs/CONFORMANCE.md`
/// when `RETE_WRITE_CONFORMANCE=1`, updates `floor.txt` with `--update-floor`, and fails when
/// passes drop below the floor.
pub fn cli_main(engine: &dyn Engine) -> std::process::ExitCode {
    use std::process::ExitCode;
    let mut update_floor = false;
    let mut filter = None;
    for argument in std::env::args().skip(1) {
        match argument.as_str() {
            "--update-floor" => update_floor = true,
            "-h" | "--help" => {
                println!("usage: conformance [--update-floor] [FILTER]");
                return ExitCode::SUCCESS;
            }
            _ => filter = Some(argument),
        }
    }
    let outcome = Suite::locate().and_then(|suite| {
        let mut tests = load_all(&suite)?;
        if let Some(filter) = &filter {
            tests.retain(|test| test.short_id().contains(filter.as_str()));
        }
        Ok(run_tests(engine, &suite, &tests))
    });
    let report = match outcome {
        Ok(report) => report,
        Err(error) => {
            eprintln!("conformance: {error}");
            println!("0 passed, 1 failed");
            return ExitCode::FAILURE;
        }
    };
    let whole_run = filter.is_none();
    let mut ok = true;
    if whole_run && std::env::var("RETE_WRITE_CONFORMANCE").is_ok_and(|v| v == "1") {
        let path = crate::suite::repo_root().join("docs/CONFORMANCE.md");
        match std::fs::write(&path, report.to_markdown(engine.notes())) {
            Ok(()) => eprintln!("wrote {}", path.display()),
            Err(error) => {
                eprintln!("cannot write {}: {error}", path.display());
                ok = false;
            }
        }
    }
    if whole_run && update_floor {
        if let Err(error) = Floor::from_report(&report).write(&report.engine) {
            eprintln!("cannot write floor: {error}");
            ok = false;
        }
    }
    match Floor::read() {
        Ok(_) if !whole_run => {}
        Ok(floor) => {
            for violation in floor.violations(&report, whole_run) {
                eprintln!("below floor: {violation}");
                ok = false;
            }
        }
        Err(error) => {
            eprintln!("cannot read floor: {error}");
            ok = false;
        }
    }
    print!("{}", report.to_text());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
