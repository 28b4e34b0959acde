//! procvisor: a native process supervisor for Node.js. `core` is pure Rust; `binding` is the napi
//! layer (left out of `cargo test` builds, which run without Node).

pub mod core;

#[cfg(not(test))]
pub mod binding;
