//! How a process ended, and its lifecycle, as JS objects.

use crate::core::exit::ExitInfo;
use crate::core::supervise::state::State;
use napi_derive::napi;

/// How a process ended.
#[napi(object)]
pub struct NativeExit {
    /// Exit code of the root, or 128 + signal.
    pub code: i32,
    /// The signal that ended the root, if one did.
    pub signal: Option<i32>,
    /// The `timeout` expired before this end.
    pub timed_out: bool,
    /// A kill was asked for before the root exited.
    pub killed: bool,
}

impl From<ExitInfo> for NativeExit {
    fn from(e: ExitInfo) -> Self {
        Self { code: e.code, signal: e.signal, timed_out: e.timed_out(), killed: e.killed() }
    }
}

/// A snapshot of the lifecycle.
#[napi(object)]
pub struct NativeState {
    /// The root process has exited.
    pub root_exited: bool,
    /// The Mastra end: the root exited and its output is drained.
    pub finished: bool,
    /// The Processes API end: finished, and the process group is empty.
    pub done: bool,
    /// The outcome as of `finished` (what the Mastra face reports).
    pub finished_exit: Option<NativeExit>,
    /// The outcome as of `done` (what the Processes API reports).
    pub exit: Option<NativeExit>,
    pub ended_at_ms: Option<f64>,
    /// Fractional milliseconds from spawn to `finished`.
    pub finished_after_ms: Option<f64>,
    /// A service's restarts so far; `undefined` for a process launched without `restart`.
    pub restarts: Option<u32>,
    /// A service waiting for its next run.
    pub backoff: bool,
    /// How the last run that ended, ended (a service's previous run, while the next one runs).
    pub last_exit: Option<NativeExit>,
    /// A service whose policy asked for a restart its count no longer allowed.
    pub gave_up: bool,
    /// With a readiness probe: the current run passed it (false before, and between runs).
    pub ready: Option<bool>,
    /// With a liveness probe: false once the current run failed it (true before the first check).
    pub healthy: Option<bool>,
}

impl From<State> for NativeState {
    fn from(s: State) -> Self {
        Self {
            root_exited: s.root_exit.is_some(),
            finished: s.is_finished(),
            done: s.is_done(),
            finished_exit: s.finished.map(Into::into),
            exit: s.done.map(Into::into),
            ended_at_ms: s.ended_at_ms.map(|v| v as f64),
            finished_after_ms: s.finished_after_ms,
            restarts: s.service.then_some(s.restarts),
            backoff: s.backoff,
            last_exit: if s.ended_between_runs { s.last_exit } else { s.done.or(s.last_exit) }.map(Into::into),
            gave_up: s.gave_up,
            ready: s.ready,
            healthy: s.healthy,
        }
    }
}

/// How a process finished (the Mastra end), flat: what a Mastra wait reports, without the rest
/// of the state. Each property of a native object is a key made and stored on the JS thread, on
/// the path from one process's exit to the next launch; `NativeState` has fifteen.
#[napi(object, object_from_js = false)]
pub struct NativeFinish {
    /// Exit code of the root, or 128 + signal.
    pub code: i32,
    /// The signal that ended the root, if one did.
    pub signal: Option<i32>,
    /// The `timeout` expired before this end.
    pub timed_out: bool,
    /// Fractional milliseconds from spawn to the end.
    pub after_ms: f64,
    /// A service's restarts (absent for a process launched without `restart`).
    pub restarts: Option<u32>,
    /// A service that gave up: its policy asked for a restart beyond `maxRestarts`.
    pub gave_up: Option<bool>,
}

impl NativeFinish {
    pub(super) fn of(st: &State) -> Self {
        let e = st.finished.as_ref();
        Self {
            code: e.map_or(-1, |e| e.code),
            signal: e.and_then(|e| e.signal),
            timed_out: e.is_some_and(ExitInfo::timed_out),
            after_ms: st.finished_after_ms.unwrap_or(0.0),
            restarts: st.service.then_some(st.restarts),
            gave_up: st.service.then_some(st.gave_up),
        }
    }
}
