//! A service: a process launched with `restart`, run again by its supervisor when a run ends as
//! its policy says. Between two runs the whole tree of the first is gone (the supervisor waits
//! for its cgroup, or its process group, to be empty); the next run is the same launch (command,
//! cwd, env, options) into the same process: one id, one log, one lifecycle for every handle.
//! Here: the wait between two runs and the launch of the next.

use crate::core::error::CoreError;
use crate::core::exit::StopReason;
use crate::core::launch::restart::RestartPolicy;
use crate::core::launch::spawn::Launched;
use crate::core::output::log::{EventBody, Stream};
use crate::core::supervise::process::{Process, SignalIntent};
use crate::core::supervise::state::State;
use crate::core::supervise::stdin::Stdin;
use crate::core::supervise::supervisor::{launch_contained, reads};
use crate::core::tree::cgroup::Cgroup;
use crate::core::tree::watchdog;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Logs the restart that follows the run that has just ended, and waits out its backoff. False
/// when the service was halted meanwhile (a kill, a terminating signal, its timeout): then the
/// last run's end is the service's, and no run follows.
pub(super) async fn backoff(
    p: &Arc<Process>,
    changes: &mut watch::Receiver<State>,
    deadline: &mut Option<Instant>,
) -> bool {
    let Some((_, policy)) = &p.service else { return false };
    let st = p.state();
    let exit = st.outcome().unwrap_or_default();
    let attempt = st.restarts + 1;
    // A halt that came as the run ended (after the last look of its supervision) ends it here,
    // before a restart is announced that would never come.
    let mut announced = false;
    p.update(|s| {
        if !s.halt {
            s.restarts = attempt;
            s.backoff = true;
            s.last_exit = Some(exit);
            announced = true;
        }
    });
    if !announced {
        return false;
    }
    p.output.note(EventBody::Restart { attempt, exit });
    // A run ended because someone asked for a new one: it is wanted now, not after a backoff.
    let gap = if st.restart_asked { Duration::ZERO } else { policy.gap(attempt) };
    let until = Instant::now() + gap;
    loop {
        let now = changes.borrow_and_update().clone();
        if now.halt {
            return false;
        }
        if now.restart_asked {
            return true;
        }
        tokio::select! {
            _ = tokio::time::sleep_until(until) => return true,
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                *deadline = None;
                // Nothing runs to be signalled: the timeout is recorded, and ends the service.
                p.update(|s| {
                    s.stop.get_or_insert(StopReason::Timeout);
                    s.halt = true;
                });
            }
            _ = changes.changed() => {}
        }
    }
}

/// The root's pidfd and watchdog entry of a run just launched, for the supervisor.
pub(super) type NextRun = (Option<Arc<OwnedFd>>, Option<watchdog::Entry>);

/// Launches a service's next run into `p` and starts reading it. `None` when the service was
/// halted before the launch: no run is started.
///
/// A run launched is always handed back, even one halted while it was being launched (it is
/// killed at once here): its root must still be reaped by the supervisor, or it stays a zombie.
pub(super) fn relaunch(p: &Arc<Process>) -> Result<Option<NextRun>, CoreError> {
    let Some((spec, _)) = &p.service else { unreachable!("only a service is launched again") };
    if p.state().halt {
        return Ok(None);
    }
    let (mut launched, cgroup, listed) = launch_contained(spec)?;
    let halted = p.begin_run(&mut launched, cgroup);
    let (stdout, stderr) = (launched.stdout, launched.stderr);
    if stderr.is_none() {
        p.output.end_stream(Stream::Stderr);
    }
    tokio::spawn(reads(p.clone(), stdout, stderr));
    if halted {
        // Halted while this run was being launched: it ends at once, as a killed run.
        p.signal(libc::SIGKILL, SignalIntent::Kill);
    }
    Ok(Some((launched.pidfd, listed)))
}

/// The next run could not be launched (its program or working directory is gone): the service
/// ends as the last run ended, and its stderr says why no run followed.
pub(super) fn failed(p: &Process, e: &CoreError) {
    let line = format!("procvisor: restart {} could not be launched: {e}\n", p.state().restarts);
    p.output.push(Stream::Stderr, line.as_bytes());
    p.update(|s| s.halt = true);
}

/// Whether the run whose root has just exited brings the next one. Decided once, as the root
/// exits: a kill or a timeout from then on still ends the service (`halt`).
pub(super) fn decide(policy: &RestartPolicy, s: &mut State, lasted: Duration) {
    if lasted.as_secs_f64() * 1000.0 >= policy.reset_after_ms {
        s.restarts = 0;
    }
    let asked = s.restart_asked;
    let failed = asked || s.unhealthy_end || s.outcome().is_some_and(|o| policy.wants(&o));
    let wanted = s.stop.is_none() && !s.halt && failed;
    // `maxRestarts` bounds what the policy does on its own, not a restart someone asked for.
    s.restart_next = wanted && (asked || s.restarts < policy.max_restarts);
    s.gave_up = wanted && !s.restart_next;
}

