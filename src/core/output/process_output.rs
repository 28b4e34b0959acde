//! The output side of one process: the bounded log (the single store of every byte view), the
//! retained text of each stream (the Mastra view), and the consumers that must lose nothing.
//!
//! Consumers are one list of positions in the log with one lag rule: the listener pump
//! (`onStdout`/`onStderr`) and a byte-stream reader (`handle.reader`) each hold a position, and
//! the producer waits while any of them is more than half a log behind, so they lose nothing
//! while memory stays bounded. `logs()` readers hold no position: they never slow the child and
//! learn by `truncated` when they fell behind.
//!
//! Every byte is decoded once: with a listener pump installed the text is decoded as the pump
//! takes it, and that one string both goes to the listeners and is retained (as Mastra retains
//! what it hands its listeners); without one it is decoded as it arrives, and only when some text
//! is retained at all (a stream that keeps none counts its raw bytes as dropped).

use crate::core::output::decoder::Utf8Decoder;
use crate::core::output::loan::Loan;
use crate::core::output::log::{EventBody, LogRead, OutputLog, Stream};
use crate::core::output::retained::RetainedText;
use crate::core::terminal::screen::{Screen, Snapshot};
use bytes::Bytes;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

pub use block::ReadBuf;

/// How long the drain after the group's death waits for a stalled byte-stream reader before
/// letting the log evict under it: an abandoned reader must not keep a dead process unfinished.
const READER_DRAIN_PATIENCE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumer {
    /// The listener pump: decoded text for `onStdout` / `onStderr`.
    Listeners = 0,
    /// A byte-stream reader of stdout.
    Reader = 1,
}

/// Decoded output for the listeners, one stream at a time, in order.
pub struct TextChunk {
    pub stream: Stream,
    pub text: Text,
}

/// Text as UTF-8 bytes, valid by construction. Output that was valid as read shares the log's
/// bytes: a flood of text then reaches the binding without a copy (two copies and two fresh
/// allocations per read were most of what a fast listener cost the JS thread).
#[derive(Clone)]
pub struct Text {
    bytes: Bytes,
    /// Known to be ASCII: then it is also Latin-1, which V8 copies without decoding.
    ascii: bool,
}

impl Text {
    /// `b` must be valid UTF-8 (checked by the caller's decoder).
    fn shared(b: &Bytes) -> Text {
        debug_assert!(std::str::from_utf8(b).is_ok());
        Text { bytes: b.clone(), ascii: false }
    }

    /// `b` must be ASCII (checked by the caller).
    fn ascii(b: &Bytes) -> Text {
        debug_assert!(b.is_ascii());
        Text { bytes: b.clone(), ascii: true }
    }

    pub fn as_str(&self) -> &str {
        // SAFETY: a `Text` is only made from valid UTF-8 (`shared` after validation, `ascii`
        // after its check, or a String) and only sliced at character boundaries (`slice`).
        unsafe { std::str::from_utf8_unchecked(&self.bytes) }
    }

    /// Whether every byte is known to be ASCII (false when unknown).
    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The text between two character boundaries, sharing the bytes.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Text {
        let s = self.as_str();
        assert!(s.is_char_boundary(range.start) && s.is_char_boundary(range.end), "slice inside a character");
        Text { bytes: self.bytes.slice(range), ascii: self.ascii }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { bytes: Bytes::from(s), ascii: false }
    }
}

struct Texts {
    log: OutputLog,
    retained: [RetainedText; 2],
    decoders: [Utf8Decoder; 2],
    /// Whether any text is retained (Processes API processes retain none, and skip decoding).
    retain: bool,
}

/// The pump's wake-up: called once per batch on a runtime thread; it must only schedule work.
struct Wake {
    wake: Box<dyn Fn() + Send + Sync>,
    scheduled: AtomicBool,
}

#[derive(Default)]
struct Consumers {
    positions: [Option<u64>; 2],
    wake: Option<Arc<Wake>>,
    /// The byte-stream reader's wake-up, while it reads: it takes from the log on its own thread
    /// when woken, rather than waiting for new output in a runtime task.
    reader_wake: Option<Arc<Wake>>,
    /// The consumers' side can borrow a flooding stream's pipe (see `loan`).
    lend: bool,
    /// Each stream's pipe while it is offered or lent.
    loans: [Option<Arc<Loan>>; 2],
}

