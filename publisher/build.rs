//! Links the `rete` binary as a position-dependent executable on Linux/glibc
//! (`-no-pie`). A fresh `rete` process is the cold path of every query from a
//! terminal (issue 14: ≤ 3 ms including the open): as a PIE, the dynamic loader
//! first rewrote ~41,000 relative relocations, dirtying ~160 pages of
//! `.data.rel.ro`, which was a third of a fresh process's CPU (`perf stat -r 30
//! rete --version`: 1.8 → 1.2 ms, page faults 358 → 181; docs/BENCHMARK.md,
//! "Cold start"). The trade: rete's own code and data sit at a fixed address
//! (the libraries, heap and stack are still randomized). Backtraces are the same.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
