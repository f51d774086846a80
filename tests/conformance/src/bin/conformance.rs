//! Runs the whole W3C SPARQL query suite; the last line of output is `N passed, N failed`.
//! See `docs/CONFORMANCE.md` for options.

fn main() -> std::process::ExitCode {
    rete_conformance::cli_main(&rete_conformance::Rete)
}
