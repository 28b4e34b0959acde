//! One supervised child: spawned as the leader of a new process group, owned by one tokio task
//! that waits for the root, runs the timeout (SIGTERM to the group, SIGKILL after a grace period)
//! and decides when the process is over. Two readers move the pipes into the output log.
//!
//! Two ends, because the two faces ask different questions:
//! - *finished* (Mastra): the root exited and both pipes were drained. Pipes held by a grandchild
//!   no longer count once the group is empty, so a detached grandchild cannot hang `wait()`.
//! - *done* (seed 002): finished, and no live process is left in the group. The terminal log event
//!   is written then, after all output.
//!
//! Handles share an `Arc<Process>`; state is published through `watch` channels, so any number of
//! waiters can wait and no lock is held across an `.await`.

use crate::core::command::{os_env, Limits, SpawnSpec, StdinMode};
use crate::core::decoder::Utf8Decoder;
use crate::core::error::{CoreError, CoreResult};
use crate::core::group::ProcessGroup;
use crate::core::output_log::{now_ms, EventBody, ExitInfo, LogRead, OutputLog, Stream};
use crate::core::retained::RetainedText;
use crate::core::{pipe, registry, watchdog};
use bytes::Bytes;
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch, Notify};
use tokio::time::Instant;

/// The lifecycle, published to every waiter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    pub root_exit: Option<ExitInfo>,
    pub outputs_done: bool,
    pub group_empty: bool,
    pub ended_at_ms: Option<u64>,
    /// Milliseconds (fractional) from spawn to `finished`.
    pub finished_after_ms: Option<f64>,
}

impl State {
    /// Mastra's "exited": the root exited and its output is all in.
    pub fn finished(&self) -> bool {
        self.root_exit.is_some() && self.outputs_done
    }
    /// Seed 002's end: finished and the group is empty; the terminal event is in the log.
    pub fn done(&self) -> bool {
        self.finished() && self.group_empty && self.ended_at_ms.is_some()
    }
}

struct Texts {
    log: OutputLog,
    retained: [RetainedText; 2],
    decoders: [Utf8Decoder; 2],
    /// Cumulative output bytes appended, for the listener pump's backpressure.
    appended_bytes: u64,
}

/// The JS listener pump: told (once per batch) that new events exist; the producer waits when the
/// pump lags by half the log, so listeners lose nothing while memory stays bounded.
struct Pump {
    wake: Box<dyn Fn() + Send + Sync>,
    scheduled: AtomicBool,
}

enum StdinOp {
    Write(Bytes, oneshot::Sender<CoreResult<()>>),
    Close(oneshot::Sender<CoreResult<()>>),
}

pub struct Process {
    pub id: String,
    pub pid: u32,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub started_at_ms: u64,
    started: std::time::Instant,
    pub owner: u64,
    pub stdin_mode: StdinMode,
    group: ProcessGroup,
    texts: Mutex<Texts>,
    log_seq: watch::Sender<u64>,
    state: watch::Sender<State>,
    stdin: Mutex<Option<mpsc::UnboundedSender<StdinOp>>>,
    stdin_closed: AtomicBool,
    kill_requested: AtomicBool,
    drain: watch::Sender<bool>,
    pump: Mutex<Option<Arc<Pump>>>,
    pump_consumed_bytes: AtomicU64,
    pump_consumed_seq: AtomicU64,
    /// The position a byte-stream reader (`handle.reader`) has consumed; NO_HOLD when none. The
    /// producer waits for it like for the pump, so a protocol stream loses nothing.
    reader_hold: AtomicU64,
    pump_progress: Notify,
}

const NO_HOLD: u64 = u64::MAX;

/// How long the drain after the group's death waits for a stalled byte-stream reader before
/// letting the log evict under it: an abandoned reader must not keep a dead process unfinished.
const READER_DRAIN_PATIENCE: Duration = Duration::from_secs(2);

fn stream_index(s: Stream) -> usize {
    match s {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process").field("id", &self.id).field("pid", &self.pid).finish()
    }
}

/// Spawns `spec` and starts its supervisor. Must be called inside a tokio runtime.
pub fn spawn(spec: SpawnSpec, id: String, owner: u64) -> CoreResult<Arc<Process>> {
    spawn_with_pump(spec, id, owner, None)
}

