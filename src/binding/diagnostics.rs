//! Counters for tests and benchmarks: where the reads of a flood and the launches were made.

use super::loop_reader;
use crate::core::launch::launcher;
use napi_derive::napi;

/// How many reads this JS thread's event loop has made of pipes lent to it: a stream that
/// floods a listener is read there (a diagnostic, for tests and benchmarks).
#[napi]
pub fn loop_read_count() -> f64 {
    loop_reader::read_count() as f64
}

/// How many launches the launcher thread has made, in this OS process: a launch right after an
/// end is made there when it stands by (a diagnostic, for tests and benchmarks).
#[napi]
pub fn launcher_launch_count() -> f64 {
    launcher::launches() as f64
}
