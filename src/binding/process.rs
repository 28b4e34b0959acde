//! `NativeProcess`: the JS-visible handle on one core `Process`. Both JS faces (the Mastra
//! `ProcessHandle` and the Processes API's `Process`) are views over one of these.
//!
//! Every asynchronous method clones the `Arc<Process>` into its future before returning the
//! promise: the future owns what it uses, so a JS object that is collected, or a worker that is
//! terminated, while a call is pending can never leave a future reading freed memory.

use super::bytes::{JsBytes, JsChunks, JsText};
use super::error::{invalid, js_error};
use super::settle;
use super::value::{request_of, value_of};
use crate::core::error::{CoreError, CoreResult};
use crate::core::output::TextChunk;
use crate::core::output_log::{EventBody, ExitInfo, LogEvent, Stream};
use crate::core::process::Process;
use crate::core::readiness::{probe_once, Probe, ProbeResult};
use crate::core::request::{self, Face};
use crate::core::state::State;
use crate::core::{cursor, group, launcher, supervisor};
use napi::bindgen_prelude::{Buffer, Function, PromiseRaw, Status, Unknown};
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Called (weakly: it does not keep Node alive) when new output is ready for `pumpDrain()`.
pub type WakeFn = ThreadsafeFunction<(), (), (), Status, false, true>;

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
        Self { code: e.code, signal: e.signal, timed_out: e.timed_out, killed: e.killed }
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
}

impl NativeFinish {
    fn of(st: &State) -> Self {
        let e = st.finished.as_ref();
        Self {
            code: e.map_or(-1, |e| e.code),
            signal: e.and_then(|e| e.signal),
            timed_out: e.is_some_and(|e| e.timed_out),
            after_ms: st.finished_after_ms.unwrap_or(0.0),
        }
    }
}

/// Retained text of one stream (Mastra's `stdout` / `stderr`).
#[napi(object)]
pub struct NativeRetained {
    pub text: String,
    pub dropped_bytes: f64,
}

/// The retained text of both streams, as a Mastra `wait()` reports it.
#[napi(object, object_from_js = false)]
pub struct NativeRetainedOutput {
    pub stdout: String,
    pub stdout_dropped_bytes: f64,
    pub stderr: String,
    pub stderr_dropped_bytes: f64,
}

/// Decoded output for the listeners: consecutive text of one stream, in pieces of at most 64 KiB.
#[napi(object, object_from_js = false)]
pub struct NativeChunk {
    /// 0 = stdout, 1 = stderr.
    pub stream: u8,
    #[napi(ts_type = "string")]
    pub text: JsText,
}

/// One log event as the Processes API needs it.
#[napi(object, object_from_js = false)]
pub struct NativeLogEvent {
    pub seq: f64,
    /// "stdout" | "stderr" | "exited"
    pub kind: String,
    pub at_ms: f64,
    pub cursor: String,
    pub data: Option<JsBytes>,
    pub exit: Option<NativeExit>,
}

#[napi(object, object_from_js = false)]
pub struct NativeLogRead {
    pub truncated: bool,
    pub events: Vec<NativeLogEvent>,
    /// The sequence number to read after next time.
    pub next: f64,
    /// The log is closed (terminal event written) and `next` is at its end.
    pub closed: bool,
}

/// What the reader takes at once: the stdout bytes after a position, in one Buffer.
#[napi(object, object_from_js = false)]
pub struct NativeStdoutTake {
    pub truncated: bool,
    /// The stdout bytes of the events taken, joined; null when they hold none.
    #[napi(ts_type = "Buffer | null")]
    pub data: Option<JsChunks>,
    /// The sequence number to read after next time (past stderr and exit events too).
    pub next: f64,
    /// The process had finished before this take: with nothing taken, stdout is complete.
    pub finished: bool,
}

/// What a terminal shows now (0-based rows and columns).
#[napi(object, object_from_js = false)]
pub struct NativeSnapshot {
    pub cols: u32,
    pub rows: u32,
    /// One string per row, trailing blanks removed.
    pub lines: Vec<String>,
    pub cursor_row: u32,
    pub cursor_col: u32,
    pub title: String,
}

/// One readiness probe attempt.
#[napi(object)]
pub struct NativeProbe {
    pub ready: bool,
    pub reason: Option<String>,
}

