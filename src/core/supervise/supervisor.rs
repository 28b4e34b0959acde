//! The supervisor: one task per process, one state machine. It owns the root's exit, the group's
//! liveness and the deadline, and decides when the process is over.
//!
//! Two ends, because the two faces ask different questions:
//! - *finished* (Mastra): the root exited and both pipes were drained. Pipes held by a grandchild
//!   no longer count once the process group is empty, so a detached grandchild cannot hang
//!   `wait()`.
//! - *done* (the Processes API): finished, and no live process is left in the tree: its cgroup
//!   when it has one (descendants that left the group included), else its process group. The
//!   terminal log event is written then, after all output.
//!
//! The deadline bounds the whole group, not only the root: a root that exits at once and leaves
//! `sleep 60 &` behind is still stopped when its `timeout` expires, SIGTERM to the group (and to
//! the root, should it have left the group), then SIGKILL after the grace period.

use crate::core::error::{CoreError, CoreResult};
use crate::core::exit::StopReason;
use crate::core::launch::command::{Containment, SpawnSpec};
use crate::core::output::log::{now_ms, EventBody, Stream};
use crate::core::supervise::probe;
use crate::core::supervise::process::Process;
use crate::core::supervise::service;
use crate::core::supervise::state::RootExit;
use crate::core::tree::cgroup::{self, Cgroup};
use crate::core::tree::cgroup_watch;
use crate::core::tree::group::ProcessGroup;
use crate::core::{launch::launcher, launch::spawn, supervise::registry, tree::liveness, tree::reaper, tree::watchdog};
use std::future::Future;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Spawns `spec` and starts its supervisor, for the core's tests. Must be called inside a tokio
/// runtime.
#[cfg(test)]
pub fn spawn(spec: SpawnSpec, id: String, owner: u64) -> CoreResult<Arc<Process>> {
    spawn_with_pump(spec, id, owner, None, false)
}

/// Like `spawn`, with a listener pump or a reader's hold from the first byte (see `launch`).
#[cfg(test)]
pub fn spawn_with_pump(
    spec: SpawnSpec,
    id: String,
    owner: u64,
    pump: Option<Box<dyn Fn() + Send + Sync>>,
    hold: bool,
) -> CoreResult<Arc<Process>> {
    let (proc, run) = launch(spec, id, owner, pump, hold)?;
    tokio::spawn(run);
    Ok(proc)
}

/// The rest of a launched process's life: reading its output and supervising it, to its end.
/// One future, so one task per process: every task spawned makes tokio wake a thread to look
/// for work, which costs a hand-off per task on the launch path.
pub type Run = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Starts `spec`'s root in a cgroup of its own or in its own process group, as its containment
/// says: the one way a first run and a service's next run are started. A cgroup made for a launch
/// that failed is released. A contained tree needs no watchdog entry of its own (the watchdog
/// kills the parent cgroup, and with it every tree, should Node die); a process group gets one.
pub(super) fn launch_contained(
    spec: &SpawnSpec,
) -> CoreResult<(spawn::Launched, Option<Cgroup>, Option<watchdog::Entry>)> {
    let cgroup = match spec.containment {
        Containment::Cgroup => Some(contain(spec)?),
        Containment::ProcessGroup => None,
    };
    let launched = match spawn::launch(spec, spawn::Placement { cgroup: cgroup.as_ref() }) {
        Ok(l) => l,
        Err(e) => {
            if let Some(cg) = cgroup {
                cg.release(false);
            }
            return Err(e);
        }
    };
    let listed = cgroup.is_none().then(|| watchdog::register(launched.pid as i32));
    Ok((launched, cgroup, listed))
}

