//! The core: everything that touches processes, in plain Rust with no napi, tested by `cargo test`
//! against real processes. The binding (`src/binding/`) only converts.
//!
//! Subsystems, from the bottom up: each may use the ones above it in this list, never one below.
//! - `error`, `value`, `exit`: the one error type, values as JS gave them, and how a process
//!   ended. Used everywhere.
//! - `terminal`: the screen of a process on a terminal.
//! - `output`: the output of one process: its bounded log, retained text and consumers.
//! - `tree`: a process tree as the OS has it: its group, its cgroup, its root, when it is empty,
//!   and the watchdog that kills it should Node die.
//! - `launch`: from a launch request to a running child.
//! - `supervise`: one process from its launch to its end, as its handles see it.
//!
//! Apart, each using only `error` and `value`, or nothing: `persistent` (what a persistent
//! sandbox's supervisor asks of the kernel) and `snapshot` (checkpoints of a working directory).

pub mod error;
pub mod exit;
pub mod value;

pub mod terminal;

pub mod output;

pub mod tree;

pub mod launch;

pub mod supervise;

pub mod persistent;
pub mod snapshot;

#[cfg(test)]
mod tests;
