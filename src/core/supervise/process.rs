//! One supervised child, as its handles see it: its state, its output (`output`), its stdin
//! (`stdin`), and the signals that reach it. It is launched and run to its end by `supervisor`;
//! its pipes are moved into its output by the reader tasks the supervisor starts (`reader`).
//!
//! Handles share an `Arc<Process>`; the lifecycle is published through a `watch`, so any number of
//! waiters can wait and no lock is held across an `.await`.

use crate::core::exit::StopReason;
use crate::core::launch::command::{SpawnSpec, StdinMode};
use crate::core::launch::probes::Shutdown;
use crate::core::launch::restart::RestartPolicy;
use crate::core::launch::spawn::Launched;
use crate::core::output::log::{now_ms, LogRead, Stream};
use crate::core::output::process_output::Output;
use crate::core::supervise::probe::ProbePlan;
use crate::core::supervise::registry::Member;
use crate::core::supervise::state::{RootExit, State};
use crate::core::supervise::stdin::Stdin;
use crate::core::tree::cgroup::Cgroup;
use crate::core::tree::group::ProcessGroup;
use crate::core::tree::reaper;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

pub struct Process {
    pub id: String,
    /// The root of the current run (a service's changes at each restart).
    pub(super) pid: AtomicU32,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub started_at_ms: u64,
    started: std::time::Instant,
    pub owner: u64,
    pub stdin_mode: StdinMode,
    /// What a service runs again, and when (`restart`); `None` for a process that runs once.
    pub(crate) service: Option<(SpawnSpec, RestartPolicy)>,
    /// The probes each run is watched with; `None` (most processes) costs nothing.
    pub(crate) probes: Option<Arc<ProbePlan>>,
    /// How a shutdown ends it (`shutdown`); `None`: SIGKILL at once.
    pub(crate) shutdown: Option<Shutdown>,
    /// The log's last event before the current run's output: a log probe reads from there.
    pub(super) run_log_start: AtomicU64,
    /// When the current run started, for the policy's `resetAfterMs`.
    pub(super) run_started: Mutex<std::time::Instant>,
    /// The root's pidfd until it is reaped: the root is signalled through it when it has left its
    /// group, and it can never name another process.
    pub(super) root: Mutex<Option<Arc<OwnedFd>>>,
    pub(crate) output: Output,
    pub(super) state: watch::Sender<State>,
    pub(super) stdin: Mutex<Arc<Stdin>>,
    /// Set once the group is empty: readers take what is buffered and stop waiting for writers
    /// outside the group.
    pub(super) drain: watch::Sender<bool>,
    /// The cgroup that contains the whole tree, when the manager contains by cgroup, until it is
    /// given back: a signal sent after that must not reach the cgroup's next tree.
    pub(super) cgroup: Mutex<Option<Cgroup>>,
    pub(super) cgroup_dir: Mutex<Option<PathBuf>>,
    /// CPU time and memory peak of the tree, recorded when its cgroup is removed.
    usage: Mutex<Option<(Option<f64>, Option<f64>)>>,
    /// The master of its terminal, for a process on one, until the root is reaped.
    pub(super) terminal: Mutex<Option<OwnedFd>>,
    pub(super) has_terminal: bool,
    /// Callbacks waiting for a state (`when`), run by the update that reaches it.
    waiters: Mutex<Vec<Waiter>>,
}

/// What a signal sent through a handle means for the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalIntent {
    /// A signal like any other: the outcome says only how the root exited.
    Plain,
    /// A kill: the outcome is `killed` when the root has not exited yet.
    Kill,
}

/// A callback waiting for the state to satisfy its predicate.
type Waiter = (fn(&State) -> bool, Box<dyn FnOnce(State) + Send>);

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process").field("id", &self.id).field("pid", &self.pid()).finish()
    }
}

