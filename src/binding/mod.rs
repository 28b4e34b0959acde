//! The napi layer: conversions only. JS options become core `SpawnSpec`s, core events become
//! plain objects with `Buffer`s, core errors become JS errors of their own class with their
//! stable `code` (see `error.rs`).

mod bytes;
mod error;
mod process;
mod realm;
mod settle;
mod snapshot;
mod value;

pub use process::*;
pub use realm::*;
pub use snapshot::*;