impl Consumers {
    /// A consumer that reads on its own thread (the listener pump, or a reader with its wake-up)
    /// is installed there, and that side can borrow a pipe.
    fn borrows(&self) -> bool {
        let pump = self.wake.is_some() && self.positions[Consumer::Listeners as usize].is_some();
        let reader = self.reader_wake.is_some() && self.positions[Consumer::Reader as usize].is_some();
        self.lend && (pump || reader)
    }

    /// Without a borrower, an offer not taken yet goes back at once.
    fn withdraw_offers_unless_borrowed(&self) {
        if self.borrows() {
            return;
        }
        for loan in self.loans.iter().flatten() {
            if let Some(fd) = loan.take() {
                loan.give_back(fd);
            }
        }
    }
}

impl Wake {
    fn new(wake: Box<dyn Fn() + Send + Sync>) -> Arc<Wake> {
        Arc::new(Wake { wake, scheduled: AtomicBool::new(false) })
    }

    /// Calls the wake-up unless one is scheduled and not yet answered by a take.
    fn call(&self) {
        if !self.scheduled.swap(true, Ordering::AcqRel) {
            (self.wake)();
        }
    }
}

pub struct Output {
    texts: Mutex<Texts>,
    /// The screen of a process on a terminal, fed with its output as it arrives.
    screen: Option<Mutex<Screen>>,
    consumers: Mutex<Consumers>,
    seq: watch::Sender<u64>,
    progress: Notify,
}