impl Process {
    /// Takes the stdin and the terminal out of `root`; its pipes of output stay for the readers.
    pub(crate) fn new(spec: &SpawnSpec, id: String, owner: u64, root: &mut Launched, cgroup: Option<Cgroup>) -> Self {
        let (pid, pidfd, stdin, terminal) = (root.pid, root.pidfd.clone(), root.stdin.take(), root.terminal.take());
        let output = Output::new(
            spec.log_max_bytes,
            spec.log_max_events,
            spec.retain_bytes,
            spec.pty.as_ref().filter(|_| spec.screen).map(|p| (p.cols, p.rows)),
        )
        .with_disk(spec.log_files.as_ref(), &id);
        Process {
            id,
            pid: AtomicU32::new(pid),
            argv: spec.argv.clone(),
            cwd: spec.cwd.clone(),
            started_at_ms: now_ms(),
            started: std::time::Instant::now(),
            owner,
            stdin_mode: spec.stdin,
            service: spec.restart.map(|policy| (spec.clone(), policy)),
            probes: spec.probes.any().then(|| Arc::new(ProbePlan::of(spec))),
            shutdown: spec.shutdown,
            run_log_start: AtomicU64::new(0),
            run_started: Mutex::new(std::time::Instant::now()),
            root: Mutex::new(pidfd),
            output,
            state: watch::channel(State {
                service: spec.restart.is_some(),
                ready: spec.probes.readiness.as_ref().map(|_| false),
                healthy: spec.probes.liveness.as_ref().map(|_| true),
                ..State::default()
            })
            .0,
            stdin: Mutex::new(Arc::new(Stdin::start(pid, spec.stdin, stdin, terminal.is_some()))),
            drain: watch::channel(false).0,
            cgroup_dir: Mutex::new(cgroup.as_ref().map(|cg| cg.dir.clone())),
            cgroup: Mutex::new(cgroup),
            usage: Mutex::new(None),
            has_terminal: terminal.is_some(),
            terminal: Mutex::new(terminal),
            waiters: Mutex::new(Vec::new()),
        }
    }
}

impl Member for Process {
    fn owner(&self) -> u64 {
        self.owner
    }

    fn kill(&self) -> bool {
        self.signal(libc::SIGKILL, SignalIntent::Kill)
    }

    fn retire(&self) -> bool {
        let reached = self.kill();
        self.output.release_consumers();
        reached
    }
}

impl Process {
    /// Whether it runs on a pseudo-terminal (the `pty` option).
    pub fn on_terminal(&self) -> bool {
        self.has_terminal
    }

    /// The root's pid: of the current run, for a service.
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    fn group(&self) -> ProcessGroup {
        ProcessGroup::new(self.pid() as i32)
    }

