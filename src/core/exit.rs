//! How a process ended: what the log's terminal event records and what both faces report. Its
//! own module at the bottom of the core, because the output (the log) and the supervision (the
//! lifecycle) both speak of it and neither may use the other.

/// Why procvisor stopped the process, if it did. The first reason wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The `timeout` expired before the end.
    Timeout,
    /// A kill was asked for through procvisor before the root exited.
    Kill,
}

/// How a process ended, as seen on its root (the outcome of the group is the root's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// The exit code, or 128 + signal when the root died by a signal.
    pub code: i32,
    pub signal: Option<i32>,
    /// Why procvisor stopped it, if it did.
    pub stop: Option<StopReason>,
}

impl ExitInfo {
    /// The `timeout` expired before this end.
    pub fn timed_out(&self) -> bool {
        self.stop == Some(StopReason::Timeout)
    }

    /// A kill was asked for through procvisor before the root exited.
    pub fn killed(&self) -> bool {
        self.stop == Some(StopReason::Kill)
    }
}
