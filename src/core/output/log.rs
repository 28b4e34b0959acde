//! The output log: one append-only, sequenced list of events per process (stdout and stderr chunks
//! as bytes, closed by one terminal event), bounded by bytes and by count, evicting whole events
//! oldest first. It is the single store behind every byte view: `logs()`, `output()`, `reader`,
//! `waitForLog()` and the listener pump. Readers hold only a sequence number, so a slow or vanished
//! reader never holds memory or blocks the writer; one that fell behind learns it by `truncated`.

use crate::core::exit::ExitInfo;
use bytes::Bytes;
use std::collections::VecDeque;

/// The default bounds: 1 MiB and 10,000 events per process, as the container sandboxes' Processes API keeps.
pub const DEFAULT_MAX_BYTES: usize = 1024 * 1024;
pub const DEFAULT_MAX_EVENTS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    /// The stream JS names 'stdout' or 'stderr'.
    pub fn from_name(name: &str) -> Option<Stream> {
        match name {
            "stdout" => Some(Stream::Stdout),
            "stderr" => Some(Stream::Stderr),
            _ => None,
        }
    }

    /// Its place in the per-stream arrays, and its number for the listeners' chunks: 0 for
    /// stdout, 1 for stderr.
    pub fn index(self) -> usize {
        match self {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventBody {
    Output(Stream, Bytes),
    Exited(ExitInfo),
    /// A service's run ended as `exit` and restart number `attempt` follows (after its backoff).
    Restart {
        attempt: u32,
        exit: ExitInfo,
    },
    /// A probe's verdict changed: a run became ready (`ok`) or stopped being ready, or its
    /// liveness failed (which ends the run). `reason` says what the last check saw.
    Probe {
        kind: ProbeKind,
        ok: bool,
        reason: String,
    },
}

/// Which probe a `Probe` event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    Readiness,
    Liveness,
}

impl ProbeKind {
    /// The name JS reads, as the option is named.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Readiness => "readiness",
            ProbeKind::Liveness => "liveness",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEvent {
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    pub body: EventBody,
    /// Output bytes appended to the log up to and including this event.
    pub end_offset: u64,
}

impl LogEvent {
    fn weight(&self) -> usize {
        match &self.body {
            EventBody::Output(_, b) => b.len(),
            _ => 0,
        }
    }
}

/// What a read returns: events strictly after the position asked for, or a note that the position
/// was evicted (then the events start at the oldest retained one).
#[derive(Debug, Default)]
pub struct LogRead {
    pub truncated: bool,
    pub events: Vec<LogEvent>,
    /// The position to read after next time.
    pub next: u64,
}

#[derive(Debug)]
pub struct OutputLog {
    events: VecDeque<LogEvent>,
    next_seq: u64,
    bytes: usize,
    max_bytes: usize,
    max_events: usize,
    evicted: u64,
    evicted_bytes: u64,
    total_bytes: u64,
    closed: bool,
}

#[cfg(test)]
impl Default for OutputLog {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_BYTES, DEFAULT_MAX_EVENTS)
    }
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl OutputLog {
    pub fn new(max_bytes: usize, max_events: usize) -> Self {
        Self {
            events: VecDeque::new(),
            next_seq: 1,
            bytes: 0,
            max_bytes,
            max_events: max_events.max(1),
            evicted: 0,
            evicted_bytes: 0,
            total_bytes: 0,
            closed: false,
        }
    }

    /// Appends an event and returns its sequence number (1, 2, …). Nothing is appended after the
    /// terminal event.
    pub fn append(&mut self, body: EventBody) -> Option<u64> {
        if self.closed {
            return None;
        }
        if matches!(body, EventBody::Exited(..)) {
            self.closed = true;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut ev = LogEvent { seq, at_ms: now_ms(), body, end_offset: 0 };
        self.total_bytes += ev.weight() as u64;
        ev.end_offset = self.total_bytes;
        self.bytes += ev.weight();
        self.events.push_back(ev);
        self.evict();
        Some(seq)
    }

    fn evict(&mut self) {
        // The newest event always stays, so a terminal event is never lost.
        while self.events.len() > 1 && (self.bytes > self.max_bytes || self.events.len() > self.max_events) {
            if let Some(old) = self.events.pop_front() {
                self.bytes -= old.weight();
                self.evicted += 1;
                self.evicted_bytes += old.weight() as u64;
            }
        }
    }

    /// The sequence number of the newest event, 0 when empty.
    pub fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }

    /// The event appended last: never evicted, so it is the one `append` just added.
    pub fn newest(&self) -> Option<&LogEvent> {
        self.events.back()
    }

    pub fn first_retained_seq(&self) -> u64 {
        self.events.front().map(|e| e.seq).unwrap_or(self.next_seq)
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub fn evicted_any(&self) -> bool {
        self.evicted > 0
    }

    pub fn evicted_bytes(&self) -> u64 {
        self.evicted_bytes
    }

    /// Output bytes appended after the event `seq` (all of them for 0; for an evicted position,
    /// everything appended since the oldest retained event and more: the reader lost it anyway).
    pub fn bytes_after(&self, seq: u64) -> u64 {
        let first = self.first_retained_seq();
        if seq == 0 || seq < first {
            return self.total_bytes;
        }
        match self.events.get((seq - first) as usize) {
            Some(e) => self.total_bytes - e.end_offset,
            None => 0,
        }
    }

    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    pub fn max_events(&self) -> usize {
        self.max_events
    }

    pub fn retained_bytes(&self) -> usize {
        self.bytes
    }

    /// The last `max_bytes` (at most) of `stream` still in the log, as text. A tail cut inside a
    /// character starts after it, so it never opens with a replacement character it did not have.
    pub fn tail(&self, stream: Stream, max_bytes: usize) -> String {
        let mut chunks = Vec::new();
        let mut len = 0;
        for ev in self.events.iter().rev() {
            if len >= max_bytes {
                break;
            }
            if let EventBody::Output(s, b) = &ev.body {
                if *s == stream {
                    len += b.len();
                    chunks.push(b);
                }
            }
        }
        let mut bytes = Vec::with_capacity(len);
        for b in chunks.iter().rev() {
            bytes.extend_from_slice(b);
        }
        let mut start = len.saturating_sub(max_bytes);
        if start > 0 {
            // Continuation bytes (10xxxxxx) of a character whose lead byte was cut off.
            let end = (start + 3).min(bytes.len());
            while start < end && bytes[start] & 0xC0 == 0x80 {
                start += 1;
            }
        }
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    /// Events strictly after `after`, at most about `max_bytes` of output (always at least one
    /// event when there is one). `after` must be ≤ `last_seq()` (cursors are validated before).
    pub fn read_after(&self, after: u64, max_bytes: usize) -> LogRead {
        let first = self.first_retained_seq();
        let mut out = LogRead { truncated: false, events: Vec::new(), next: after };
        let mut from = after + 1;
        if from < first {
            out.truncated = true;
            from = first;
            out.next = first - 1;
        }
        let start = (from - first) as usize;
        let mut taken = 0usize;
        for ev in self.events.iter().skip(start) {
            if !out.events.is_empty() && taken + ev.weight() > max_bytes {
                break;
            }
            taken += ev.weight();
            out.next = ev.seq;
            out.events.push(ev.clone());
        }
        out
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
