//! The napi layer: conversions only. JS options become core `SpawnSpec`s, core events become
//! plain objects with `Buffer`s, core errors become JS errors of their own class with their
//! stable `code` (see `error.rs`). One part is not a conversion: `loop_reader` reads a flooding
//! pipe on the event loop of the JS thread that consumes it.
//!
//! The modules use one another one way, from the bottom up (each may use those above it):
//! - `settler` (a realm's one threadsafe function), `loop_reader`, `bytes`, `value`: none of
//!   the others.
//! - `request`: the launch request, typed; uses `value`.
//! - `realm`: what the addon keeps per JS environment; uses `settler`, `loop_reader`.
//! - `error`: a core error as the typed JS error the realm's factory builds; uses `realm`.
//! - `settle`: the realm's promises; uses `realm`, `settler`, `error`.
//! - `checks`: values checked by the core's rules; uses `error`, `value`.
//! - At the top, used by no other module: `process/` (the process handle, one unit), `probe`,
//!   `snapshot`, `persistent`, `shared_output`, `diagnostics`, `runtime`. (`realm` and `checks` have functions
//!   that JS calls too.)

mod bytes;
mod checks;
mod diagnostics;
mod error;
mod loop_reader;
mod output_decoder;
mod pattern;
mod persistent;
mod probe;
mod process;
mod realm;
mod request;
mod runtime;
mod settle;
mod settler;
mod shared_output;
mod snapshot;
mod value;

pub use checks::*;
pub use diagnostics::*;
pub use pattern::*;
pub use persistent::*;
pub use probe::*;
pub use process::*;
pub use realm::*;
pub use request::*;
pub use shared_output::*;
pub use snapshot::*;
