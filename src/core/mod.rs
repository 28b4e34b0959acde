//! The core: everything that touches processes, in plain Rust with no napi, tested by `cargo test`
//! against real processes. The binding (`src/binding/`) only converts.

pub mod cgroup;
pub mod command;
pub mod cursor;
pub mod decoder;
pub mod error;
pub mod group;
pub mod launcher;
pub mod liveness;
pub mod loan;
pub mod lockfile;
pub mod osc;
pub mod output;
pub mod output_log;
pub mod peer;
pub mod pipe;
pub mod process;
pub mod readiness;
pub mod reaper;
pub mod registry;
pub mod request;
pub mod retained;
pub mod screen;
pub mod snapshot;
pub mod sockbuf;
pub mod spawn;
pub mod state;
pub mod stdin;
pub mod supervisor;
pub mod value;
pub mod watchdog;

#[cfg(test)]
mod tests;
