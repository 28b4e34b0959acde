//! The output log: one append-only, sequenced list of events per process (stdout and stderr chunks
//! as bytes, closed by one terminal event), bounded by bytes and by count, evicting whole events
//! oldest first. It is the single store behind every byte view: `logs()`, `output()`, `reader`,
//! `waitForLog()` and the listener pump. Readers hold only a sequence number, so a slow or vanished
//! reader never holds memory or blocks the writer; one that fell behind learns it by `truncated`.

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
}

/// How a process ended, as seen on its root (the outcome of the group is the root's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// The exit code, or 128 + signal when the root died by a signal.
    pub code: i32,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// A kill was requested through the manager before the root exited.
    pub killed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventBody {
    Output(Stream, Bytes),
    Exited(ExitInfo),
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
        if !matches!(body, EventBody::Output(..)) {
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
mod tests {
    use super::*;

    fn out(s: &str) -> EventBody {
        EventBody::Output(Stream::Stdout, Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn sequence_numbers_start_at_one_and_reads_are_strictly_after() {
        let mut log = OutputLog::default();
        assert_eq!(log.append(out("a")), Some(1));
        assert_eq!(log.append(out("b")), Some(2));
        let r = log.read_after(1, usize::MAX);
        assert_eq!(r.events.len(), 1);
        assert_eq!(r.events[0].seq, 2);
        assert_eq!(r.next, 2);
        assert!(!r.truncated);
    }

    #[test]
    fn evicts_whole_events_oldest_first_and_reports_truncation() {
        let mut log = OutputLog::new(10, 100);
        for _ in 0..5 {
            log.append(out("abcd"));
        }
        assert_eq!(log.retained_bytes(), 8);
        assert_eq!(log.first_retained_seq(), 4);
        let r = log.read_after(0, usize::MAX);
        assert!(r.truncated);
        assert_eq!(r.events.first().map(|e| e.seq), Some(4));
        let r = log.read_after(3, usize::MAX);
        assert!(!r.truncated, "position 3 is just before the oldest retained event");
    }

    #[test]
    fn count_bound_applies() {
        let mut log = OutputLog::new(usize::MAX, 3);
        for _ in 0..10 {
            log.append(out("x"));
        }
        assert_eq!(log.first_retained_seq(), 8);
    }

    #[test]
    fn tail_is_the_end_of_one_stream_and_starts_on_a_character() {
        let mut log = OutputLog::default();
        log.append(EventBody::Output(Stream::Stderr, Bytes::from_static(b"first ")));
        log.append(out("not stderr"));
        log.append(EventBody::Output(Stream::Stderr, Bytes::from("é-last".as_bytes().to_vec())));
        assert_eq!(log.tail(Stream::Stderr, 1024), "first é-last");
        // 6 bytes back is the second byte of "é": the tail starts after it.
        assert_eq!(log.tail(Stream::Stderr, 6), "-last");
        assert_eq!(log.tail(Stream::Stderr, 8), " é-last");
        assert_eq!(log.tail(Stream::Stderr, 10), "st é-last");
        assert_eq!(log.tail(Stream::Stdout, 3), "err");
        assert_eq!(OutputLog::default().tail(Stream::Stderr, 10), "");
    }

    #[test]
    fn nothing_after_terminal_event() {
        let mut log = OutputLog::default();
        log.append(out("x"));
        assert!(log.append(EventBody::Exited(ExitInfo::default())).is_some());
        assert!(log.append(out("late")).is_none());
        assert!(log.is_closed());
    }

    #[test]
    fn terminal_event_survives_a_tiny_bound() {
        let mut log = OutputLog::new(0, 1);
        log.append(out("abc"));
        log.append(EventBody::Exited(ExitInfo::default()));
        let r = log.read_after(0, usize::MAX);
        assert!(matches!(r.events[0].body, EventBody::Exited(_)));
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn body_of(stream: bool, len: usize, seq: u64) -> EventBody {
            // Bytes that name their sequence number, so a mixed-up event cannot pass for another.
            let data: Vec<u8> = (0..len).map(|i| (seq as usize * 31 + i) as u8).collect();
            EventBody::Output(if stream { Stream::Stdout } else { Stream::Stderr }, Bytes::from(data))
        }

        fn build(
            chunks: &[(bool, usize)],
            terminal: bool,
            max_bytes: usize,
            max_events: usize,
        ) -> (OutputLog, Vec<EventBody>) {
            let mut log = OutputLog::new(max_bytes, max_events);
            let mut appended = Vec::new();
            for (i, &(stream, len)) in chunks.iter().enumerate() {
                let body = body_of(stream, len, i as u64 + 1);
                assert_eq!(log.append(body.clone()), Some(i as u64 + 1));
                appended.push(body);
            }
            if terminal {
                let body = EventBody::Exited(ExitInfo { code: 3, ..Default::default() });
                assert!(log.append(body.clone()).is_some());
                appended.push(body);
            }
            (log, appended)
        }

        fn weight(b: &EventBody) -> u64 {
            match b {
                EventBody::Output(_, d) => d.len() as u64,
                _ => 0,
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn dropped_and_kept_bytes_add_up_and_the_bounds_hold(
                chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 0..60),
                terminal in any::<bool>(),
                max_bytes in 0usize..300,
                max_events in 0usize..30,
            ) {
                let (log, appended) = build(&chunks, terminal, max_bytes, max_events);
                let total: u64 = appended.iter().map(weight).sum();
                prop_assert_eq!(log.retained_bytes() as u64 + log.evicted_bytes(), total);
                prop_assert_eq!(log.last_seq(), appended.len() as u64);
                let all = log.read_after(log.first_retained_seq().saturating_sub(1), usize::MAX);
                let kept: u64 = all.events.iter().map(|e| weight(&e.body)).sum();
                prop_assert_eq!(kept, log.retained_bytes() as u64);
                if !appended.is_empty() {
                    // The newest event always stays (a terminal event is never lost); beyond it the bounds hold.
                    prop_assert_eq!(all.events.last().map(|e| e.seq), Some(log.last_seq()));
                    prop_assert!(all.events.len() <= max_events.max(1));
                    prop_assert!(all.events.len() == 1 || log.retained_bytes() <= max_bytes);
                }
                prop_assert_eq!(log.evicted_any(), log.first_retained_seq() > 1);
                prop_assert_eq!(log.is_closed(), terminal);
                // Whatever is kept is what was appended, under its own sequence number.
                for e in &all.events {
                    prop_assert_eq!(&e.body, &appended[e.seq as usize - 1]);
                }
            }

            #[test]
            fn reads_from_any_position_are_contiguous_ordered_and_truncated_exactly_when_evicted(
                chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 0..60),
                terminal in any::<bool>(),
                max_bytes in 0usize..300,
                max_events in 0usize..30,
                read_bytes in 0usize..200,
            ) {
                let (log, _) = build(&chunks, terminal, max_bytes, max_events);
                let first = log.first_retained_seq();
                for pos in 0..=log.last_seq() {
                    let r = log.read_after(pos, read_bytes);
                    prop_assert_eq!(r.truncated, pos + 1 < first, "position {} with oldest {}", pos, first);
                    let start = if r.truncated { first } else { pos + 1 };
                    if start <= log.last_seq() {
                        prop_assert!(!r.events.is_empty(), "at least one event when there is one");
                    }
                    for (i, e) in r.events.iter().enumerate() {
                        prop_assert_eq!(e.seq, start + i as u64);
                    }
                    let taken: usize = r.events.iter().skip(1).map(|e| weight(&e.body) as usize).sum();
                    prop_assert!(r.events.len() <= 1 || taken + weight(&r.events[0].body) as usize <= read_bytes);
                    prop_assert_eq!(r.next, r.events.last().map(|e| e.seq).unwrap_or(if r.truncated { first - 1 } else { pos }));
                }
            }

            #[test]
            fn reading_in_small_steps_sees_every_retained_event_once(
                chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 1..60),
                max_bytes in 0usize..300,
                max_events in 1usize..30,
                read_bytes in 0usize..100,
            ) {
                let (log, _) = build(&chunks, true, max_bytes, max_events);
                let mut pos = 0;
                let mut seen = Vec::new();
                let mut truncations = 0;
                loop {
                    let r = log.read_after(pos, read_bytes);
                    truncations += r.truncated as u32;
                    if r.events.is_empty() {
                        break;
                    }
                    seen.extend(r.events.iter().map(|e| e.seq));
                    pos = r.next;
                }
                prop_assert!(truncations <= 1);
                let expected: Vec<u64> = (log.first_retained_seq()..=log.last_seq()).collect();
                prop_assert_eq!(seen, expected);
            }

            #[test]
            fn nothing_is_appended_after_the_terminal_event(
                chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 0..20),
                late in proptest::collection::vec(0usize..64, 1..5),
            ) {
                let (mut log, _) = build(&chunks, true, 100, 10);
                let (last, retained, evicted) = (log.last_seq(), log.retained_bytes(), log.evicted_bytes());
                for len in late {
                    prop_assert_eq!(log.append(body_of(true, len, 0)), None);
                    prop_assert_eq!(log.append(EventBody::Exited(ExitInfo::default())), None);
                }
                prop_assert_eq!((log.last_seq(), log.retained_bytes(), log.evicted_bytes()), (last, retained, evicted));
            }
        }
    }
}
