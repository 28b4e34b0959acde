//! Delivering one process's output to the consumers that must lose nothing.
//!
//! Consumers are one list of positions in the log with one lag rule: the listener pump
//! (`onStdout`/`onStderr`) and a byte-stream reader (`handle.reader`) each hold a position, and
//! the producer waits while any of them is more than half a log behind, so they lose nothing
//! while memory stays bounded. The slowest client of a supervisor that reads the output from
//! shared memory holds a position in the ring instead, by the same rule over the ring (half of
//! it, which holds more than the log). `logs()` readers hold no position: they never slow the
//! child and learn by `truncated` when they fell behind.

use crate::core::output::consumers::{lags, ring_lags, Consumer, ReaderWait, Wake, READER_DRAIN_PATIENCE};
use crate::core::output::loan::Loan;
use crate::core::output::log::{EventBody, LogRead, Stream};
use crate::core::output::process_output::{lock, Output, Texts};
use crate::core::output::text::{Text, TextChunk};
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::time::Instant;

impl Output {
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

    /// Answers the reader's wake-up without reading: a reader that reads the output elsewhere
    /// (a client mapping it) is woken again by what is appended after this call.
    pub fn reader_seen(&self) -> u64 {
        if let Some(w) = &lock(&self.consumers).reader_wake {
            w.scheduled.store(false, Ordering::Release);
        }
        self.last_seq()
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
                    let i = stream.index();
                    let text = Text::decode(&mut decoders[i], &data);
                    if *retain {
                        retained[i].push(text.as_str());
                    }
                    chunks.push(TextChunk { stream, text });
                }
            }
            if finish {
                for stream in [Stream::Stdout, Stream::Stderr] {
                    let i = stream.index();
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
            c.loans[stream.index()] = Some(loan.clone());
            loan
        };
        self.wake();
        Ok(loan)
    }

    /// The loan of `stream` is over.
    pub(crate) fn loan_over(&self, stream: Stream) {
        lock(&self.consumers).loans[stream.index()] = None;
    }

    /// The loans outstanding: offered (the borrower may `take` them) or lent.
    pub fn loans(&self) -> Vec<Arc<Loan>> {
        lock(&self.consumers).loans.iter().flatten().cloned().collect()
    }

    /// Whether a consumer lags by the one rule: a borrower reads no further until it does not.
    pub fn consumers_lag(&self) -> bool {
        let t = self.texts();
        let c = lock(&self.consumers);
        c.positions.iter().any(|p| p.is_some_and(|p| lags(&t.log, p))) || ring_lags(t.ring.as_ref(), c.ring_position)
    }

    /// Whether the log's files are behind (more queued for the disk writer than the reader tasks
    /// may run ahead of it): a borrower gives the pipe back to the runtime, whose reader waits.
    pub fn disk_behind(&self) -> bool {
        self.disk.as_ref().is_some_and(|d| d.behind())
    }

    /// The consumers are gone with their JS environment: the pump is removed (its loans end as
    /// in `pump_drain(true)`) and the reader's hold released, so that nothing waits for them.
    pub fn release_consumers(&self) {
        if lock(&self.consumers).wake.is_some() {
            self.pump_drain(true);
        }
        self.set_reader_wake(None);
        self.set_reader_position(None);
        self.set_ring_position(None);
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

    /// Holds the producer for the slowest reader of the shared-memory ring, which has read up to
    /// `seq` (`None` releases the hold), by the ring's lag rule. It waits as the byte-stream
    /// reader does (`ReaderWait`).
    pub fn set_ring_position(&self, seq: Option<u64>) {
        lock(&self.consumers).ring_position = seq;
        self.progress.notify_waiters();
    }

    /// Waits while a consumer lags (the one rule). Listeners are always waited for; a reader as
    /// `reader` says: `ForAWhile` stops waiting for a reader that makes no progress for
    /// READER_DRAIN_PATIENCE (used once the group is dead, so that an abandoned reader cannot keep
    /// a dead process unfinished). Returns true when it stopped waiting for a stalled reader.
    pub async fn backpressure(&self, reader: ReaderWait) -> bool {
        let mut stall: Option<((u64, u64), Instant)> = None;
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
                // The ring's reader is waited for as the byte-stream reader is.
                lagging[Consumer::Reader as usize] |= ring_lags(t.ring.as_ref(), c.ring_position);
                (lagging, (c.positions[Consumer::Reader as usize].unwrap_or(0), c.ring_position.unwrap_or(0)))
            };
            let ([listeners, lagging_reader], reader_at) = lagging;
            let lagging_reader = lagging_reader && !matches!(reader, ReaderWait::Never);
            if !listeners && !lagging_reader {
                self.disk_backpressure().await;
                return false;
            }
            if !listeners && matches!(reader, ReaderWait::ForAWhile) {
                let now = Instant::now();
                let at = reader_at;
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

    /// Waits while the disk writer has much queued: the queue stays bounded, and the child
    /// waits as it would for a slow consumer.
    async fn disk_backpressure(&self) {
        let Some(disk) = &self.disk else { return };
        loop {
            let drained = disk.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if !disk.behind() {
                return;
            }
            drained.await;
        }
    }
}