/// A supervised process. Created by `spawnProcess`.
#[napi]
pub struct NativeProcess {
    pub(super) inner: Arc<Process>,
    /// The `timeout` as given, for the Mastra face's timeout note.
    timeout: Option<f64>,
    /// The reader is waiting for its wake-up, and keeps Node alive meanwhile.
    reader_waits: AtomicBool,
}

pub(super) fn seq_arg(name: &str, v: f64) -> CoreResult<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
        Ok(v as u64)
    } else {
        Err(CoreError::invalid_option(name, "must be a non-negative integer"))
    }
}

/// A log read's start and size, by the rules `readLog` and `takeStdout` share: `after` a sequence
/// number not past the log's end, `maxBytes` at least 1.
pub(super) fn log_range(p: &Process, after: f64, max_bytes: f64) -> CoreResult<(u64, usize)> {
    let after = seq_arg("after", after)?;
    if after > p.last_seq() {
        return Err(CoreError::invalid_option("after", "is past the end of the log"));
    }
    Ok((after, seq_arg("maxBytes", max_bytes.floor().max(1.0))? as usize))
}

fn stream_arg(env: &Env, s: &str) -> napi::Result<Stream> {
    match s {
        "stdout" => Ok(Stream::Stdout),
        "stderr" => Ok(Stream::Stderr),
        _ => Err(invalid(env, "stream", "must be 'stdout' or 'stderr'")),
    }
}

/// A signal as JS gave it (any value): checked by the core's one rule, with the value named in
/// the error.
fn signal_arg(env: &Env, v: Unknown) -> napi::Result<i32> {
    group::signal_of(&value_of(&v)?).map_err(|e| js_error(env, e))
}

/// Checks a signal (any JS value) by the core's rule without sending it; returns it as an
/// integer. The faces call it before anything else, so a bad signal is refused even for a
/// process that has exited.
#[napi(ts_args_type = "signal: unknown")]
pub fn check_signal(env: &Env, signal: Unknown) -> napi::Result<i32> {
    signal_arg(env, signal)
}

fn limit(ms: Option<f64>) -> CoreResult<Option<Duration>> {
    ms.map(|v| seq_arg("limit", v.max(0.0).floor()).map(Duration::from_millis)).transpose()
}

pub(super) fn to_event(id: &str, e: LogEvent) -> NativeLogEvent {
    let mut out = NativeLogEvent {
        seq: e.seq as f64,
        kind: String::new(),
        at_ms: e.at_ms as f64,
        cursor: cursor::encode(id, e.seq),
        data: None,
        exit: None,
    };
    match e.body {
        EventBody::Output(s, b) => {
            out.kind = s.as_str().into();
            out.data = Some(JsBytes(b));
        }
        EventBody::Exited(x) => {
            out.kind = "exited".into();
            out.exit = Some(x.into());
        }
    }
    out
}

/// Runs `fut` on the runtime and settles the promise on the JS thread (through the realm's one
/// settler), a core error becoming its typed JS error there. `fut` must own everything it uses.
fn promise<'env, T, V>(
    env: &'env Env,
    fut: impl Future<Output = CoreResult<T>> + Send + 'static,
    convert: impl FnOnce(T) -> V + Send + 'static,
) -> napi::Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: napi::bindgen_prelude::ToNapiValue + Send + 'static,
{
    let (pending, promise) = settle::pending(env)?;
    napi::bindgen_prelude::spawn(async move { pending.settle(fut.await.map(convert)) });
    Ok(promise)
}

/// A promise of the state once `pred` holds, settled by the supervisor's own update: no task is
/// spawned on the runtime for the wait, so the JS thread hands nothing to a runtime thread (on a
/// VM, waking a parked thread costs tens of microseconds), and the one wake-up left is the
/// settlement itself.
fn settle_when<'env>(
    env: &'env Env,
    p: &Arc<Process>,
    pred: fn(&State) -> bool,
) -> napi::Result<PromiseRaw<'env, NativeState>> {
    let (pending, promise) = settle::pending(env)?;
    p.when(pred, Box::new(move |st| pending.settle(Ok(NativeState::from(st)))));
    Ok(promise)
}

