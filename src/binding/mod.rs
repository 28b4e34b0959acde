//! The napi layer: conversions only. JS options become core `SpawnSpec`s, core events become
//! plain objects with `Buffer`s, core errors become JS errors whose message starts with the
//! stable code in brackets (`[PROCESS_SPAWN_FAILED] …`), which `index.js` turns into typed classes.

mod bytes;
mod error;
mod options;
mod process;
mod realm;

pub use process::*;
pub use realm::*;
