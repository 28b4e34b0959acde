//! procvisor: a native process supervisor for Node.js. `core` is pure Rust; `binding` is the napi
//! layer (left out of `cargo test` builds and of builds without the `node` feature, which run
//! without Node).

pub mod core;

#[cfg(all(feature = "node", not(test)))]
pub mod binding;