fn wake_fn(wake: WakeFn) -> Box<dyn Fn() + Send + Sync> {
    Box::new(move || {
        wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
    })
}

/// Spawns a process (off the JS thread) and starts supervising it. `face` is `'shell'` (the
/// Mastra surface's `spawn`) or `'argv'` (the Processes API's `exec`); `request` is
/// `{ command, options, env: [layers], cwd }` as the user gave them: the core reads their meaning.
/// `onWake`, when given, is called whenever new output is ready for `pumpDrain()`; while it is
/// installed the child is slowed down rather than letting the pump lose output. `holdOutput`
/// holds the producer for a byte-stream reader at the start of stdout, from the first byte,
/// until `setReaderHold` moves or releases it.
#[napi(ts_return_type = "Promise<NativeProcess>")]
pub fn spawn_process<'env>(
    env: &'env Env,
    face: String,
    request: Unknown<'_>,
    owner: u32,
    on_wake: Option<WakeFn>,
    hold_output: Option<bool>,
) -> napi::Result<PromiseRaw<'env, NativeProcess>> {
    let face = match face.as_str() {
        "shell" => Face::Shell,
        "terminal" => Face::Terminal,
        _ => Face::Argv,
    };
    // Only the conversion happens on the JS thread; the request's rules are read off it,
    // with the spawn: a bad value still rejects the launch, with its typed error.
    let value = request_of(&request)?;
    let id = format!("p{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let lend = on_wake.is_some() && super::loop_reader::available();
    let pump = on_wake.map(wake_fn);
    let hold = hold_output.unwrap_or(false);
    let (pending, promise) = settle::pending(env)?;
    let launch = move || {
        let launched = request::parse(face, &value).and_then(|launch| {
            let (inner, run) = supervisor::launch(launch.spec, id, owner as u64, pump, hold)?;
            if lend {
                inner.output.allow_lending();
            }
            Ok((NativeProcess { inner, timeout: launch.timeout, reader_waits: AtomicBool::new(false) }, run))
        });
        match launched {
            Ok((process, run)) => {
                pending.settle(Ok(process));
                Some(run)
            }
            Err(e) => {
                pending.settle::<NativeProcess>(Err(e));
                None
            }
        }
    };
    match launcher::global().filter(|l| l.claim()) {
        // The call only queues, and no runtime worker waits for the child's exec. The job runs
        // in the launcher's own runtime, which reads and supervises the process to its end.
        Some(l) => l.submit(Box::new(move || {
            if let Some(run) = launch() {
                tokio::spawn(run);
            }
        })),
        // On the runtime, whose workers are awake while other processes keep them busy. The
        // launch's task goes on as the process's own: no task spawned from a runtime thread, and
        // none of the hand-offs between its threads that each such spawn costs.
        None => {
            napi::bindgen_prelude::spawn(async move {
                if let Some(run) = launch() {
                    run.await;
                }
            });
        }
    }
    Ok(promise)
}

/// Checks `ProcessManager` options by the core's rules; returns the working directory, resolved.
#[napi]
pub fn manager_working_directory(env: &Env, options: Unknown<'_>) -> napi::Result<String> {
    request::manager(&value_of(&options)?, std::env::current_dir)
        .map(|p| p.display().to_string())
        .map_err(|e| js_error(env, e))
}

/// How a manager contains its processes, from its `containment` option (`'auto'`, `'cgroup'`,
/// `'process-group'`): `'cgroup'` or `'process-group'`. `'cgroup'` when this Node process has no
/// cgroup to give is an InvalidProcessOptionError that says why.
#[napi]
pub fn resolve_containment(env: &Env, mode: Unknown<'_>) -> napi::Result<String> {
    let cgroups = crate::core::cgroup::parent().map(|_| ());
    request::containment(&value_of(&mode)?, cgroups).map(str::to_string).map_err(|e| js_error(env, e))
}

/// Checks a duration in milliseconds by the core's rule (absent, or a non-negative finite
/// number); returns it, or `undefined` when absent.
#[napi]
pub fn check_duration(env: &Env, name: String, value: Unknown<'_>) -> napi::Result<Option<f64>> {
    request::duration(&name, &value_of(&value)?).map_err(|e| js_error(env, e))
}

