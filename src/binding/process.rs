//! `NativeProcess`: the JS-visible handle on one core `Process`. Both JS faces (the Mastra
//! `ProcessHandle` and the seed-002 `Process`) are views over one of these.

use super::bytes::JsBytes;
use super::error::{invalid, to_napi};
use super::options::{to_spec, NativeSpawnOptions};
use crate::core::output_log::{EventBody, ExitInfo, LogEvent, Stream};
use crate::core::process::{Process, State};
use crate::core::readiness::{probe_once, Probe, ProbeResult};
use crate::core::{cursor, group, process};
use bytes::{Bytes, BytesMut};
use napi::bindgen_prelude::{Buffer, Status};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Called (weakly: it does not keep Node alive) when new output is ready for `pumpDrain()`.
pub type WakeFn = ThreadsafeFunction<(), (), (), Status, false, true>;

/// How the root exited.
#[napi(object)]
pub struct NativeExit {
    /// Exit code, or 128 + signal.
    pub code: i32,
    pub signal: Option<i32>,
    pub timed_out: bool,
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
    /// The root process has exited (its exit is in `exit`).
    pub root_exited: bool,
    /// Mastra's end: root exited and output drained.
    pub finished: bool,
    /// Seed 002's end: finished and the process group is empty.
    pub done: bool,
    pub exit: Option<NativeExit>,
    pub ended_at_ms: Option<f64>,
    /// Fractional milliseconds from spawn to `finished`.
    pub finished_after_ms: Option<f64>,
}

impl From<State> for NativeState {
    fn from(s: State) -> Self {
        Self {
            root_exited: s.root_exit.is_some(),
            finished: s.finished(),
            done: s.done(),
            exit: s.root_exit.map(Into::into),
            ended_at_ms: s.ended_at_ms.map(|v| v as f64),
            finished_after_ms: s.finished_after_ms,
        }
    }
}

/// Retained text of one stream (Mastra's `stdout` / `stderr`).
#[napi(object)]
pub struct NativeRetained {
    pub text: String,
    pub dropped_bytes: f64,
}

/// One contiguous run of output for the listener pump (consecutive chunks of one stream merged).
#[napi(object, object_from_js = false)]
pub struct NativeChunk {
    /// 0 = stdout, 1 = stderr.
    pub stream: u8,
    pub data: JsBytes,
}

#[napi(object, object_from_js = false)]
pub struct NativePumpBatch {
    pub chunks: Vec<NativeChunk>,
    /// The pump's position was evicted before it read it (only without backpressure).
    pub truncated: bool,
    /// The terminal event was read: nothing more will come.
    pub ended: bool,
}

/// One log event as the seed-002 face needs it.
#[napi(object, object_from_js = false)]
pub struct NativeLogEvent {
    pub seq: f64,
    /// "stdout" | "stderr" | "exited" | "error"
    pub kind: String,
    pub at_ms: f64,
    pub cursor: String,
    pub data: Option<JsBytes>,
    pub exit: Option<NativeExit>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
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

/// One readiness probe attempt.
#[napi(object)]
pub struct NativeProbe {
    pub ready: bool,
    pub reason: Option<String>,
}

/// A supervised process. Created by `spawnProcess`.
#[napi]
pub struct NativeProcess {
    inner: Arc<Process>,
}

fn seq_arg(name: &str, v: f64) -> napi::Result<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
        Ok(v as u64)
    } else {
        Err(invalid(name, "must be a non-negative integer"))
    }
}

fn stream_arg(s: &str) -> napi::Result<Stream> {
    match s {
        "stdout" => Ok(Stream::Stdout),
        "stderr" => Ok(Stream::Stderr),
        _ => Err(invalid("stream", "must be 'stdout' or 'stderr'")),
    }
}

fn to_event(id: &str, e: LogEvent) -> NativeLogEvent {
    let mut out = NativeLogEvent {
        seq: e.seq as f64,
        kind: String::new(),
        at_ms: e.at_ms as f64,
        cursor: cursor::encode(id, e.seq),
        data: None,
        exit: None,
        error_code: None,
        error_message: None,
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
        EventBody::Error { code, message } => {
            out.kind = "error".into();
            out.error_code = Some(code);
            out.error_message = Some(message);
        }
    }
    out
}

