//! One file per route; `lib.rs` holds the table that dispatches to them.

pub mod card;
pub mod dataset;
pub mod deref;
pub mod graph;
pub mod index;
pub mod labels;
pub mod search;
pub mod sparql;
pub mod summary;
