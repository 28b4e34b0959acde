//! The take of both output streams at once, for a persistent sandbox's supervisor: it sends each
//! client the process's output from the process's own log, as a byte-stream reader takes stdout.

use super::output::{log_range, to_event};
use super::{NativeLogRead, NativeProcess};
use crate::binding::bytes::JsChunks;
use crate::binding::checks::seq_arg;
use crate::binding::error::js_error;
use crate::core::output::log::{EventBody, Stream};
use bytes::Bytes;
use napi::Env;
use napi_derive::napi;

/// Output of one stream: consecutive events of that stream, joined.
#[napi(object, object_from_js = false)]
pub struct NativeOutputRun {
    /// 0 = stdout, 1 = stderr.
    pub stream: u32,
    #[napi(ts_type = "Buffer")]
    pub data: JsChunks,
}

/// What `takeOutput` takes at once.
#[napi(object, object_from_js = false)]
pub struct NativeOutputTake {
    /// Events after the position asked for were evicted: the runs start at the oldest kept.
    pub truncated: bool,
    /// The output taken, in order, one run per change of stream.
    pub runs: Vec<NativeOutputRun>,
    /// The sequence number to take after next time.
    pub next: f64,
    /// The process had finished before this take: with nothing taken, the output up to its
    /// Mastra end is complete.
    pub finished: bool,
}

#[napi]
impl NativeProcess {
    /// The output of both streams after sequence number `after` and up to `until` (when given),
    /// about `maxBytes` of it, taken now on the JS thread. Like `takeStdout`, it answers the
    /// reader's wake-up (`setReaderWake`): output appended after this take wakes it again.
    #[napi]
    pub fn take_output(
        &self,
        env: &Env,
        after: f64,
        max_bytes: f64,
        until: Option<f64>,
    ) -> napi::Result<NativeOutputTake> {
        let (after, max) = log_range(&self.inner, after, max_bytes).map_err(|e| js_error(env, e))?;
        let until = until.map(|u| seq_arg("until", u)).transpose().map_err(|e| js_error(env, e))?;
        let finished = self.inner.state().is_finished();
        let read = self.inner.output.reader_take(after, max);
        let mut next = read.next;
        let mut runs: Vec<(Stream, Vec<Bytes>)> = Vec::new();
        for e in read.events {
            if until.is_some_and(|u| e.seq > u) {
                next = until.unwrap_or(next).max(after);
                break;
            }
            let EventBody::Output(stream, b) = e.body else { continue };
            if b.is_empty() {
                continue;
            }
            match runs.last_mut() {
                Some((s, chunks)) if *s == stream => chunks.push(b),
                _ => runs.push((stream, vec![b])),
            }
        }
        let took_nothing = next == after;
        self.hold_for_reader(env, took_nothing && !read.truncated && !finished)?;
        if took_nothing {
            // A pipe offered to the reader (see `take_stdout`).
            crate::binding::loop_reader::serve(env, &self.inner);
        }
        Ok(NativeOutputTake {
            truncated: read.truncated,
            runs: runs
                .into_iter()
                .map(|(s, chunks)| NativeOutputRun {
                    stream: if s == Stream::Stdout { 0 } else { 1 },
                    data: JsChunks(chunks),
                })
                .collect(),
            next: next as f64,
            finished,
        })
    }

    /// Log events after sequence number `after`, up to about `maxBytes` of output, read now on
    /// the JS thread (`readLog` without its wait). It answers the reader's wake-up as
    /// `takeOutput` does, so a `logs()` stream a supervisor pushes learns of new output by it.
    #[napi]
    pub fn read_log_now(&self, env: &Env, after: f64, max_bytes: f64) -> napi::Result<NativeLogRead> {
        let (after, max) = log_range(&self.inner, after, max_bytes).map_err(|e| js_error(env, e))?;
        let read = self.inner.output.reader_take(after, max);
        let closed = self.inner.state().is_done() && read.next >= self.inner.last_seq();
        let events = read.events.into_iter().map(|e| to_event(&self.inner.id, e)).collect();
        Ok(NativeLogRead { truncated: read.truncated, next: read.next as f64, closed, events })
    }

    /// Offers this process's output in shared memory to one client of a persistent sandbox's
    /// supervisor (see `startSharedOutputServer`); null when it goes as bytes.
    #[napi]
    pub fn share_output(&self) -> Option<crate::binding::shared_output::NativeShareOffer> {
        crate::binding::shared_output::offer(&self.inner)
    }

    /// Holds the producer back for the slowest client that reads this process's output from
    /// shared memory, which has read up to sequence number `seq`, by the ring's lag rule (half
    /// the ring unread); `null` releases the hold.
    #[napi]
    pub fn set_ring_hold(&self, env: &Env, seq: Option<f64>) -> napi::Result<()> {
        let seq = seq.map(|v| seq_arg("seq", v)).transpose().map_err(|e| js_error(env, e))?;
        self.inner.output.set_ring_position(seq);
        crate::binding::loop_reader::serve(env, &self.inner);
        Ok(())
    }

    /// Stops writing this process's output to shared memory: no client reads it any more.
    #[napi]
    pub fn unshare_output(&self) {
        self.inner.output.unshare();
    }

    /// The newest sequence number, answering the reader's wake-up as a take does without taking
    /// anything: the clients of a supervisor that read the output from shared memory are woken
    /// again by what is appended after this call.
    #[napi]
    pub fn reader_seen(&self, env: &Env) -> f64 {
        let seq = self.inner.output.reader_seen();
        crate::binding::loop_reader::serve(env, &self.inner);
        seq as f64
    }
}
