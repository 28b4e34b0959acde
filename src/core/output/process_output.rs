//! The output side of one process: the bounded log (the single store of every byte view), the
//! retained text of each stream (the Mastra view), the screen of a process on a terminal, and the
//! consumers that must lose nothing (`consumers`, served by `delivery`).
//!
//! Every byte is decoded once: with a listener pump installed the text is decoded as the pump
//! takes it, and that one string both goes to the listeners and is retained (as Mastra retains
//! what it hands its listeners); without one it is decoded as it arrives, and only when some text
//! is retained at all (a stream that keeps none counts its raw bytes as dropped).

use crate::core::output::block::{self, ReadBuf};
use crate::core::output::consumers::Consumers;
use crate::core::output::decoder::Utf8Decoder;
use crate::core::output::disk::{DiskLog, LogFiles};
use crate::core::output::log::{EventBody, LogRead, OutputLog, Stream};
use crate::core::output::retained::RetainedText;
use crate::core::output::shared::{capacity_for, RingWriter, RING_MIN_BYTES};
use crate::core::terminal::screen::{Screen, Snapshot};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

pub(super) struct Texts {
    pub(super) log: OutputLog,
    pub(super) retained: [RetainedText; 2],
    pub(super) decoders: [Utf8Decoder; 2],
    /// Whether any text is retained (Processes API processes retain none, and skip decoding).
    pub(super) retain: bool,
    /// The output also written to shared memory, once a supervisor's client asked (`share`).
    pub(super) ring: Option<RingWriter>,
}

pub struct Output {
    pub(super) texts: Mutex<Texts>,
    /// The screen of a process on a terminal, fed with its output as it arrives.
    pub(super) screen: Option<Mutex<Screen>>,
    pub(super) consumers: Mutex<Consumers>,
    pub(super) seq: watch::Sender<u64>,
    pub(super) progress: Notify,
    /// The log's files, when the manager has a log directory.
    pub(super) disk: Option<Arc<DiskLog>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Output {
    /// `screen`: the terminal's size `(cols, rows)`, for a process on one.
    pub fn new(
        log_max_bytes: usize,
        log_max_events: usize,
        retain_bytes: Option<usize>,
        screen: Option<(u16, u16)>,
    ) -> Self {
        Self {
            screen: screen.map(|(cols, rows)| Mutex::new(Screen::new(cols, rows))),
            texts: Mutex::new(Texts {
                log: OutputLog::new(log_max_bytes, log_max_events),
                retained: [RetainedText::new(retain_bytes), RetainedText::new(retain_bytes)],
                decoders: [Utf8Decoder::new(), Utf8Decoder::new()],
                retain: retain_bytes != Some(0),
                ring: None,
            }),
            consumers: Mutex::new(Consumers::default()),
            seq: watch::channel(0).0,
            progress: Notify::new(),
            disk: None,
        }
    }

    /// Also writes every event to files in `files.directory`, named after process `id`.
    pub fn with_disk(mut self, files: Option<&LogFiles>, id: &str) -> Self {
        self.disk = files.map(|f| DiskLog::new(f.clone(), id));
        self
    }

    /// The log's files, when it has some.
    pub fn disk(&self) -> Option<&Arc<DiskLog>> {
        self.disk.as_ref()
    }

    /// Hands the event just appended to the disk writer, under the log's lock so that the files
    /// keep the log's order.
    fn to_disk(&self, t: &Texts) {
        if let (Some(disk), Some(ev)) = (&self.disk, t.log.newest()) {
            disk.push(ev);
        }
    }

    pub(super) fn texts(&self) -> MutexGuard<'_, Texts> {
        lock(&self.texts)
    }

    /// Appends one read of `stream`.
    pub fn push(&self, stream: Stream, data: &[u8]) {
        self.append(stream, block::chunk(data));
    }

    /// Appends one read of `stream` made into `buf`'s first `n` bytes: a large read becomes the
    /// log's chunk as it is (`buf` gets a fresh block), a small one is copied.
    pub fn push_read(&self, stream: Stream, buf: &mut ReadBuf, n: usize) {
        self.append(stream, buf.take(n));
    }

    fn append(&self, stream: Stream, chunk: bytes::Bytes) {
        let data = &chunk[..];
        if let Some(screen) = &self.screen {
            lock(screen).feed(data);
        }
        let seq = {
            let mut t = self.texts();
            // Asked under the texts lock, as `set_pump` sets it: no event is decoded by both.
            let i = stream.index();
            if !t.retain {
                t.retained[i].drop_bytes(data.len());
            } else if !lock(&self.consumers).has_pump() {
                let Texts { decoders, retained, .. } = &mut *t;
                let text = decoders[i].decode(data);
                retained[i].push(&text);
            }
            let seq = t.log.append(EventBody::Output(stream, chunk.clone()));
            if let Some(seq) = seq {
                self.to_disk(&t);
                let at_ms = t.log.newest().map_or(0, |e| e.at_ms);
                if let Some(ring) = &mut t.ring {
                    ring.append(seq, at_ms, stream.index() as u32, data);
                }
            }
            seq
        };
        if let Some(seq) = seq {
            self.seq.send_replace(seq);
            self.wake();
        }
    }