/// Like `spawn`, with the listener pump installed before the readers start, so the pump holds
/// the producer back from the first byte.
pub fn spawn_with_pump(
    spec: SpawnSpec,
    id: String,
    owner: u64,
    pump: Option<Box<dyn Fn() + Send + Sync>>,
) -> CoreResult<Arc<Process>> {
    spec.validate()?;
    let program = spec.resolve_program()?;
    let mut cmd = std::process::Command::new(&program);
    cmd.arg0(&spec.argv[0])
        .args(&spec.argv[1..])
        .env_clear()
        .envs(os_env(&spec.env))
        .current_dir(&spec.cwd)
        .process_group(0)
        .stdin(match spec.stdin {
            StdinMode::Pipe => Stdio::piped(),
            StdinMode::Ignore => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if spec.limits != Limits::default() {
        let limits = spec.limits;
        // Limits are set in the child between fork and exec, so they hold from the program's
        // first instruction and bind everything it forks. Set with prlimit() after the spawn,
        // the child ran unlimited for about a millisecond: long enough for a shell to open
        // descriptors past `openFiles` (seen in 2 runs out of 3), and whatever it forked then was
        // never limited. A pre_exec closure costs the posix_spawn fast path (std forks and
        // execs), so only the processes that ask for limits pay for it, off the JS thread.
        // SAFETY: the closure runs in the forked child and only makes getrlimit/setrlimit
        // syscalls, which are async-signal-safe; it neither allocates nor takes a lock.
        unsafe {
            cmd.pre_exec(move || {
                set_limits(&limits);
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| spawn_error(&spec, &program, e))?;
    let pid = child.id();
    watchdog::register(pid as i32);

    let stdout: OwnedFd = child.stdout.take().expect("stdout is piped").into();
    let stderr: OwnedFd = child.stderr.take().expect("stderr is piped").into();
    let stdin: Option<OwnedFd> = child.stdin.take().map(Into::into);

    let (stdin_tx, stdin_rx) = mpsc::unbounded_channel();
    let proc = Arc::new(Process {
        id,
        pid,
        argv: spec.argv.clone(),
        cwd: spec.cwd.clone(),
        started_at_ms: now_ms(),
        started: std::time::Instant::now(),
        owner,
        stdin_mode: spec.stdin,
        group: ProcessGroup::new(pid as i32),
        texts: Mutex::new(Texts {
            log: OutputLog::new(spec.log_max_bytes, spec.log_max_events),
            retained: [RetainedText::new(spec.retain_bytes), RetainedText::new(spec.retain_bytes)],
            decoders: [Utf8Decoder::new(), Utf8Decoder::new()],
            appended_bytes: 0,
        }),
        log_seq: watch::channel(0).0,
        state: watch::channel(State::default()).0,
        stdin: Mutex::new(stdin.as_ref().map(|_| stdin_tx)),
        stdin_closed: AtomicBool::new(false),
        kill_requested: AtomicBool::new(false),
        drain: watch::channel(false).0,
        pump: Mutex::new(None),
        pump_consumed_bytes: AtomicU64::new(0),
        pump_consumed_seq: AtomicU64::new(0),
        reader_hold: AtomicU64::new(NO_HOLD),
        pump_progress: Notify::new(),
    });
    registry::insert(&proc);
    if let Some(wake) = pump {
        proc.set_pump(wake, true);
    }

    let done_count = Arc::new(AtomicU64::new(0));
    for (fd, stream) in [(stdout, Stream::Stdout), (stderr, Stream::Stderr)] {
        let p = proc.clone();
        let done_count = done_count.clone();
        tokio::spawn(async move {
            p.read_stream(fd, stream).await;
            if done_count.fetch_add(1, Ordering::AcqRel) == 1 {
                p.update(|s| s.outputs_done = true);
            }
        });
    }
    if let Some(fd) = stdin {
        tokio::spawn(stdin_writer(pid, fd, stdin_rx));
    }
    let p = proc.clone();
    let timeout = spec.timeout_ms.map(Duration::from_millis);
    let grace = Duration::from_millis(spec.grace_ms);
    tokio::spawn(async move { p.supervise(child, timeout, grace).await });
    Ok(proc)
}

fn spawn_error(spec: &SpawnSpec, program: &std::path::Path, e: std::io::Error) -> CoreError {
    let errno = e.raw_os_error();
    let code = match errno {
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EACCES) => "EACCES",
        Some(libc::EAGAIN) => "EAGAIN",
        Some(libc::EMFILE) => "EMFILE",
        Some(libc::ENFILE) => "ENFILE",
        Some(libc::ENOMEM) => "ENOMEM",
        Some(libc::ENOEXEC) => "ENOEXEC",
        _ => "EUNKNOWN",
    };
    if errno == Some(libc::ENOENT) && crate::core::command::validate_cwd(&spec.cwd).is_err() {
        return CoreError::InvalidCwd {
            path: spec.cwd.display().to_string(),
            reason: format!("ENOENT: no such file or directory, cwd {}", spec.cwd.display()),
        };
    }
    CoreError::SpawnFailed { program: program.display().to_string(), reason: format!("{code}: {e}"), errno }
}

/// Sets each given limit as both the soft and the hard limit, capped at the current hard limit
/// (an unprivileged process cannot raise it, and its current limit is then the stricter one).
/// Runs in the forked child before exec: syscalls only.
fn set_limits(limits: &Limits) {
    set_limit(libc::RLIMIT_AS, limits.address_space);
    set_limit(libc::RLIMIT_CPU, limits.cpu_seconds);
    set_limit(libc::RLIMIT_NOFILE, limits.open_files);
    set_limit(libc::RLIMIT_FSIZE, limits.file_size);
    set_limit(libc::RLIMIT_NPROC, limits.processes);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

fn set_limit(resource: Resource, value: Option<u64>) {
    let Some(v) = value else { return };
    let v = v as libc::rlim_t;
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit on the calling process with valid pointers.
    unsafe {
        let max = if libc::getrlimit(resource, &mut old) == 0 { old.rlim_max.min(v) } else { v };
        libc::setrlimit(resource, &libc::rlimit { rlim_cur: max, rlim_max: max });
    }
}

fn exit_info(status: std::process::ExitStatus) -> ExitInfo {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitInfo { code, ..Default::default() },
        (None, Some(sig)) => ExitInfo { code: 128 + sig, signal: Some(sig), ..Default::default() },
        _ => ExitInfo { code: 1, ..Default::default() },
    }
}

impl Process {
    fn texts(&self) -> MutexGuard<'_, Texts> {
        self.texts.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        let elapsed = self.started.elapsed().as_secs_f64() * 1000.0;
        self.state.send_modify(|s| {
            f(s);
            if s.finished() && s.finished_after_ms.is_none() {
                s.finished_after_ms = Some(elapsed);
            }
        });
    }

    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }

    pub fn subscribe_state(&self) -> watch::Receiver<State> {
        self.state.subscribe()
    }

    pub fn group(&self) -> ProcessGroup {
        self.group
    }

    async fn supervise(self: Arc<Self>, child: std::process::Child, timeout: Option<Duration>, grace: Duration) {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut timed_out = false;
        let mut kill_at: Option<Instant> = None;
        let far = || Instant::now() + Duration::from_secs(86400 * 365);

        let exit = crate::core::reaper::wait(child);
        tokio::pin!(exit);
        let status = loop {
            tokio::select! {
                st = &mut exit => break st,
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(far)), if deadline.is_some() && !timed_out => {
                    timed_out = true;
                    self.group.signal(libc::SIGTERM);
                    kill_at = Some(Instant::now() + grace);
                }
                _ = tokio::time::sleep_until(kill_at.unwrap_or_else(far)), if kill_at.is_some() => {
                    self.group.signal(libc::SIGKILL);
                    kill_at = None;
                }
            }
        };
        let mut info = match status {
            Ok(st) => exit_info(st),
            Err(_) => ExitInfo { code: 1, ..Default::default() },
        };
        info.timed_out = timed_out;
        info.killed = self.kill_requested.load(Ordering::Acquire);
        self.update(|s| s.root_exit = Some(info));
        // Writes to stdin are refused from now on, so let the writer task end and close our end
        // of the pipe. Held until the handle was dropped, it cost one descriptor per exited
        // process that a program kept a handle to (Mastra's `list()` keeps them all).
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();

        // Phase 2: wait for the output to drain and the group to empty.
        let mut state_rx = self.state.subscribe();
        let mut backoff = Duration::from_millis(2);
        let mut group_empty = false;
        loop {
            if !group_empty && self.group.is_empty() {
                group_empty = true;
                self.update(|s| s.group_empty = true);
                // Whatever still holds the pipes is not in the group: take what is buffered, stop.
                self.drain.send_replace(true);
            }
            if group_empty && state_rx.borrow_and_update().outputs_done {
                break;
            }
            tokio::select! {
                _ = state_rx.changed() => {}
                _ = tokio::time::sleep(backoff), if !group_empty => {
                    backoff = (backoff * 2).min(Duration::from_millis(100));
                }
                _ = tokio::time::sleep_until(kill_at.unwrap_or_else(far)), if kill_at.is_some() => {
                    self.group.signal(libc::SIGKILL);
                    kill_at = None;
                }
            }
        }
        self.append(EventBody::Exited(info));
        watchdog::unregister(self.pid as i32);
        self.update(|s| s.ended_at_ms = Some(now_ms()));
        registry::remove(&self);
    }

    async fn read_stream(self: &Arc<Self>, fd: OwnedFd, stream: Stream) {
        let Ok(mut reader) = pipe::AsyncPipe::new(fd) else {
            return;
        };
        // The read buffer is allocated at the first output, not at spawn: an idle child (a server
        // waiting for requests, a `sleep`) then costs no buffer at all. Allocated up front, the
        // 2 × 256 KiB made 1,000 idle children cost about 250 MB of RSS.
        const BUF: usize = 256 * 1024;
        let mut buf: Vec<u8> = Vec::new();
        let mut drain = self.drain.subscribe();
        loop {
            let r = tokio::select! {
                r = async {
                    if buf.is_empty() {
                        reader.readable().await?;
                        buf = vec![0u8; BUF];
                    }
                    reader.read(&mut buf).await
                } => Some(r),
                _ = async { let _ = drain.wait_for(|d| *d).await; } => None,
            };
            match r {
                Some(Ok(0)) | Some(Err(_)) => break,
                Some(Ok(n)) => {
                    self.push_output(stream, &buf[..n]);
                    self.pump_backpressure().await;
                }
                None => {
                    // The group is gone; take what is buffered without waiting for writers outside it.
                    if buf.is_empty() {
                        buf = vec![0u8; BUF];
                    }
                    while let Ok(n) = reader.read_now(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        self.push_output(stream, &buf[..n]);
                        // A full pipe (1 MiB) drained at once would overrun a listener pump
                        // or reader that lags; the group is dead, so waiting here holds nothing
                        // up (a stalled reader only for a while: see READER_DRAIN_PATIENCE).
                        self.backpressure(false).await;
                    }
                    break;
                }
            }
        }
        let mut t = self.texts();
        let i = stream_index(stream);
        let rest = t.decoders[i].finish();
        if !rest.is_empty() {
            t.retained[i].push(&rest);
        }
    }

    fn push_output(&self, stream: Stream, data: &[u8]) {
        let i = stream_index(stream);
        let seq = {
            let mut t = self.texts();
            let Texts { decoders, retained, .. } = &mut *t;
            let text = decoders[i].decode(data);
            retained[i].push(&text);
            t.appended_bytes += data.len() as u64;
            t.log.append(EventBody::Output(stream, Bytes::copy_from_slice(data)))
        };
        if let Some(seq) = seq {
            self.log_seq.send_replace(seq);
            self.wake_pump();
        }
    }

    fn append(&self, body: EventBody) {
        let seq = self.texts().log.append(body);
        if let Some(seq) = seq {
            self.log_seq.send_replace(seq);
            self.wake_pump();
        }
    }

    // ---- listener pump -------------------------------------------------------------------

    /// Installs the pump wake-up. `wake` runs on a runtime thread and must only schedule work.
    /// With `from_start` the pump sees every event; otherwise only those appended from now on.
    pub fn set_pump(&self, wake: Box<dyn Fn() + Send + Sync>, from_start: bool) {
        {
            let t = self.texts();
            let mut slot = self.pump.lock().unwrap_or_else(|e| e.into_inner());
            if !from_start {
                self.pump_consumed_seq.store(t.log.last_seq(), Ordering::Release);
                self.pump_consumed_bytes.store(t.appended_bytes, Ordering::Release);
            }
            *slot = Some(Arc::new(Pump { wake, scheduled: AtomicBool::new(false) }));
        }
        self.wake_pump();
    }

    pub fn clear_pump(&self) {
        self.pump.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.pump_progress.notify_waiters();
    }

    fn wake_pump(&self) {
        let pump = self.pump.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(p) = pump {
            if !p.scheduled.swap(true, Ordering::AcqRel) {
                (p.wake)();
            }
        }
    }

    /// Called by the pump: everything after the pump's position, and the pump's position advances.
    pub fn pump_drain(&self) -> LogRead {
        if let Some(p) = self.pump.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            p.scheduled.store(false, Ordering::Release);
        }
        let after = self.pump_consumed_seq.load(Ordering::Acquire);
        let read = self.texts().log.read_after(after, usize::MAX);
        let bytes: u64 = read
            .events
            .iter()
            .map(|e| match &e.body {
                EventBody::Output(_, b) => b.len() as u64,
                _ => 0,
            })
            .sum();
        self.pump_consumed_seq.store(read.next, Ordering::Release);
        self.pump_consumed_bytes.fetch_add(bytes, Ordering::AcqRel);
        self.pump_progress.notify_waiters();
        read
    }

    /// Waits while the pump or a held reader lags by more than half the log (bytes or events).
    /// `patient_with_reader = false` stops waiting for a reader that makes no progress for
    /// READER_DRAIN_PATIENCE (used once the group is dead).
    async fn pump_backpressure(&self) {
        self.backpressure(true).await
    }

    async fn backpressure(&self, patient_with_reader: bool) {
        let mut reader_stall: Option<(u64, Instant)> = None;
        loop {
            let notified = self.pump_progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let pump = self.pump.lock().unwrap_or_else(|e| e.into_inner()).is_some();
            let hold = self.reader_hold.load(Ordering::Acquire);
            if !pump && hold == NO_HOLD {
                return;
            }
            let (over_pump, over_reader) = {
                let t = self.texts();
                let (max_b, max_e) = ((t.log.max_bytes() / 2) as u64, (t.log.max_events() / 2) as u64);
                let last = t.log.last_seq();
                let over_pump = pump
                    && (t.appended_bytes.saturating_sub(self.pump_consumed_bytes.load(Ordering::Acquire)) > max_b
                        || last.saturating_sub(self.pump_consumed_seq.load(Ordering::Acquire)) > max_e);
                let over_reader =
                    hold != NO_HOLD && (t.log.bytes_after(hold) > max_b || last.saturating_sub(hold) > max_e);
                (over_pump, over_reader)
            };
            if !over_pump && !over_reader {
                return;
            }
            if !over_pump && !patient_with_reader {
                let now = Instant::now();
                match reader_stall {
                    Some((at, since)) if at == hold => {
                        if now.duration_since(since) >= READER_DRAIN_PATIENCE {
                            return;
                        }
                    }
                    _ => reader_stall = Some((hold, now)),
                }
                let _ = tokio::time::timeout(READER_DRAIN_PATIENCE, notified).await;
                continue;
            }
            notified.await;
        }
    }

    /// Holds the producer for a byte-stream reader that has consumed up to `seq` (`None`
    /// releases the hold).
    pub fn set_reader_hold(&self, seq: Option<u64>) {
        self.reader_hold.store(seq.unwrap_or(NO_HOLD), Ordering::Release);
        self.pump_progress.notify_waiters();
    }

    // ---- views ---------------------------------------------------------------------------

    pub fn retained_text(&self, stream: Stream) -> String {
        self.texts().retained[stream_index(stream)].text()
    }

    pub fn retained_dropped(&self, stream: Stream) -> u64 {
        self.texts().retained[stream_index(stream)].dropped_bytes()
    }

    /// The newest sequence number in the log. Read from the log itself: the `log_seq` watch is
    /// published just after the append, outside the lock, so a reader that has just been handed
    /// event N could see N - 1 there and have its next position refused as past the end (or its
    /// cursor as from the future). That made about 1 in 20 `output()` calls on a fast writer fail.
    pub fn last_seq(&self) -> u64 {
        self.texts().log.last_seq()
    }

    pub fn log_evicted_any(&self) -> bool {
        self.texts().log.evicted_any()
    }

    /// Events after `after` (validated by the caller), waiting up to `wait` for at least one while
    /// the log is open. Returns no events when the log is closed and read through, or on timeout.
    pub async fn read_log(&self, after: u64, max_bytes: usize, wait: Option<Duration>) -> LogRead {
        let mut rx = self.log_seq.subscribe();
        let deadline = wait.map(|d| Instant::now() + d);
        loop {
            {
                let t = self.texts();
                let read = t.log.read_after(after, max_bytes);
                if !read.events.is_empty() || read.truncated || wait.is_none() || t.log.is_closed() {
                    return read;
                }
            }
            let changed = tokio::time::timeout_at(deadline.unwrap_or_else(Instant::now), rx.changed()).await;
            if !matches!(changed, Ok(Ok(()))) {
                return LogRead { next: after, ..Default::default() };
            }
        }
    }

    pub fn read_log_now(&self, after: u64, max_bytes: usize) -> LogRead {
        self.texts().log.read_after(after, max_bytes)
    }

    /// Notified on every new log event.
    pub fn subscribe_log(&self) -> watch::Receiver<u64> {
        self.log_seq.subscribe()
    }

    // ---- control -------------------------------------------------------------------------

    /// Signals the whole group. `as_kill` marks the outcome `killed` when the root has not exited
    /// yet. Returns false when there is nothing left to signal.
    pub fn signal(&self, signal: i32, as_kill: bool) -> bool {
        let st = self.state();
        if st.group_empty {
            return false;
        }
        if as_kill && st.root_exit.is_none() {
            self.kill_requested.store(true, Ordering::Release);
        }
        self.group.signal(signal)
    }

    /// Waits until `finished`, or at most `limit`; returns the state either way.
    pub async fn wait_finished(&self, limit: Option<Duration>) -> State {
        self.wait_state(State::finished, limit).await
    }

    /// Waits until `done`, or at most `limit`; returns the state either way.
    pub async fn wait_done(&self, limit: Option<Duration>) -> State {
        self.wait_state(State::done, limit).await
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

    fn stdin_sender(&self) -> CoreResult<mpsc::UnboundedSender<StdinOp>> {
        if self.stdin_mode == StdinMode::Ignore {
            return Err(CoreError::StdinIgnored(self.pid));
        }
        if let Some(exit) = self.state().root_exit {
            return Err(CoreError::AlreadyExited { pid: self.pid, code: exit.code });
        }
        let guard = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        guard.clone().ok_or(CoreError::StdinClosed(self.pid))
    }

    /// Writes to stdin; resolves once written. Ordered with other writes.
    pub async fn write_stdin(&self, data: Bytes) -> CoreResult<()> {
        let tx = self.stdin_sender()?;
        let (reply, rx) = oneshot::channel();
        tx.send(StdinOp::Write(data, reply)).map_err(|_| CoreError::StdinClosed(self.pid))?;
        rx.await.unwrap_or(Err(CoreError::StdinClosed(self.pid)))
    }

    /// Sends EOF once everything written before has been written. Idempotent.
    pub async fn close_stdin(&self) -> CoreResult<()> {
        if self.stdin_closed.load(Ordering::Acquire) && self.stdin_mode == StdinMode::Pipe {
            return Ok(());
        }
        let tx = self.stdin_sender()?;
        self.stdin_closed.store(true, Ordering::Release);
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let (reply, rx) = oneshot::channel();
        if tx.send(StdinOp::Close(reply)).is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }
}

async fn stdin_writer(pid: u32, fd: OwnedFd, mut rx: mpsc::UnboundedReceiver<StdinOp>) {
    let Ok(mut pipe) = pipe::AsyncPipe::new(fd) else {
        return;
    };
    while let Some(op) = rx.recv().await {
        match op {
            StdinOp::Write(data, reply) => {
                let r = pipe.write_all(&data).await.map_err(|e| CoreError::StdinWrite {
                    pid,
                    reason: if e.raw_os_error() == Some(libc::EPIPE) {
                        "the process closed its stdin or exited (EPIPE)".into()
                    } else {
                        e.to_string()
                    },
                });
                let _ = reply.send(r);
            }
            StdinOp::Close(reply) => {
                drop(pipe);
                let _ = reply.send(Ok(()));
                // Writes queued after a close fail: their senders see the channel closed.
                return;
            }
        }
    }
}