/// Launches `spec` and returns the process with the future that must run for it to be read and
/// supervised. `pump`, the listener pump's wake-up, is installed before the readers start, so the
/// pump holds the producer back from the first byte; `hold` holds it for a byte-stream reader at
/// the start of the output, from the first byte, until `set_reader_position` moves or releases
/// it. The process is returned with its future: the caller spawns it on the runtime after it has
/// reported the launch, on the runtime whose reactor is to watch the process's descriptors.
pub fn launch(
    spec: SpawnSpec,
    id: String,
    owner: u64,
    pump: Option<Box<dyn Fn() + Send + Sync>>,
    hold: bool,
) -> CoreResult<(Arc<Process>, Run)> {
    let (mut launched, cgroup, listed) = launch_contained(&spec)?;
    let proc = Arc::new(Process::new(&spec, id, owner, &mut launched, cgroup));
    registry::insert(&proc.id, Arc::downgrade(&proc) as std::sync::Weak<dyn registry::Member>);
    if let Some(wake) = pump {
        proc.output.set_pump(wake, true);
    }
    if hold {
        proc.output.set_reader_position(Some(0));
    }
    let (stdout, stderr) = (launched.stdout, launched.stderr);
    if stderr.is_none() {
        // On a terminal everything arrives as stdout; stderr is complete, and empty, from the start.
        proc.output.end_stream(Stream::Stderr);
    }
    // The readers outlive the supervision when a process outside the group still holds a pipe
    // (the process is over once its group is empty); the task ends when all three have.
    let reads = reads(proc.clone(), stdout, stderr);
    let timeout = spec.timeout_ms.map(Duration::from_millis);
    let grace = Duration::from_millis(spec.grace_ms);
    let supervision = supervise(proc.clone(), launched.pidfd, timeout, grace, listed);
    let run: Run = Box::pin(async move {
        tokio::join!(reads, supervision);
    });
    Ok((proc, run))
}

/// Reads a run's pipes into the process's output to their end.
pub(super) async fn reads(p: Arc<Process>, stdout: OwnedFd, stderr: Option<OwnedFd>) {
    let err = async {
        if let Some(fd) = stderr {
            p.read_stream(fd, Stream::Stderr).await;
        }
    };
    tokio::join!(p.read_stream(stdout, Stream::Stdout), err);
    p.update(|s| s.outputs_done = true);
}

/// An empty cgroup for a launch to join.
fn contain(spec: &SpawnSpec) -> CoreResult<Cgroup> {
    let failed =
        |reason: String, errno: Option<i32>| CoreError::SpawnFailed { program: spec.argv[0].clone(), reason, errno };
    let parent = cgroup::parent().map_err(|why| failed(format!("no cgroup to contain it: {why}"), None))?;
    Cgroup::acquire(parent).map_err(|e| failed(format!("cannot create its cgroup: {e}"), e.raw_os_error()))
}

fn root_exit(status: std::io::Result<std::process::ExitStatus>) -> RootExit {
    match status.map(|st| (st.code(), st.signal())) {
        Ok((Some(code), _)) => RootExit { code, signal: None },
        Ok((None, Some(sig))) => RootExit { code: 128 + sig, signal: Some(sig) },
        _ => RootExit { code: 1, signal: None },
    }
}

type Waiting = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs the process to its end. Spawned once per process, right after the launch. A service
/// (a launch with `restart`) is run again here, as its policy says, until a run's end is its end.
async fn supervise(
    p: Arc<Process>,
    pidfd: Option<Arc<OwnedFd>>,
    timeout: Option<Duration>,
    grace: Duration,
    listed: Option<watchdog::Entry>,
) {
    // The deadline bounds the service, not each run: a timeout ends it for good.
    let mut deadline = timeout.map(|t| Instant::now() + t);
    let mut kill_at: Option<Instant> = None;
    let mut changes = p.subscribe_state();
    let (mut pidfd, mut listed) = (pidfd, listed);
    loop {
        // Stopped when this run is over (dropped), whatever ended it.
        let probing = probe::start(&p);
        let over = run(&p, pidfd.take(), &mut changes, &mut deadline, &mut kill_at, grace).await;
        drop(probing);
        // The whole tree of the run is gone: the next one finds its port, its files, free.
        p.release_cgroup();
        if let Some(entry) = listed.take() {
            watchdog::unregister(entry);
        }
        if over || !service::backoff(&p, &mut changes, &mut deadline).await {
            break;
        }
        match service::relaunch(&p) {
            // Supervised to its end whatever happened meanwhile: a run halted as it was launched
            // was killed, and its root is reaped in `run`.
            Ok(Some((fd, entry))) => (pidfd, listed) = (fd, entry),
            Ok(None) => break,
            Err(e) => {
                service::failed(&p, &e);
                break;
            }
        }
    }
    let st = p.state();
    // A service ended between two runs ends as the signal that ended it, also when a run was
    // launched meanwhile and killed at once: that run's own end is not the service's.
    let outcome = if st.ended_between_runs { st.finished.or(st.outcome()) } else { st.outcome() };
    let outcome = outcome.unwrap_or_default();
    p.output.close(EventBody::Exited(outcome));
    // Out of the live count before `done` is seen: a waiter settled by that update may look at
    // the count at once.
    let others = registry::remove(&p.id, launcher::busy_at());
    p.update(|s| {
        s.done = Some(outcome);
        s.ended_at_ms = Some(now_ms());
        s.backoff = false;
    });
    // What waited for the end is settled: a program that launches one process after another is
    // about to launch the next.
    launcher::stand_by(others);
}

