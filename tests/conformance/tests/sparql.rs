//! One test per directory of the W3C SPARQL suite, all through the same runner. Each passes
//! when its directory passes at least as many tests as recorded in `floor.txt`; failures are
//! printed with their reasons (`cargo test -p rete-conformance -- --nocapture`).

use rete_conformance::{Engine, Floor, Rete, Suite, load_directory, run_tests};

/// The engine under test.
fn engine() -> impl Engine {
    Rete
}

fn run_directory(directory: &str) {
    let suite = match Suite::locate() {
        Ok(suite) => suite,
        Err(error) => panic!("{error}"),
    };
    let tests = match load_directory(&suite, directory) {
        Ok(tests) => tests,
        Err(error) => panic!("{error}"),
    };
    assert!(!tests.is_empty(), "{directory}: manifest lists no tests");
    let report = run_tests(&engine(), &suite, &tests);
    print!("{}", report.to_text());
    let floor = match Floor::read() {
        Ok(floor) => floor,
        Err(error) => panic!("{error}"),
    };
    let violations = floor.violations(&report, false);
    assert!(
        violations.is_empty(),
        "below floor: {}",
        violations.join("; ")
    );
}

macro_rules! directories {
    ($($name:ident => $directory:literal,)*) => {
        $(
            #[test]
            fn $name() {
                run_directory($directory);
            }
        )*

        /// The list above is every directory the entry manifests reach, in their order.
        #[test]
        fn covers_every_directory() {
            let listed = [$($directory),*];
            assert_eq!(listed.as_slice(), rete_conformance::suite::DIRECTORIES.as_slice());
            let suite = match Suite::locate() {
                Ok(suite) => suite,
                Err(error) => panic!("{error}"),
            };
            let tests = match rete_conformance::load_all(&suite) {
                Ok(tests) => tests,
                Err(error) => panic!("{error}"),
            };
            let mut reached: Vec<&str> = Vec::new();
            for test in &tests {
                if reached.last() != Some(&test.directory.as_str()) {
                    reached.push(&test.directory);
                }
            }
            assert_eq!(reached.as_slice(), listed.as_slice());
            assert_eq!(tests.len(), 820, "the suite README counts 820 tests");
        }
    };
}

directories! {
    sparql10_basic => "sparql10/basic",
    sparql10_triple_match => "sparql10/triple-match",
    sparql10_open_world => "sparql10/open-world",
    sparql10_algebra => "sparql10/algebra",
    sparql10_bnode_coreference => "sparql10/bnode-coreference",
    sparql10_optional => "sparql10/optional",
    sparql10_optional_filter => "sparql10/optional-filter",
    sparql10_graph => "sparql10/graph",
    sparql10_dataset => "sparql10/dataset",
    sparql10_type_promotion => "sparql10/type-promotion",
    sparql10_cast => "sparql10/cast",
    sparql10_boolean_effective_value => "sparql10/boolean-effective-value",
    sparql10_bound => "sparql10/bound",
    sparql10_expr_builtin => "sparql10/expr-builtin",
    sparql10_expr_ops => "sparql10/expr-ops",
    sparql10_expr_equals => "sparql10/expr-equals",
    sparql10_regex => "sparql10/regex",
    sparql10_i18n => "sparql10/i18n",
    sparql10_construct => "sparql10/construct",
    sparql10_ask => "sparql10/ask",
    sparql10_distinct => "sparql10/distinct",
    sparql10_sort => "sparql10/sort",
    sparql10_solution_seq => "sparql10/solution-seq",
    sparql10_reduced => "sparql10/reduced",
    sparql10_syntax_sparql1 => "sparql10/syntax-sparql1",
    sparql10_syntax_sparql2 => "sparql10/syntax-sparql2",
    sparql10_syntax_sparql3 => "sparql10/syntax-sparql3",
    sparql10_syntax_sparql4 => "sparql10/syntax-sparql4",
    sparql10_syntax_sparql5 => "sparql10/syntax-sparql5",
    sparql11_aggregates => "sparql11/aggregates",
    sparql11_bind => "sparql11/bind",
    sparql11_bindings => "sparql11/bindings",
    sparql11_cast => "sparql11/cast",
    sparql11_construct => "sparql11/construct",
    sparql11_exists => "sparql11/exists",
    sparql11_functions => "sparql11/functions",
    sparql11_grouping => "sparql11/grouping",
    sparql11_negation => "sparql11/negation",
    sparql11_project_expression => "sparql11/project-expression",
    sparql11_property_path => "sparql11/property-path",
    sparql11_subquery => "sparql11/subquery",
    sparql11_syntax_query => "sparql11/syntax-query",
    sparql11_csv_tsv_res => "sparql11/csv-tsv-res",
    sparql11_json_res => "sparql11/json-res",
}