/// Whether a signal sent through a handle ends a service for good: a kill, or any signal whose
/// default action ends a process. Those that only stop, continue or inform (SIGCONT, SIGWINCH,
/// …) leave it running, as they leave a process.
pub(super) fn ends_service(signal: i32, intent: SignalIntent) -> bool {
    intent == SignalIntent::Kill
        || ![
            libc::SIGCHLD,
            libc::SIGCONT,
            libc::SIGSTOP,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
            libc::SIGURG,
            libc::SIGWINCH,
        ]
        .contains(&signal)
}

impl Process {
    /// Ends the current run of a service as a liveness failure ends it (its `shutdown` signal,
    /// else SIGTERM; SIGKILL after its timeout, else the grace period) without ending the
    /// service: the next run follows at once and counts as a restart. During a backoff it cuts
    /// the wait short. A kill would end the service for good; this is the way to a new run.
    pub fn restart_run(&self) -> Result<(), CoreError> {
        let Some((spec, _)) = &self.service else {
            return Err(CoreError::InvalidOption {
                name: "restart".into(),
                reason: format!("process {} was started without a restart policy, so it has no next run", self.pid()),
            });
        };
        let (mut ended, mut running) = (None, false);
        self.update(|s| {
            if let Some(end) = s.done.or(s.finished) {
                ended = Some(end.code);
                return;
            }
            s.restart_asked = true;
            running = !s.backoff && s.root_exit.is_none();
        });
        if let Some(code) = ended {
            return Err(CoreError::AlreadyExited { pid: self.pid(), code });
        }
        if running {
            let (signal, wait) = match self.shutdown {
                Some(sd) => (sd.signal, Duration::from_millis(sd.timeout_ms)),
                None => (libc::SIGTERM, Duration::from_millis(spec.grace_ms)),
            };
            self.kill_after(wait);
            self.send(signal);
        }
        Ok(())
    }

    /// Waits until the run a `restart_run` asked for has started, or the service has ended.
    pub async fn wait_next_run(&self) -> State {
        let mut rx = self.subscribe_state();
        let _ = rx.wait_for(|s| s.done.is_some() || (!s.restart_asked && !s.backoff && s.root_exit.is_none())).await;
        self.state()
    }

    /// A service's next run takes the place of the last one: its root, stdin, terminal and
    /// cgroup, and a lifecycle that starts again (the count, the policy's verdicts and a `halt`
    /// asked for meanwhile stay). Returns whether the service was halted meanwhile, so that the
    /// caller ends the run it has just launched.
    pub(crate) fn begin_run(&self, root: &mut Launched, cgroup: Option<Cgroup>) -> bool {
        let (pid, pidfd, stdin, terminal) = (root.pid, root.pidfd.clone(), root.stdin.take(), root.terminal.take());
        *self.run_started.lock().unwrap_or_else(|e| e.into_inner()) = std::time::Instant::now();
        // Before this run's readers start: its output is what follows.
        self.run_log_start.store(self.output.last_seq(), Ordering::Relaxed);
        self.pid.store(pid, Ordering::Relaxed);
        *self.root.lock().unwrap_or_else(|e| e.into_inner()) = pidfd;
        *self.stdin.lock().unwrap_or_else(|e| e.into_inner()) =
            Arc::new(Stdin::start(pid, self.stdin_mode, stdin, terminal.is_some()));
        *self.terminal.lock().unwrap_or_else(|e| e.into_inner()) = terminal;
        *self.cgroup_dir.lock().unwrap_or_else(|e| e.into_inner()) = cgroup.as_ref().map(|cg| cg.dir.clone());
        *self.cgroup.lock().unwrap_or_else(|e| e.into_inner()) = cgroup;
        self.drain.send_replace(false);
        let mut halted = false;
        self.update(|s| {
            s.root_exit = None;
            s.stop = None;
            s.outputs_done = false;
            s.group_empty = false;
            s.tree_empty = false;
            s.restart_next = false;
            s.backoff = false;
            // Each run proves itself again: not ready until its readiness probe passes.
            s.ready = s.ready.map(|_| false);
            s.healthy = s.healthy.map(|_| true);
            s.unhealthy_end = false;
            s.restart_asked = false;
            s.kill_after = None;
            halted = s.halt;
        });
        halted
    }
}