/// Supervises one run to the end of its tree. True when that is the end of the process; false
/// when the next run follows (the policy asked for it and nothing halted the service).
async fn run(
    p: &Arc<Process>,
    pidfd: Option<Arc<OwnedFd>>,
    changes: &mut tokio::sync::watch::Receiver<crate::core::supervise::state::State>,
    deadline: &mut Option<Instant>,
    kill_at: &mut Option<Instant>,
    grace: Duration,
) -> bool {
    let pid = p.pid();
    let group = ProcessGroup::new(pid as i32);
    let exit = reaper::wait(pid, pidfd);
    tokio::pin!(exit);
    let mut reaped = false;
    // The process group's emptiness ends the wait for the pipes (whatever holds them outside the
    // group cannot hang the Mastra face's `wait()`); the tree's ends the process.
    let mut group_left: Option<Waiting> = None;
    let mut tree_left: Option<Waiting> = None;
    // Without a cgroup to watch, the tree is the process group.
    let mut group_is_tree = true;
    // The SIGKILL a shutdown or a liveness failure asked for (`kill_after`), once seen, and when
    // it is due; this run's own, so a next run never inherits it.
    let mut asked: Option<std::time::Instant> = None;
    let mut escalate: Option<Instant> = None;

    loop {
        // Marks the state seen, so that `changed()` below waits for the next change.
        let st = changes.borrow_and_update().clone();
        if st.tree_empty && (st.is_finished() || (st.restarting() && st.outputs_done)) {
            return st.is_finished();
        }
        if st.kill_after.is_some() && st.kill_after != asked {
            asked = st.kill_after;
            escalate = asked.map(Instant::from_std);
        }
        tokio::select! {
            status = &mut exit, if !reaped => {
                reaped = true;
                p.root_reaped(root_exit(status));
                // Members outside the root may live on; from now on the tree is the process: its
                // cgroup when it has one (escapees included), else its process group. Most trees
                // end with their root, so look once now, before setting up any wait: the same
                // first look each wait makes, without a turn of this loop per answer.
                let dir = p.cgroup_dir();
                let tree = dir.clone().zip(p.cgroup_events());
                // Every member of the group was born in the tree's cgroup: an empty cgroup
                // answers for the group too.
                let over = match &tree {
                    Some((dir, events)) => !cgroup::populated(dir, events),
                    None => !group.exists(),
                };
                if over {
                    p.tree_ended();
                } else {
                    // A service's run is its root's life: what the root left behind goes with
                    // it, rather than be waited for, so that the next run finds its port and its
                    // files free, and a service that ended leaves nothing.
                    if p.service.is_some() {
                        p.send(libc::SIGKILL);
                    }
                    group_left = Some(Box::pin(liveness::wait_empty(group, dir)));
                    if let Some((dir, events)) = tree {
                        group_is_tree = false;
                        tree_left = Some(Box::pin(async move { cgroup_watch::wait_empty(&dir, &events).await }));
                    }
                }
            }
            _ = async { group_left.as_mut().expect("guarded").await }, if group_left.is_some() => {
                group_left = None;
                p.group_emptied();
                if group_is_tree {
                    p.tree_emptied();
                }
            }
            _ = async { tree_left.as_mut().expect("guarded").await }, if tree_left.is_some() => {
                tree_left = None;
                p.tree_emptied();
            }
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                *deadline = None;
                p.stop(StopReason::Timeout, libc::SIGTERM);
                *kill_at = Some(Instant::now() + grace);
            }
            _ = tokio::time::sleep_until(kill_at.unwrap_or_else(Instant::now)), if kill_at.is_some() => {
                *kill_at = None;
                p.send(libc::SIGKILL);
            }
            _ = tokio::time::sleep_until(escalate.unwrap_or_else(Instant::now)), if escalate.is_some() => {
                escalate = None;
                p.send(libc::SIGKILL);
            }
            _ = changes.changed() => {}
        }
    }
}