/// One readiness probe of `127.0.0.1:port` / `[::1]:port`: TCP connect, or an HTTP GET whose
/// status must be within `[min, max]`.
#[napi(ts_return_type = "Promise<NativeProbe>")]
pub fn probe_port<'env>(
    env: &'env Env,
    port: u32,
    http_path: Option<String>,
    min: Option<u32>,
    max: Option<u32>,
    limit_ms: f64,
) -> napi::Result<PromiseRaw<'env, NativeProbe>> {
    if port == 0 || port > 65535 {
        return Err(invalid(env, "port", "must be an integer from 1 to 65535"));
    }
    let probe = match http_path {
        None => Probe::Tcp,
        Some(path) => Probe::Http { path, min: min.unwrap_or(200) as u16, max: max.unwrap_or(399) as u16 },
    };
    let limit = seq_arg("limit", limit_ms.max(1.0).floor()).map(Duration::from_millis);
    promise(env, async move { Ok(probe_once(port as u16, &probe, limit?).await) }, |r| match r {
        ProbeResult::Ready => NativeProbe { ready: true, reason: None },
        ProbeResult::NotReady(r) => NativeProbe { ready: false, reason: Some(r) },
    })
}

fn chunks_to_js(chunks: Vec<TextChunk>) -> Vec<NativeChunk> {
    // Pieces of at most PIECE bytes: larger strings land in V8's large-object space, which only
    // a full GC frees, so a fast producer would grow the heap by gigabytes. Large texts are cut
    // into pieces that share their bytes; small ones (a line here, a line there) are gathered
    // into one piece, so that a chatty child does not cost a JS call per line.
    const PIECE: usize = 64 * 1024;
    let mut out: Vec<NativeChunk> = Vec::new();
    for c in chunks {
        let stream = if c.stream == Stream::Stdout { 0 } else { 1 };
        let all = c.text.as_str();
        let mut at = 0;
        while at < all.len() {
            let rest = &all[at..];
            if let Some(last) = out.last_mut().filter(|l| l.stream == stream) {
                if let JsText::Owned(t) = &mut last.text {
                    if rest.len() <= PIECE.saturating_sub(t.len()) {
                        t.push_str(rest);
                        break;
                    }
                }
            }
            let take = floor_char_boundary(rest, PIECE).max(rest.chars().next().map_or(0, char::len_utf8));
            let text = if take < PIECE / 4 && take == rest.len() {
                JsText::Owned(rest.to_string())
            } else {
                JsText::Shared(c.text.slice(at..at + take))
            };
            out.push(NativeChunk { stream, text });
            at += take;
        }
    }
    out
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[napi]
impl NativeProcess {
    /// Unique in this OS process; names the process in cursors.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// The OS pid of the root, which is also the process group id.
    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// The argv that was launched (for a shell command: `/bin/sh`, `-c`, the command).
    #[napi(getter)]
    pub fn argv(&self) -> Vec<String> {
        self.inner.argv.clone()
    }

    /// The working directory, resolved.
    #[napi(getter)]
    pub fn cwd(&self) -> String {
        self.inner.cwd.display().to_string()
    }

    /// The `timeout` in milliseconds as it was given, if there is one.
    #[napi(getter)]
    pub fn timeout_ms(&self) -> Option<f64> {
        self.timeout
    }

    /// CPU time of the whole tree in milliseconds, when it is contained in a cgroup (the final
    /// figure once it is over); `undefined` otherwise.
    #[napi(getter)]
    pub fn cpu_time_ms(&self) -> Option<f64> {
        self.inner.cpu_time_ms()
    }

    /// The tree's memory peak in bytes, where the memory controller is enabled for its cgroup.
    #[napi(getter)]
    pub fn memory_peak_bytes(&self) -> Option<f64> {
        self.inner.memory_peak_bytes()
    }

    #[napi(getter)]
    pub fn started_at_ms(&self) -> f64 {
        self.inner.started_at_ms as f64
    }

    /// When the process was done (the Processes API end), in ms since the epoch; undefined
    /// before. The one field `state()` would be built for when pruning exited processes.
    #[napi(getter)]
    pub fn done_at_ms(&self) -> Option<f64> {
        let st = self.inner.state();
        if st.is_done() {
            st.ended_at_ms.map(|v| v as f64)
        } else {
            None
        }
    }

    #[napi]
    pub fn state(&self) -> NativeState {
        self.inner.state().into()
    }

    /// Resolves once the root exited and its output is drained (the Mastra end), with that end
    /// alone (what the Mastra waits report), not the whole state.
    #[napi(ts_return_type = "Promise<NativeFinish>")]
    pub fn wait_finish<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeFinish>> {
        let (pending, promise) = settle::pending(env)?;
        self.inner.when(State::is_finished, Box::new(move |st| pending.settle(Ok(NativeFinish::of(&st)))));
        Ok(promise)
    }

    /// Resolves when the whole group is gone and the terminal event is logged (the Processes API
    /// end), or after `limitMs` with the state as it is then.
    #[napi(ts_return_type = "Promise<NativeState>")]
    pub fn wait_done<'env>(
        &self,
        env: &'env Env,
        limit_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, NativeState>> {
        if limit_ms.is_none() {
            return settle_when(env, &self.inner, State::is_done);
        }
        let (p, limit) = (self.inner.clone(), limit(limit_ms));
        promise(env, async move { Ok(p.wait_done(limit?).await) }, NativeState::from)
    }

    /// Resolves with the exit code once the whole group is gone (the Processes API's `exitCode`):
    /// the number alone, settled like `waitDone()` without building the state object.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn wait_exit_code<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, i32>> {
        let (pending, promise) = settle::pending(env)?;
        let code = |st: State| st.done.map(|e| e.code).unwrap_or(-1);
        self.inner.when(State::is_done, Box::new(move |st| pending.settle(Ok(code(st)))));
        Ok(promise)
    }

    /// Installs the listener pump on a running process; it sees output from now on.
    #[napi]
    pub fn set_pump(&self, on_wake: WakeFn) {
        self.inner.output.set_pump(wake_fn(on_wake), false);
        if super::loop_reader::available() {
            self.inner.output.allow_lending();
        }
    }

    /// Sends `signal` (1–64) to the whole group, and to the root should it have left the group.
    /// `asKill` marks the outcome as killed. Returns false when it reached no process.
    #[napi]
    pub fn signal(&self, env: &Env, value: Unknown<'_>, as_kill: bool) -> napi::Result<bool> {
        Ok(self.inner.signal(signal_arg(env, value)?, as_kill))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn write_stdin<'env>(&self, env: &'env Env, data: Buffer) -> napi::Result<PromiseRaw<'env, ()>> {
        let (p, bytes) = (self.inner.clone(), bytes::Bytes::copy_from_slice(&data));
        promise(env, async move { p.write_stdin(bytes).await }, |()| ())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close_stdin<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let p = self.inner.clone();
        promise(env, async move { p.close_stdin().await }, |()| ())
    }

    /// The retained text of `stream` and the bytes dropped from it.
    #[napi]
    pub fn retained(&self, env: &Env, stream: String) -> napi::Result<NativeRetained> {
        let s = stream_arg(env, &stream)?;
        Ok(NativeRetained { text: self.inner.retained_text(s), dropped_bytes: self.inner.retained_dropped(s) as f64 })
    }

    /// The retained text of stdout and stderr with the bytes dropped from each: one call where
    /// a `wait()` result would otherwise make two.
    #[napi]
    pub fn retained_output(&self) -> NativeRetainedOutput {
        let p = &self.inner;
        NativeRetainedOutput {
            stdout: p.retained_text(Stream::Stdout),
            stdout_dropped_bytes: p.retained_dropped(Stream::Stdout) as f64,
            stderr: p.retained_text(Stream::Stderr),
            stderr_dropped_bytes: p.retained_dropped(Stream::Stderr) as f64,
        }
    }

    /// Everything the listener pump has not taken yet, decoded.
    #[napi]
    pub fn pump_drain(&self, env: &Env) -> Vec<NativeChunk> {
        let chunks = chunks_to_js(self.inner.output.pump_drain(false).0);
        // After the take: a borrowed pipe that the lag rule stopped may be read again.
        super::loop_reader::serve(env, &self.inner);
        chunks
    }

    /// The rest of the output for the listeners, with any incomplete character flushed; the
    /// pump is removed (the output is complete, or nobody listens any more).
    #[napi]
    pub fn pump_finish(&self) -> Vec<NativeChunk> {
        let chunks = chunks_to_js(self.inner.output.pump_drain(true).0);
        // A reader of the same process may still read the lent pipe here.
        if !self.inner.output.can_lend() {
            super::loop_reader::release(&self.inner);
        }
        chunks
    }

    /// Holds the producer back for a byte-stream reader that has consumed everything up to
    /// sequence number `seq`; `null` releases the hold.
    #[napi]
    pub fn set_reader_hold(&self, env: &Env, seq: Option<f64>) -> napi::Result<()> {
        let seq = seq.map(|v| seq_arg("seq", v)).transpose().map_err(|e| js_error(env, e))?;
        self.inner.output.set_reader_position(seq);
        super::loop_reader::serve(env, &self.inner);
        Ok(())
    }

    /// Log events after sequence number `after`, up to about `maxBytes` of output. With
    /// `waitMs`, waits up to that long for at least one event while the log is open.
    #[napi(ts_return_type = "Promise<NativeLogRead>")]
    pub fn read_log<'env>(
        &self,
        env: &'env Env,
        after: f64,
        max_bytes: f64,
        wait_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, NativeLogRead>> {
        let p = self.inner.clone();
        let args = log_range(&p, after, max_bytes).and_then(|(after, max)| Ok((after, max, limit(wait_ms)?)));
        promise(
            env,
            async move {
                let (after, max, wait) = args?;
                let read = p.read_log(after, max, wait).await;
                let closed = p.state().is_done() && read.next >= p.last_seq();
                let events = read.events.into_iter().map(|e| to_event(&p.id, e)).collect();
                Ok(NativeLogRead { truncated: read.truncated, next: read.next as f64, closed, events })
            },
            |r| r,
        )
    }

    /// The reader's take: stdout after sequence number `after`, up to about `maxBytes`, taken
    /// now on the JS thread in one Buffer. It answers the reader's wake-up (`setReaderWake`):
    /// output appended after this take wakes the reader again. Taking nothing from a process
    /// that has not finished, the reader waits for that wake-up, and Node stays alive until its
    /// next take (or until the wake-up is removed).
    #[napi]
    pub fn take_stdout(&self, env: &Env, after: f64, max_bytes: f64) -> napi::Result<NativeStdoutTake> {
        let (after, max) = log_range(&self.inner, after, max_bytes).map_err(|e| js_error(env, e))?;
        // Before the take: finished means that all of stdout is in the log by now.
        let finished = self.inner.state().is_finished();
        let read = self.inner.output.reader_take(after, max);
        let chunks: Vec<bytes::Bytes> = read
            .events
            .into_iter()
            .filter_map(|e| match e.body {
                EventBody::Output(Stream::Stdout, b) if !b.is_empty() => Some(b),
                _ => None,
            })
            .collect();
        let took_nothing = read.next == after;
        self.hold_for_reader(env, took_nothing && !read.truncated && !finished)?;
        if took_nothing {
            // A pipe offered to the reader. After a take that moved, the reader's `setReaderHold`
            // serves, with its new position (which may also let a poll stopped by the lag rule
            // read again).
            super::loop_reader::serve(env, &self.inner);
        }
        Ok(NativeStdoutTake {
            truncated: read.truncated,
            data: (!chunks.is_empty()).then_some(JsChunks(chunks)),
            next: read.next as f64,
            finished,
        })
    }

    /// Installs the reader's wake-up (`null` removes it): `onWake` is called on the JS thread
    /// when output arrives after the reader's last take, when a pipe is offered to it, and when
    /// the process finishes. The reader then takes on its own thread, and a flooding pipe can be
    /// read on its event loop, as for listeners.
    #[napi]
    pub fn set_reader_wake(&self, env: &Env, on_wake: Option<Function<(), ()>>) -> napi::Result<()> {
        let Some(f) = on_wake else {
            self.inner.output.set_reader_wake(None);
            if !self.inner.output.can_lend() {
                super::loop_reader::release(&self.inner);
            }
            return self.hold_for_reader(env, false);
        };
        // Weak: the process holds its wake-up, and the wake-up must not hold the process.
        let process = Arc::downgrade(&self.inner);
        let tsfn = f.build_threadsafe_function::<()>().weak::<true>().callee_handled::<false>().build_callback(
            move |ctx: ThreadsafeCallContext<()>| {
                // Served here, not only from the reader's next take: a paused reader still gives
                // back a pipe that the runtime asks for once the group is gone.
                if let Some(p) = process.upgrade() {
                    super::loop_reader::serve(&ctx.env, &p);
                }
                Ok(())
            },
        )?;
        let wake: WakeFn = tsfn;
        self.inner.output.set_reader_wake(Some(wake_fn(wake)));
        if super::loop_reader::available() {
            self.inner.output.allow_lending();
        }
        // Finishing appends nothing to the log: the reader learns of it by the same wake-up.
        let process = Arc::downgrade(&self.inner);
        self.inner.when(
            State::is_finished,
            Box::new(move |_| {
                if let Some(p) = process.upgrade() {
                    p.output.wake_reader();
                }
            }),
        );
        Ok(())
    }

    /// Keeps Node alive while the reader waits (as a pending `readLog` did), at most once.
    pub(super) fn hold_for_reader(&self, env: &Env, on: bool) -> napi::Result<()> {
        if self.reader_waits.swap(on, Ordering::Relaxed) != on {
            settle::keep_alive(env, on)?;
        }
        Ok(())
    }

    /// The cursor of the event with sequence number `seq` (0 = before the first event).
    #[napi]
    pub fn cursor_at(&self, env: &Env, seq: f64) -> napi::Result<String> {
        Ok(cursor::encode(&self.inner.id, seq_arg("seq", seq).map_err(|e| js_error(env, e))?))
    }

    /// Validates a cursor of this process and returns its sequence number.
    #[napi]
    pub fn parse_cursor(&self, env: &Env, cursor: String) -> napi::Result<f64> {
        cursor::decode(&cursor, &self.inner.id, self.inner.last_seq()).map(|s| s as f64).map_err(|e| js_error(env, e))
    }

    /// Whether the process runs on a terminal of its own (the `pty` option).
    #[napi(getter)]
    pub fn has_terminal(&self) -> bool {
        self.inner.has_terminal
    }

    /// Sets the window size of the process's terminal (`cols` and `rows` as JS gave them); a
    /// terminal that keeps a screen refuses one past `screen::MAX_CELLS`.
    #[napi(ts_args_type = "cols: unknown, rows: unknown")]
    pub fn resize(&self, env: &Env, cols: Unknown<'_>, rows: Unknown<'_>) -> napi::Result<()> {
        let (cols, rows) = (value_of(&cols)?, value_of(&rows)?);
        request::window_size(&cols, &rows).and_then(|(c, r)| self.inner.resize(c, r)).map_err(|e| js_error(env, e))
    }

    /// What the process's terminal shows now, rendered from its output.
    #[napi]
    pub fn snapshot(&self, env: &Env) -> napi::Result<NativeSnapshot> {
        let s = self.inner.output.snapshot().ok_or_else(|| js_error(env, CoreError::NoTerminal(self.inner.pid)))?;
        Ok(NativeSnapshot {
            cols: s.cols as u32,
            rows: s.rows as u32,
            lines: s.lines,
            cursor_row: s.cursor_row as u32,
            cursor_col: s.cursor_col as u32,
            title: s.title,
        })
    }

    /// SIGINT to the terminal's foreground process group. False when it reached no process.
    #[napi]
    pub fn interrupt(&self, env: &Env) -> napi::Result<bool> {
        self.inner.interrupt().map_err(|e| js_error(env, e))
    }

    /// The newest sequence number in the log (0 when empty).
    #[napi]
    pub fn last_seq(&self) -> f64 {
        self.inner.last_seq() as f64
    }

    /// The last `maxBytes` of `stream` ('stdout' or 'stderr') still in the log, as text: what an
    /// error says about a process that died.
    #[napi]
    pub fn log_tail(&self, env: &Env, stream: String, max_bytes: u32) -> napi::Result<String> {
        Ok(self.inner.output.tail(stream_arg(env, &stream)?, max_bytes as usize))
    }

    /// The bounded log has dropped events (so a full-history read is incomplete).
    #[napi]
    pub fn log_evicted_any(&self) -> bool {
        self.inner.output.evicted_any()
    }
}
