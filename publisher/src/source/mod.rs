//! Byte-range sources the CLI reads `.rete` files through.

pub mod file;
pub mod http;
