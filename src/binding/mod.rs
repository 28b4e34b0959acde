//! The napi layer: conversions only. JS options become core `SpawnSpec`s, core events become
//! plain objects with `Buffer`s, core errors become JS errors of their own class with their
//! stable `code` (see `error.rs`). One part is not a conversion: `loop_reader` reads a flooding
//! pipe on the event loop of the JS thread that consumes it.

mod bytes;
mod error;
mod loop_reader;
mod output_take;
mod process;
mod realm;
mod runtime;
mod settle;
mod snapshot;
mod value;

pub use output_take::*;
pub use process::*;
pub use realm::*;
pub use snapshot::*;
