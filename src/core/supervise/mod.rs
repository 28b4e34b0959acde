//! One process from its launch to its end, as its handles see it: the shared handle with its
//! lifecycle and signals (`process`), what goes into it (`input`: stdin, and its terminal when
//! it has one; `stdin`), the reading of its pipes (`reader`, `pipe`), the one task that decides
//! when it is over (`supervisor`), the runs after the first of a service (`service`), the
//! lifecycle its waiters see (`state`), every live process of this OS process (`registry`), the
//! port checks of `waitForPort` (`readiness`), the probes each run is watched with (`probe`, and
//! `probe_exec` for a command), how a process is asked to end (`shutdown`), and the memory it
//! uses now (`usage`).
//!
//! May use every other subsystem of the core but `persistent` and `snapshot`; none of them uses it.

pub mod input;
pub mod pipe;
pub mod probe;
mod probe_exec;
pub mod process;
pub mod reader;
pub mod readiness;
pub mod registry;
pub mod service;
mod shutdown;
pub mod state;
pub mod stdin;
pub mod supervisor;
mod usage;
