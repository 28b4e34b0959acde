//! The lifecycle of one process as its waiters see it: published through a `watch` by the
//! supervisor, with the outcome frozen once per end so that no face ever sees it change.

use crate::core::exit::{ExitInfo, StopReason};

/// How the root itself exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootExit {
    /// The exit code, or 128 + signal.
    pub code: i32,
    pub signal: Option<i32>,
}

/// The lifecycle, published to every waiter through a `watch`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    pub root_exit: Option<RootExit>,
    pub stop: Option<StopReason>,
    pub outputs_done: bool,
    /// No live member is left in the root's process group.
    pub group_empty: bool,
    /// No live process is left in the tree: its cgroup when it has one, else its process group.
    pub tree_empty: bool,
    /// The outcome as of *finished*, frozen then: what the Mastra face reports.
    pub finished: Option<ExitInfo>,
    /// Milliseconds (fractional) from spawn to *finished*.
    pub finished_after_ms: Option<f64>,
    /// The outcome as of *done*, frozen then: what the Processes API reports.
    pub done: Option<ExitInfo>,
    pub ended_at_ms: Option<u64>,
    // A service (a launch with `restart`) only:
    /// It was launched with `restart`.
    pub service: bool,
    /// Restarts so far (since a run that lasted the policy's `resetAfterMs`).
    pub restarts: u32,
    /// Waiting for the next run.
    pub backoff: bool,
    /// How the last run that ended, ended.
    pub last_exit: Option<ExitInfo>,
    /// The policy asked for a restart its count no longer allowed: the service gave up.
    pub gave_up: bool,
    /// The current run's end brings the next one, unless `halt` comes first.
    pub restart_next: bool,
    /// A kill, a timeout or a terminating signal: no run follows.
    pub halt: bool,
    /// Someone asked for a new run now (`restart_run`): the current run's end brings the next at
    /// once, whatever the policy says of that end and however many restarts it allows.
    pub restart_asked: bool,
    /// A signal ended the service between two runs: its end is that signal's, and `last_exit`
    /// stays the last run's own.
    pub ended_between_runs: bool,
    // A process with probes only (`None` without the probe):
    /// Whether the current run passed its readiness probe (false again once it failed it
    /// `failureThreshold` times in a row, and at each new run).
    pub ready: Option<bool>,
    /// False once the current run failed its liveness probe `failureThreshold` times in a row
    /// (the run is being ended); true before the first probe.
    pub healthy: Option<bool>,
    /// The current run was ended by its liveness probe: a failure for the restart policy, whatever
    /// its exit code.
    pub unhealthy_end: bool,
    /// A SIGKILL to the tree is due then, unless it is gone: the end of a shutdown's wait, or of
    /// the grace after a liveness failure's signal. The supervisor sends it.
    pub kill_after: Option<std::time::Instant>,
}

impl State {
    /// The outcome if the process ended now.
    pub fn outcome(&self) -> Option<ExitInfo> {
        self.root_exit.map(|r| ExitInfo { code: r.code, signal: r.signal, stop: self.stop })
    }

    /// The current run's end is not the end: the next run follows it.
    pub fn restarting(&self) -> bool {
        self.restart_next && !self.halt
    }

    pub fn is_finished(&self) -> bool {
        self.finished.is_some()
    }

    pub fn is_done(&self) -> bool {
        self.done.is_some()
    }
}