    /// The cgroup of the current run, while it has one.
    pub(crate) fn cgroup_dir(&self) -> Option<PathBuf> {
        self.cgroup_dir.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut State)) {
        let elapsed = self.started.elapsed().as_secs_f64() * 1000.0;
        self.state.send_modify(|s| {
            f(s);
            // A run that the next one follows is not the end of a service.
            if s.finished.is_none() && s.root_exit.is_some() && s.outputs_done && !s.restarting() {
                s.finished = s.outcome();
                s.finished_after_ms = Some(elapsed);
            }
        });
        // After the state changed, under the waiters' lock: a `when` that looked before the
        // change has pushed its waiter by now, one that looks after sees the change itself.
        let mut waiters = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        if waiters.is_empty() {
            return;
        }
        let st = self.state.borrow().clone();
        let (ready, waiting): (Vec<Waiter>, Vec<Waiter>) = waiters.drain(..).partition(|(pred, _)| pred(&st));
        *waiters = waiting;
        drop(waiters);
        for (_, f) in ready {
            f(st.clone());
        }
    }

    /// Calls `f` with the state once `pred` holds: at once if it holds now, else from the update
    /// that makes it hold. Unlike `wait_state`, nothing has to be polled or spawned meanwhile, so
    /// a caller on another thread (the JS thread) is not handed to a runtime thread and back.
    pub fn when(&self, pred: fn(&State) -> bool, f: Box<dyn FnOnce(State) + Send>) {
        let mut waiters = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        let st = self.state.borrow().clone();
        if pred(&st) {
            drop(waiters);
            f(st);
        } else {
            waiters.push((pred, f));
        }
    }

    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }

    pub(crate) fn subscribe_state(&self) -> watch::Receiver<State> {
        self.state.subscribe()
    }

    // ---- the supervisor's transitions --------------------------------------------------------

    pub(crate) fn root_reaped(&self, exit: RootExit) {
        self.root.lock().unwrap_or_else(|e| e.into_inner()).take();
        let lasted = self.run_started.lock().unwrap_or_else(|e| e.into_inner()).elapsed();
        self.update(|s| {
            s.root_exit = Some(exit);
            // A run that ended serves nothing.
            s.ready = s.ready.map(|_| false);
            if let Some((_, policy)) = &self.service {
                super::service::decide(policy, s, lasted);
            }
        });
        self.stdin().exited();
        self.terminal.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    pub(crate) fn group_emptied(&self) {
        self.update(|s| s.group_empty = true);
        // Whatever still holds the pipes is not in the group: take what is buffered, stop.
        self.drain.send_replace(true);
    }

    /// The group and the whole tree found empty at once (most often, as the root is reaped).
    pub(crate) fn tree_ended(&self) {
        self.update(|s| {
            s.group_empty = true;
            s.tree_empty = true;
        });
        self.drain.send_replace(true);
    }

    pub(crate) fn tree_emptied(&self) {
        self.update(|s| s.tree_empty = true);
    }

    /// Records why procvisor stops the process (the first reason wins) and sends `signal`.
    pub(crate) fn stop(&self, reason: StopReason, signal: i32) -> bool {
        self.update(|s| {
            if s.stop.is_none() && s.done.is_none() && (reason == StopReason::Timeout || s.root_exit.is_none()) {
                s.stop = Some(reason);
            }
            s.halt = true;
        });
        self.send(signal)
    }

    /// `signal` to the group, and to the root itself should it have left the group. True when it
    /// reached some process.
    pub(crate) fn send(&self, signal: i32) -> bool {
        // Between a service's runs its last pid names nothing of ours any more.
        if self.state.borrow().backoff {
            return false;
        }
        let pgid = self.group();
        let group = pgid.signal(signal);
        let root = self.root.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let root = match root {
            // The root is still unreaped, so its pid cannot have been reused: its group is its own.
            // SAFETY: getpgid is a plain query.
            Some(fd) if unsafe { libc::getpgid(pgid.pgid as libc::pid_t) } != pgid.pgid => {
                reaper::pidfd_signal(&fd, signal)
            }
            _ => false,
        };
        // On a terminal, a job-control shell puts its jobs in process groups of their own; they
        // are still of the session the root leads.
        let session = self.has_terminal && crate::core::tree::group::signal_session(pgid.pgid, signal);
        // Once each: a process that counts its signals, or takes a second SIGTERM as "force
        // quit", must not get the one signal twice.
        let reached = |pid: libc::pid_t| {
            // SAFETY: getpgid and getsid are plain queries.
            let (pgid_of, sid_of) = unsafe { (libc::getpgid(pid), libc::getsid(pid)) };
            pgid_of == pgid.pgid || (root && pid == pgid.pgid) || (self.has_terminal && sid_of == pgid.pgid)
        };
        let tree = match self.cgroup.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(cg) if signal == libc::SIGKILL => cg.kill(),
            Some(cg) => cg.signal(signal, reached),
            None => false,
        };
        group || root || session || tree
    }

    /// The `cgroup.events` of its cgroup, open, while it has one (see `Cgroup::events`). Not
    /// kept by the process itself: an exited process that is kept holds no descriptor.
    pub(crate) fn cgroup_events(&self) -> Option<Arc<OwnedFd>> {
        self.cgroup.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(Cgroup::events)
    }

    /// Records the tree's CPU time and memory peak, and gives its cgroup back, seen empty.
    pub(crate) fn release_cgroup(&self) {
        // The cgroup's lock is held until the figures are recorded, so that a reader never finds
        // neither the cgroup nor its final figures.
        let mut slot = self.cgroup.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cg) = slot.take() {
            *self.usage.lock().unwrap_or_else(|e| e.into_inner()) = Some(cg.release(true));
        }
    }

    /// The tree's CPU time and memory peak: live from its cgroup, or as recorded at its end.
    fn usage(&self) -> (Option<f64>, Option<f64>) {
        let slot = self.cgroup.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some(cg) => (cg.cpu_time_ms(), cg.memory_peak_bytes()),
            None => self.usage.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or((None, None)),
        }
    }

    /// CPU time of the whole tree in milliseconds, when it is contained in a cgroup (the final
    /// figure once it is over).
    pub fn cpu_time_ms(&self) -> Option<f64> {
        self.usage().0
    }

    /// The tree's memory peak in bytes, where the memory controller is enabled for its cgroup.
    pub fn memory_peak_bytes(&self) -> Option<f64> {
        self.usage().1
    }

    pub fn retained_text(&self, stream: Stream) -> String {
        self.output.retained_text(stream)
    }

    pub fn retained_dropped(&self, stream: Stream) -> u64 {
        self.output.retained_dropped(stream)
    }

    pub fn last_seq(&self) -> u64 {
        self.output.last_seq()
    }

    /// Events after `after` (validated by the caller), waiting up to `wait` for at least one while
    /// the log is open.
    pub async fn read_log(&self, after: u64, max_bytes: usize, wait: Option<Duration>) -> LogRead {
        self.output.read(after, max_bytes, wait).await
    }

    // ---- control -----------------------------------------------------------------------------

    /// Sends `signal` to the whole group (and to a root that left it). A kill marks the outcome
    /// `killed` when the root has not exited yet. False when it reached no process.
    pub fn signal(&self, signal: i32, intent: SignalIntent) -> bool {
        if self.state.borrow().is_done() {
            return false;
        }
        if self.service.is_some() && super::service::ends_service(signal, intent) {
            let mut waiting = false;
            self.update(|s| {
                s.halt = true;
                waiting = s.backoff;
                if waiting {
                    // The signal is what ends the service: its end says so (a kill is `killed`,
                    // a sandbox's lifetime reads it as its own), while the last run's own exit
                    // stays in `last_exit` and in the log's restart event.
                    s.root_exit = Some(RootExit { code: 128 + signal, signal: Some(signal) });
                    s.ended_between_runs = true;
                    if intent == SignalIntent::Kill {
                        s.stop.get_or_insert(StopReason::Kill);
                    }
                }
            });
            // Between two runs there is nothing to signal: the service ends where it is.
            if waiting {
                return true;
            }
        }
        match intent {
            SignalIntent::Kill => self.stop(StopReason::Kill, signal),
            SignalIntent::Plain => self.send(signal),
        }
    }

    /// Waits until `finished`, or at most `limit`; returns the state either way.
    pub async fn wait_finished(&self, limit: Option<Duration>) -> State {
        self.wait_state(State::is_finished, limit).await
    }

    /// Waits until `done`, or at most `limit`; returns the state either way.
    pub async fn wait_done(&self, limit: Option<Duration>) -> State {
        self.wait_state(State::is_done, limit).await
    }

    async fn wait_state(&self, pred: fn(&State) -> bool, limit: Option<Duration>) -> State {
        let mut rx = self.state.subscribe();
        let wait = async {
            let _ = rx.wait_for(pred).await;
        };
        match limit {
            Some(d) => {
                let _ = tokio::time::timeout(d, wait).await;
            }
            None => wait.await,
        }
        self.state()
    }
}