    /// The end of `stream`: an incomplete character left in its decoder becomes U+FFFD. With a
    /// pump installed the pump flushes it when it finishes.
    pub fn end_stream(&self, stream: Stream) {
        let mut t = self.texts();
        if lock(&self.consumers).has_pump() {
            return;
        }
        let i = stream.index();
        let rest = t.decoders[i].finish();
        if !rest.is_empty() {
            t.retained[i].push(&rest);
        }
    }

    /// Appends the terminal event; nothing is appended after it.
    pub fn close(&self, body: EventBody) {
        self.note(body);
    }

    /// Appends an event that is not output (a service's restart, or the terminal event).
    pub fn note(&self, body: EventBody) {
        let seq = {
            let mut t = self.texts();
            // Encoded for the ring only while there is one (a client reads it).
            let note = t.ring.as_ref().and_then(|_| super::disk_frame::note(&body));
            let seq = t.log.append(body);
            if let Some(seq) = seq {
                self.to_disk(&t);
                // The ring mirrors the whole log from its first record on: a `logs()` stream read
                // from it gets a service's restarts and probes, and the end, in their place.
                let at_ms = t.log.newest().map_or(0, |e| e.at_ms);
                if let (Some(ring), Some((kind, payload))) = (&mut t.ring, note) {
                    ring.append(seq, at_ms, kind, &payload);
                }
            }
            seq
        };
        if let Some(seq) = seq {
            self.seq.send_replace(seq);
            self.wake();
        }
    }

    /// Wakes the consumers that read on their own thread: there is new output, an offered pipe,
    /// or (for the reader) the end of the process's output.
    pub(crate) fn wake(&self) {
        let (pump, reader) = {
            let c = lock(&self.consumers);
            (c.wake.clone(), c.reader_wake.clone())
        };
        if let Some(w) = pump {
            w.call();
        }
        if let Some(w) = reader {
            w.call();
        }
    }

    /// What the terminal shows now; `None` for a process without one.
    pub fn snapshot(&self) -> Option<Snapshot> {
        self.screen.as_ref().map(|s| lock(s).snapshot())
    }

    pub fn has_screen(&self) -> bool {
        self.screen.is_some()
    }

    pub fn resize_screen(&self, cols: u16, rows: u16) {
        if let Some(s) = &self.screen {
            lock(s).resize(cols, rows);
        }
    }

    pub fn retained_text(&self, stream: Stream) -> String {
        self.texts().retained[stream.index()].text()
    }

    pub fn retained_dropped(&self, stream: Stream) -> u64 {
        self.texts().retained[stream.index()].dropped_bytes()
    }

    /// The newest sequence number in the log. Read from the log itself: the `seq` watch is
    /// published just after the append, outside the lock, so a reader that has just been handed
    /// event N could see N - 1 there and have its next position refused as past the end.
    pub fn last_seq(&self) -> u64 {
        self.texts().log.last_seq()
    }

    /// The log has dropped events (what a reader that fell behind learns by `truncated`).
    #[cfg(test)]
    pub fn evicted_any(&self) -> bool {
        self.texts().log.evicted_any()
    }

    /// The last `max_bytes` of `stream` still in the log, as text.
    pub fn tail(&self, stream: Stream, max_bytes: usize) -> String {
        self.texts().log.tail(stream, max_bytes)
    }

    pub fn is_closed(&self) -> bool {
        self.texts().log.is_closed()
    }

    /// The output from now on in shared memory as well: the ring's memfd (made at the first
    /// call, sized for the log's bounds) and the sequence number of its first record. A client of
    /// a persistent sandbox maps it and reads a flood without the supervisor sending it.
    pub fn share(&self) -> std::io::Result<(std::os::fd::OwnedFd, u64)> {
        let mut t = self.texts();
        if t.ring.is_none() {
            let cap = capacity_for(t.log.max_bytes().max(RING_MIN_BYTES), t.log.max_events());
            t.ring = Some(RingWriter::create(cap, t.log.last_seq() + 1)?);
        }
        let ring = t.ring.as_ref().expect("made above");
        Ok((ring.fd().try_clone_to_owned()?, ring.first_seq()))
    }

    /// No client reads the ring any more: it is no longer written, and its memory goes once the
    /// last mapping of it does. A later `share` makes a new one.
    pub fn unshare(&self) {
        self.texts().ring = None;
    }

    /// Events after `after`, waiting up to `wait` for at least one while the log is open.
    /// Returns no events when the log is closed and read through, or on timeout. A position
    /// the memory ring has evicted is read from the log's files, off the runtime's threads.
    pub async fn read(&self, after: u64, max_bytes: usize, wait: Option<Duration>) -> LogRead {
        if let Some(disk) = &self.disk {
            let first = self.texts().log.first_retained_seq();
            if after + 1 < first {
                let disk = disk.clone();
                if let Ok(Some(read)) = tokio::task::spawn_blocking(move || disk.read_after(after, max_bytes)).await {
                    // Files that keep less than the ring (small ones, or few) skip to what the
                    // ring still has, not past it.
                    if !read.truncated || read.events.first().is_some_and(|e| e.seq < first) {
                        return read;
                    }
                }
            }
        }
        let mut rx = self.seq.subscribe();
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

    pub fn read_now(&self, after: u64, max_bytes: usize) -> LogRead {
        self.texts().log.read_after(after, max_bytes)
    }

    /// Notified on every new log event.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.seq.subscribe()
    }
}
