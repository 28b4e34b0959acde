//! A process's output as JS reads it: the retained text (Mastra), the listener pump's decoded
//! chunks, the byte-stream reader's takes, and the log with its cursors (Processes API).

use super::{wake_fn, NativeExit, NativeProcess, WakeFn};
use crate::binding::bytes::{JsBytes, JsChunks, JsText};
use crate::binding::checks::{limit, seq_arg};
use crate::binding::error::{invalid, js_error};
use crate::binding::loop_reader;
use crate::binding::settle::{self, promise};
use crate::core::error::{CoreError, CoreResult};
use crate::core::output::cursor;
use crate::core::output::log::{EventBody, LogEvent, Stream};
use crate::core::output::text::TextChunk;
use crate::core::supervise::process::Process;
use crate::core::supervise::state::State;
use napi::bindgen_prelude::{sys, Function, PromiseRaw, ToNapiValue};
use napi::threadsafe_function::ThreadsafeCallContext;
use napi::Env;
use napi_derive::napi;
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
    #[napi(ts_type = "number")]
    pub stream: Stream,
    #[napi(ts_type = "string")]
    pub text: JsText,
}

/// One log event as the Processes API needs it.
#[napi(object, object_from_js = false)]
pub struct NativeLogEvent {
    pub seq: f64,
    /// "stdout" | "stderr" | "restart" | "probe" | "exited"
    #[napi(ts_type = "string")]
    pub kind: EventKind,
    pub at_ms: f64,
    pub cursor: String,
    pub data: Option<JsBytes>,
    /// The ended run's exit (a `restart`), or the process's (`exited`).
    pub exit: Option<NativeExit>,
    /// The restart's number, for a `restart` (1 for the first).
    pub attempt: Option<u32>,
    /// Which probe a `probe` event is about: "readiness" | "liveness".
    pub probe: Option<&'static str>,
    /// A `probe` event's verdict: it passed (ready) or failed its threshold.
    pub ok: Option<bool>,
    /// What a `probe` event's last check saw.
    pub reason: Option<String>,
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
    Stream::from_name(s).ok_or_else(|| invalid(env, "stream", "must be 'stdout' or 'stderr'"))
}

/// A stream for JS, as the listeners' chunks name it: its number.
impl ToNapiValue for Stream {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: forwarded to napi's own conversion of a number, with the same environment.
        unsafe { u32::to_napi_value(env, val.index() as u32) }
    }
}

/// What a log event is: output of one stream, or the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Output(Stream),
    Restart,
    Probe,
    Exited,
}

impl EventKind {
    /// The name JS reads in `kind`.
    fn name(self) -> &'static str {
        match self {
            EventKind::Output(s) => s.as_str(),
            EventKind::Restart => "restart",
            EventKind::Probe => "probe",
            EventKind::Exited => "exited",
        }
    }
}

impl ToNapiValue for EventKind {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: forwarded to napi's own conversion of a string, with the same environment.
        unsafe { <&str>::to_napi_value(env, val.name()) }
    }
}

pub(crate) fn to_event(id: &str, e: LogEvent) -> NativeLogEvent {
    let mut event = NativeLogEvent {
        seq: e.seq as f64,
        kind: EventKind::Exited,
        at_ms: e.at_ms as f64,
        cursor: cursor::encode(id, e.seq),
        data: None,
        exit: None,
        attempt: None,
        probe: None,
        ok: None,
        reason: None,
    };
    match e.body {
        EventBody::Output(s, b) => (event.kind, event.data) = (EventKind::Output(s), Some(JsBytes(b))),
        EventBody::Restart { attempt, exit } => {
            (event.kind, event.exit, event.attempt) = (EventKind::Restart, Some(exit.into()), Some(attempt))
        }
        EventBody::Probe { kind, ok, reason } => {
            event.kind = EventKind::Probe;
            (event.probe, event.ok, event.reason) = (Some(kind.as_str()), Some(ok), Some(reason));
        }
        EventBody::Exited(x) => event.exit = Some(x.into()),
    }
    event
}

pub(crate) fn chunks_to_js(chunks: Vec<TextChunk>) -> Vec<NativeChunk> {
    // Pieces of at most PIECE bytes: larger strings land in V8's large-object space, which only
    // a full GC frees, so a fast producer would grow the heap by gigabytes. Large texts are cut
    // into pieces that share their bytes; small ones (a line here, a line there) are gathered
    // into one piece, so that a chatty child does not cost a JS call per line.
    const PIECE: usize = 64 * 1024;
    let mut out: Vec<NativeChunk> = Vec::new();
    for c in chunks {
        let all = c.text.as_str();
        let mut at = 0;
        while at < all.len() {
            let rest = &all[at..];
            if let Some(last) = out.last_mut().filter(|l| l.stream == c.stream) {
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
            out.push(NativeChunk { stream: c.stream, text });
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
        loop_reader::serve(env, &self.inner);
        chunks
    }

    /// The rest of the output for the listeners, with any incomplete character flushed; the
    /// pump is removed (the output is complete, or nobody listens any more).
    #[napi]
    pub fn pump_finish(&self) -> Vec<NativeChunk> {
        let chunks = chunks_to_js(self.inner.output.pump_drain(true).0);
        // A reader of the same process may still read the lent pipe here.
        if !self.inner.output.can_lend() {
            loop_reader::release(&self.inner);
        }
        chunks
    }

    /// Holds the producer back for a byte-stream reader that has consumed everything up to
    /// sequence number `seq`; `null` releases the hold.
    #[napi]
    pub fn set_reader_hold(&self, env: &Env, seq: Option<f64>) -> napi::Result<()> {
        let seq = seq.map(|v| seq_arg("seq", v)).transpose().map_err(|e| js_error(env, e))?;
        self.inner.output.set_reader_position(seq);
        loop_reader::serve(env, &self.inner);
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
            loop_reader::serve(env, &self.inner);
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
                loop_reader::release(&self.inner);
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
                    loop_reader::serve(&ctx.env, &p);
                }
                Ok(())
            },
        )?;
        let wake: WakeFn = tsfn;
        self.inner.output.set_reader_wake(Some(wake_fn(wake)));
        if loop_reader::available() {
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
}