/// Spawns a process (off the JS thread) and starts supervising it. `onWake`, when given, is called
/// whenever new output is ready for `pumpDrain()`; while it is installed the child is slowed down
/// rather than letting the pump lose output.
#[napi]
pub async fn spawn_process(options: NativeSpawnOptions, on_wake: Option<WakeFn>) -> napi::Result<NativeProcess> {
    let owner = options.owner as u64;
    let spec = to_spec(options)?;
    let id = format!("p{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let pump = on_wake.map(wake_fn);
    let proc = process::spawn_with_pump(spec, id, owner, pump).map_err(to_napi)?;
    Ok(NativeProcess { inner: proc })
}

fn wake_fn(wake: WakeFn) -> Box<dyn Fn() + Send + Sync> {
    Box::new(move || {
        wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
    })
}

fn limit(ms: Option<f64>) -> napi::Result<Option<Duration>> {
    match ms {
        None => Ok(None),
        Some(v) => Ok(Some(Duration::from_millis(seq_arg("limit", v.max(0.0).floor())?))),
    }
}

/// One readiness probe of `127.0.0.1:port` / `[::1]:port`: TCP connect, or an HTTP GET whose
/// status must be within `[min, max]`.
#[napi]
pub async fn probe_port(
    port: u32,
    http_path: Option<String>,
    min: Option<u32>,
    max: Option<u32>,
    limit_ms: f64,
) -> napi::Result<NativeProbe> {
    if port == 0 || port > 65535 {
        return Err(invalid("port", "must be an integer from 1 to 65535"));
    }
    let probe = match http_path {
        None => Probe::Tcp,
        Some(path) => Probe::Http { path, min: min.unwrap_or(200) as u16, max: max.unwrap_or(399) as u16 },
    };
    let limit = Duration::from_millis(seq_arg("limit", limit_ms.max(1.0).floor())?);
    Ok(match probe_once(port as u16, &probe, limit).await {
        ProbeResult::Ready => NativeProbe { ready: true, reason: None },
        ProbeResult::NotReady(r) => NativeProbe { ready: false, reason: Some(r) },
    })
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

    #[napi(getter)]
    pub fn started_at_ms(&self) -> f64 {
        self.inner.started_at_ms as f64
    }

    #[napi]
    pub fn state(&self) -> NativeState {
        self.inner.state().into()
    }

    /// Resolves when the root exited and its output is drained (Mastra's end), or after
    /// `limitMs` with the state as it is then.
    #[napi]
    pub async fn wait_finished(&self, limit_ms: Option<f64>) -> napi::Result<NativeState> {
        Ok(self.inner.wait_finished(limit(limit_ms)?).await.into())
    }

    /// Resolves when the whole group is gone and the terminal event is logged (seed 002's end),
    /// or after `limitMs` with the state as it is then.
    #[napi]
    pub async fn wait_done(&self, limit_ms: Option<f64>) -> napi::Result<NativeState> {
        Ok(self.inner.wait_done(limit(limit_ms)?).await.into())
    }

    /// Installs the listener pump on a running process; it sees output from now on.
    #[napi]
    pub fn set_pump(&self, on_wake: WakeFn) {
        self.inner.set_pump(wake_fn(on_wake), false);
    }

    /// Sends `signal` (1–64) to the whole group. `asKill` marks the outcome as killed.
    /// Returns false when nothing was left to signal.
    #[napi]
    pub fn signal(&self, signal: i64, as_kill: bool) -> napi::Result<bool> {
        let sig = group::check_signal(signal).map_err(to_napi)?;
        Ok(self.inner.signal(sig, as_kill))
    }

    #[napi]
    pub async fn write_stdin(&self, data: Buffer) -> napi::Result<()> {
        let bytes = bytes::Bytes::copy_from_slice(&data);
        self.inner.write_stdin(bytes).await.map_err(to_napi)
    }

    #[napi]
    pub async fn close_stdin(&self) -> napi::Result<()> {
        self.inner.close_stdin().await.map_err(to_napi)
    }

    /// The retained text of `stream` and the bytes dropped from it.
    #[napi]
    pub fn retained(&self, stream: String) -> napi::Result<NativeRetained> {
        let s = stream_arg(&stream)?;
        Ok(NativeRetained { text: self.inner.retained_text(s), dropped_bytes: self.inner.retained_dropped(s) as f64 })
    }

    /// Everything the pump has not seen yet: consecutive output of one stream merged, in pieces
    /// of at most 64 KiB (larger strings land in V8's large-object space, which only a full GC
    /// frees: a fast producer would then grow the heap by gigabytes).
    #[napi]
    pub fn pump_drain(&self) -> NativePumpBatch {
        const PIECE: usize = 64 * 1024;
        let read = self.inner.pump_drain();
        let mut batch = NativePumpBatch { chunks: Vec::new(), truncated: read.truncated, ended: false };
        // Pieces of at most PIECE bytes: slices of one event where possible (no copy), small
        // neighbours of one stream merged.
        let mut run: Option<(u8, BytesMut)> = None;
        let flush = |run: &mut Option<(u8, BytesMut)>, chunks: &mut Vec<NativeChunk>| {
            if let Some((k, buf)) = run.take() {
                chunks.push(NativeChunk { stream: k, data: JsBytes(buf.freeze()) });
            }
        };
        for e in read.events {
            let EventBody::Output(s, b) = e.body else {
                batch.ended = true;
                continue;
            };
            let k = if s == Stream::Stdout { 0 } else { 1 };
            let mut rest: Bytes = b;
            while !rest.is_empty() {
                let merge = matches!(&run, Some((rk, buf)) if *rk == k && buf.len() + rest.len().min(PIECE) <= PIECE);
                if merge {
                    let (_, buf) = run.as_mut().expect("checked");
                    let take = (PIECE - buf.len()).min(rest.len());
                    buf.extend_from_slice(&rest.split_to(take));
                    continue;
                }
                flush(&mut run, &mut batch.chunks);
                if rest.len() >= PIECE / 2 {
                    let piece = rest.split_to(PIECE.min(rest.len()));
                    batch.chunks.push(NativeChunk { stream: k, data: JsBytes(piece) });
                } else {
                    let mut buf = BytesMut::with_capacity(PIECE);
                    buf.extend_from_slice(&rest.split_to(rest.len()));
                    run = Some((k, buf));
                }
            }
        }
        flush(&mut run, &mut batch.chunks);
        batch
    }

    /// Holds the producer back for a byte-stream reader that has consumed everything up to
    /// sequence number `seq`; `null` releases the hold.
    #[napi]
    pub fn set_reader_hold(&self, seq: Option<f64>) -> napi::Result<()> {
        let seq = match seq {
            Some(v) => Some(seq_arg("seq", v)?),
            None => None,
        };
        self.inner.set_reader_hold(seq);
        Ok(())
    }

    /// Removes the pump (the child is no longer slowed down for it).
    #[napi]
    pub fn clear_pump(&self) {
        self.inner.clear_pump();
    }

    /// Log events after sequence number `after`, up to about `maxBytes` of output. With
    /// `waitMs`, waits up to that long for at least one event while the log is open.
    #[napi]
    pub async fn read_log(&self, after: f64, max_bytes: f64, wait_ms: Option<f64>) -> napi::Result<NativeLogRead> {
        let wait = limit(wait_ms)?;
        let after = seq_arg("after", after)?;
        let max = seq_arg("maxBytes", max_bytes.floor().max(1.0))? as usize;
        if after > self.inner.last_seq() {
            return Err(invalid("after", "is past the end of the log"));
        }
        let read = self.inner.read_log(after, max, wait).await;
        let id = self.inner.id.clone();
        let last = self.inner.last_seq();
        let closed = self.inner.state().done() && read.next >= last;
        Ok(NativeLogRead {
            truncated: read.truncated,
            next: read.next as f64,
            closed,
            events: read.events.into_iter().map(|e| to_event(&id, e)).collect(),
        })
    }

    /// The cursor of the event with sequence number `seq` (0 = before the first event).
    #[napi]
    pub fn cursor_at(&self, seq: f64) -> napi::Result<String> {
        Ok(cursor::encode(&self.inner.id, seq_arg("seq", seq)?))
    }

    /// Validates a cursor of this process and returns its sequence number.
    #[napi]
    pub fn parse_cursor(&self, cursor: String) -> napi::Result<f64> {
        cursor::decode(&cursor, &self.inner.id, self.inner.last_seq()).map(|s| s as f64).map_err(to_napi)
    }

    /// The newest sequence number in the log (0 when empty).
    #[napi]
    pub fn last_seq(&self) -> f64 {
        self.inner.last_seq() as f64
    }

    /// The bounded log has dropped events (so a full-history read is incomplete).
    #[napi]
    pub fn log_evicted_any(&self) -> bool {
        self.inner.log_evicted_any()
    }
}