pub(crate) fn index(s: Stream) -> usize {
    match s {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}

/// How long `backpressure` waits for a byte-stream reader that lags.
#[derive(Clone, Copy)]
pub enum ReaderWait {
    /// As long as it lags: it holds the producer back, as a paused `child_process` stream does.
    Always,
    /// Until it has made no progress for READER_DRAIN_PATIENCE.
    ForAWhile,
    /// Not at all (a reader found stalled before).
    Never,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The one lag rule: more than half the log (bytes or events) after `position`.
fn lags(log: &OutputLog, position: u64) -> bool {
    log.bytes_after(position) > (log.max_bytes() / 2) as u64
        || log.last_seq().saturating_sub(position) > (log.max_events() / 2) as u64
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
            }),
            consumers: Mutex::new(Consumers::default()),
            seq: watch::channel(0).0,
            progress: Notify::new(),
        }
    }

    fn texts(&self) -> MutexGuard<'_, Texts> {
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
            let i = index(stream);
            if !t.retain {
                t.retained[i].drop_bytes(data.len());
            } else if lock(&self.consumers).wake.is_none() {
                let Texts { decoders, retained, .. } = &mut *t;
                let text = decoders[i].decode(data);
                retained[i].push(&text);
            }
            t.log.append(EventBody::Output(stream, chunk.clone()))
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
        if lock(&self.consumers).wake.is_some() {
            return;
        }
        let i = index(stream);
        let rest = t.decoders[i].finish();
        if !rest.is_empty() {
            t.retained[i].push(&rest);
        }
    }

    /// Appends the terminal event; nothing is appended after it.
    pub fn close(&self, body: EventBody) {
        let seq = self.texts().log.append(body);
        if let Some(seq) = seq {
            self.seq.send_replace(seq);
            self.wake();
        }
    }

    // ---- consumers ---------------------------------------------------------------------------

    /// Installs the listener pump. With `from_start` it sees every event; otherwise only those
    /// appended from now on.
    pub fn set_pump(&self, wake: Box<dyn Fn() + Send + Sync>, from_start: bool) {
        {
            let t = self.texts();
            let mut c = lock(&self.consumers);
            c.positions[Consumer::Listeners as usize] = Some(if from_start { 0 } else { t.log.last_seq() });
            c.wake = Some(Wake::new(wake));
        }
        self.wake();
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

    /// Installs (`Some`) or removes the byte-stream reader's wake-up. Called once the reader
    /// stops waiting through the runtime, and the wake-up is then answered by
    /// `reader_take`. Removed, an offer that no consumer can borrow any more goes back.
    pub fn set_reader_wake(&self, wake: Option<Box<dyn Fn() + Send + Sync>>) {
        let mut c = lock(&self.consumers);
        c.reader_wake = wake.map(Wake::new);
        c.withdraw_offers_unless_borrowed();
    }

    /// Wakes every consumer that may hold a lent pipe, even one whose last wake-up is unanswered
    /// (a paused reader takes nothing): the runtime wants the pipe back.
    pub(crate) fn wake_for_reclaim(&self) {
        let wakes = {
            let c = lock(&self.consumers);
            [c.wake.clone(), c.reader_wake.clone()]
        };
        for w in wakes.into_iter().flatten() {
            w.scheduled.store(true, Ordering::Release);
            (w.wake)();
        }
    }

    /// Wakes the reader alone (its process finished, which appends nothing to the log).
    pub fn wake_reader(&self) {
        let w = lock(&self.consumers).reader_wake.clone();
        if let Some(w) = w {
            w.call();
        }
    }

    /// The reader's take: events after `after`, up to about `max_bytes`, read now. Its wake-up
    /// is answered first, so that output appended after this look wakes it again.
    pub fn reader_take(&self, after: u64, max_bytes: usize) -> LogRead {
        if let Some(w) = &lock(&self.consumers).reader_wake {
            w.scheduled.store(false, Ordering::Release);
        }
        self.read_now(after, max_bytes)
    }

    /// Everything the pump has not taken yet, decoded; its position advances. With `finish`, the
    /// decoders are flushed and the pump removed (the output is complete).
    pub fn pump_drain(&self, finish: bool) -> (Vec<TextChunk>, bool) {
        let after = {
            let c = lock(&self.consumers);
            if let Some(w) = &c.wake {
                w.scheduled.store(false, Ordering::Release);
            }
            c.positions[Consumer::Listeners as usize]
        };
        let Some(after) = after else { return (Vec::new(), false) };
        let mut chunks = Vec::new();
        let (next, truncated) = {
            let mut t = self.texts();
            let read = t.log.read_after(after, usize::MAX);
            let Texts { decoders, retained, retain, .. } = &mut *t;
            for e in read.events {
                if let EventBody::Output(stream, data) = e.body {
                    let i = index(stream);
                    // ASCII, the common case of logs, is known from the same pass that validates,
                    // and spares V8 its own decoding pass (a Latin-1 string is a plain copy).
                    let text = match decoders[i].decode_ascii(&data) {
                        (std::borrow::Cow::Borrowed(_), true) => Text::ascii(&data),
                        (std::borrow::Cow::Borrowed(_), false) => Text::shared(&data),
                        (std::borrow::Cow::Owned(s), _) => Text::from(s),
                    };
                    if *retain {
                        retained[i].push(text.as_str());
                    }
                    chunks.push(TextChunk { stream, text });
                }
            }
            if finish {
                for stream in [Stream::Stdout, Stream::Stderr] {
                    let i = index(stream);
                    let text = decoders[i].finish();
                    if !text.is_empty() {
                        retained[i].push(&text);
                        chunks.push(TextChunk { stream, text: Text::from(text) });
                    }
                }
            }
            (read.next, read.truncated)
        };
        {
            let mut c = lock(&self.consumers);
            if finish {
                c.positions[Consumer::Listeners as usize] = None;
                c.wake = None;
                c.withdraw_offers_unless_borrowed();
            } else if c.positions[Consumer::Listeners as usize].is_some() {
                c.positions[Consumer::Listeners as usize] = Some(next);
            }
        }
        self.progress.notify_waiters();
        (chunks, truncated)
    }

    // ---- lending a flooding pipe to the pump's thread (see `loan`) ----------------------------

    /// The consumers' side can take a flooding stream's pipe and read it itself.
    pub fn allow_lending(&self) {
        lock(&self.consumers).lend = true;
    }

    /// The borrower cannot read any more (its thread is going away): no further offers.
    pub fn stop_lending(&self) {
        lock(&self.consumers).lend = false;
    }

    /// Whether a consumer that borrows is installed: checked before a pipe is taken off the
    /// runtime, and before the pipes lent on a consumer's thread are given back.
    pub fn can_lend(&self) -> bool {
        lock(&self.consumers).borrows()
    }

    /// Offers `stream`'s pipe to the consumers' side, which learns of it when next woken. The
    /// pipe comes back when no consumer that borrows is installed.
    pub(crate) fn offer(&self, stream: Stream, fd: OwnedFd) -> Result<Arc<Loan>, OwnedFd> {
        let loan = {
            let mut c = lock(&self.consumers);
            if !c.borrows() {
                return Err(fd);
            }
            let loan = Arc::new(Loan::new(stream, fd));
            c.loans[index(stream)] = Some(loan.clone());
            loan
        };
        self.wake();
        Ok(loan)
    }

    /// The loan of `stream` is over.
    pub(crate) fn loan_over(&self, stream: Stream) {
        lock(&self.consumers).loans[index(stream)] = None;
    }

    /// The loans outstanding: offered (the borrower may `take` them) or lent.
    pub fn loans(&self) -> Vec<Arc<Loan>> {
        lock(&self.consumers).loans.iter().flatten().cloned().collect()
    }

    /// Whether a consumer lags by the one rule: a borrower reads no further until it does not.
    pub fn consumers_lag(&self) -> bool {
        let t = self.texts();
        let c = lock(&self.consumers);
        c.positions.iter().any(|p| p.is_some_and(|p| lags(&t.log, p)))
    }

    /// The consumers are gone with their JS environment: the pump is removed (its loans end as
    /// in `pump_drain(true)`) and the reader's hold released, so that nothing waits for them.
    pub fn release_consumers(&self) {
        if lock(&self.consumers).wake.is_some() {
            self.pump_drain(true);
        }
        self.set_reader_wake(None);
        self.set_reader_position(None);
    }

    /// Holds the producer for a byte-stream reader that has consumed up to `seq` (`None`
    /// releases the hold).
    pub fn set_reader_position(&self, seq: Option<u64>) {
        {
            let mut c = lock(&self.consumers);
            c.positions[Consumer::Reader as usize] = seq;
            c.withdraw_offers_unless_borrowed();
        }
        self.progress.notify_waiters();
    }

    /// Waits while a consumer lags (the one rule). Listeners are always waited for; a reader as
    /// `reader` says: `ForAWhile` stops waiting for a reader that makes no progress for
    /// READER_DRAIN_PATIENCE (used once the group is dead, so that an abandoned reader cannot keep
    /// a dead process unfinished). Returns true when it stopped waiting for a stalled reader.
    pub async fn backpressure(&self, reader: ReaderWait) -> bool {
        let mut stall: Option<(u64, Instant)> = None;
        loop {
            let notified = self.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let lagging = {
                let t = self.texts();
                let c = lock(&self.consumers);
                let mut lagging = [false; 2];
                for (i, p) in c.positions.iter().enumerate() {
                    lagging[i] = p.is_some_and(|p| lags(&t.log, p));
                }
                (lagging, c.positions[Consumer::Reader as usize])
            };
            let ([listeners, lagging_reader], reader_at) = lagging;
            let lagging_reader = lagging_reader && !matches!(reader, ReaderWait::Never);
            if !listeners && !lagging_reader {
                return false;
            }
            if !listeners && matches!(reader, ReaderWait::ForAWhile) {
                let now = Instant::now();
                let at = reader_at.unwrap_or(0);
                match stall {
                    Some((p, since)) if p == at => {
                        if now.duration_since(since) >= READER_DRAIN_PATIENCE {
                            return true;
                        }
                    }
                    _ => stall = Some((at, now)),
                }
                let _ = tokio::time::timeout(READER_DRAIN_PATIENCE, notified).await;
                continue;
            }
            notified.await;
        }
    }

    // ---- views -------------------------------------------------------------------------------

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
        self.texts().retained[index(stream)].text()
    }

    pub fn retained_dropped(&self, stream: Stream) -> u64 {
        self.texts().retained[index(stream)].dropped_bytes()
    }

    /// The newest sequence number in the log. Read from the log itself: the `seq` watch is
    /// published just after the append, outside the lock, so a reader that has just been handed
    /// event N could see N - 1 there and have its next position refused as past the end.
    pub fn last_seq(&self) -> u64 {
        self.texts().log.last_seq()
    }

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

    /// Events after `after`, waiting up to `wait` for at least one while the log is open.
    /// Returns no events when the log is closed and read through, or on timeout.
    pub async fn read(&self, after: u64, max_bytes: usize, wait: Option<Duration>) -> LogRead {
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

/// Memory for the log's large chunks, recycled. A flood arrives in reads of up to 256 KiB; copied
/// each into a fresh allocation of that size, most came from pages the allocator had just given
/// back, and the copy faulted them in again (perf: 56% of a reader's page faults, 1 GiB flood).
/// Chunks from 192 KiB up (a read that filled, or nearly filled, its buffer) go into blocks of
/// 256 KiB kept in a small free list, so a block holds at most a third more than its bytes;
/// smaller ones are plain allocations. A stream's read buffer is itself a block once a read has
/// filled it, and a large read becomes the log's chunk as it is, without a copy.
mod block {
    use bytes::Bytes;
    use std::sync::Mutex;

    pub(super) const SIZE: usize = 256 * 1024;
    /// The smallest chunk given a block of its own: a block holds at most a third more than its
    /// bytes, so the log's byte bound stays close to the memory it holds.
    const MIN: usize = SIZE / 4 * 3;
    /// Free blocks kept: 4 MiB at most.
    const KEEP: usize = 16;

    /// Free blocks, each `SIZE` bytes long and initialised.
    static FREE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

    /// A block and how many of its bytes are the chunk's.
    struct Block(Vec<u8>, usize);

    impl AsRef<[u8]> for Block {
        fn as_ref(&self) -> &[u8] {
            &self.0[..self.1]
        }
    }

    impl Drop for Block {
        fn drop(&mut self) {
            let v = std::mem::take(&mut self.0);
            let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
            if free.len() < KEEP {
                free.push(v);
            }
        }
    }

    /// A block to fill: a free one, or a new one (zeroed, so that every block is initialised).
    fn fresh() -> Vec<u8> {
        FREE.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_else(|| vec![0u8; SIZE])
    }

    pub(super) fn chunk(data: &[u8]) -> Bytes {
        if !(MIN..=SIZE).contains(&data.len()) {
            return Bytes::copy_from_slice(data);
        }
        let mut v = fresh();
        v[..data.len()].copy_from_slice(data);
        Bytes::from_owner(Block(v, data.len()))
    }

    /// A buffer that a stream's reads go into: small at first (most children write little), a
    /// block once a read has filled it.
    pub struct ReadBuf(Vec<u8>);

    impl Drop for ReadBuf {
        fn drop(&mut self) {
            if self.0.len() == SIZE {
                drop(Block(std::mem::take(&mut self.0), 0));
            }
        }
    }

    impl ReadBuf {
        pub fn small(len: usize) -> Self {
            ReadBuf(vec![0u8; len])
        }

        pub fn block() -> Self {
            ReadBuf(fresh())
        }

        pub fn len(&self) -> usize {
            self.0.len()
        }

        pub fn is_empty(&self) -> bool {
            self.0.is_empty()
        }

        pub fn bytes_mut(&mut self) -> &mut [u8] {
            &mut self.0
        }

        /// The first `n` bytes as a chunk: the block itself for a large read, else a copy.
        pub(super) fn take(&mut self, n: usize) -> Bytes {
            if self.0.len() == SIZE && (MIN..=SIZE).contains(&n) {
                let full = std::mem::replace(&mut self.0, fresh());
                return Bytes::from_owner(Block(full, n));
            }
            chunk(&self.0[..n])
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn chunks_keep_their_bytes_whether_in_blocks_or_not() {
            let big: Vec<u8> = (0..250_000u32).map(|i| (i % 251) as u8).collect();
            let first = super::chunk(&big);
            assert_eq!(&first[..], &big[..]);
            drop(first);
            // The next large chunk may land in the block just freed: it holds its own bytes only.
            let other: Vec<u8> = (0..200_000u32).map(|i| (i % 7) as u8).collect();
            let second = super::chunk(&other);
            assert_eq!(&second[..], &other[..]);
            // A slice outlives the chunk it came from, and its block is not reused meanwhile.
            let part = second.slice(10..20);
            drop(second);
            let third = super::chunk(&big);
            assert_eq!(&part[..], &other[10..20]);
            assert_eq!(&third[..], &big[..]);
            assert_eq!(&super::chunk(b"abc")[..], b"abc");
        }

        #[test]
        fn a_large_read_is_taken_whole_and_the_buffer_filled_again_is_another() {
            let mut buf = super::ReadBuf::block();
            buf.bytes_mut()[..200_000].fill(7);
            let first = buf.take(200_000);
            assert!(first.iter().all(|&b| b == 7) && first.len() == 200_000);
            // The next read goes into another block: the chunk taken keeps its bytes.
            buf.bytes_mut()[..200_000].fill(9);
            let second = buf.take(200_000);
            assert!(first.iter().all(|&b| b == 7) && second.iter().all(|&b| b == 9));
            // A small read is copied out; the block stays the buffer.
            buf.bytes_mut()[..3].copy_from_slice(b"abc");
            assert_eq!(&buf.take(3)[..], b"abc");
            assert_eq!(buf.len(), super::SIZE);
        }
    }
}
