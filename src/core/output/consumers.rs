//! Who consumes one process's output and where each stands: the positions of the listener pump
//! and of a byte-stream reader in the log, their wake-ups, the pipes lent to them, and the one
//! lag rule. How output reaches them is `delivery`.

use crate::core::output::loan::Loan;
use crate::core::output::log::OutputLog;
use crate::core::output::shared::RingWriter;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long the drain after the group's death waits for a stalled byte-stream reader before
/// letting the log evict under it: an abandoned reader must not keep a dead process unfinished.
pub(super) const READER_DRAIN_PATIENCE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumer {
    /// The listener pump: decoded text for `onStdout` / `onStderr`.
    Listeners = 0,
    /// A byte-stream reader of stdout.
    Reader = 1,
}

/// The pump's wake-up: called once per batch on a runtime thread; it must only schedule work.
pub(super) struct Wake {
    pub(super) wake: Box<dyn Fn() + Send + Sync>,
    pub(super) scheduled: AtomicBool,
}

#[derive(Default)]
pub(super) struct Consumers {
    pub(super) positions: [Option<u64>; 2],
    /// The slowest reader of the shared-memory ring (a supervisor's client that maps it), held
    /// to the ring's own lag rule (`RingWriter::lags`) rather than the log's: it reads the ring,
    /// which holds more than the log, so the producer waits for it less often.
    pub(super) ring_position: Option<u64>,
    pub(super) wake: Option<Arc<Wake>>,
    /// The byte-stream reader's wake-up, while it reads: it takes from the log on its own thread
    /// when woken, rather than waiting for new output in a runtime task.
    pub(super) reader_wake: Option<Arc<Wake>>,
    /// The consumers' side can borrow a flooding stream's pipe (see `loan`).
    pub(super) lend: bool,
    /// Each stream's pipe while it is offered or lent.
    pub(super) loans: [Option<Arc<Loan>>; 2],
}

impl Consumers {
    /// The listener pump is installed: it decodes what it takes, so the output does not.
    pub(super) fn has_pump(&self) -> bool {
        self.wake.is_some()
    }

    /// A consumer that reads on its own thread (the listener pump, or a reader with its wake-up)
    /// is installed there, and that side can borrow a pipe.
    pub(super) fn borrows(&self) -> bool {
        let pump = self.wake.is_some() && self.positions[Consumer::Listeners as usize].is_some();
        let reader = self.reader_wake.is_some() && self.positions[Consumer::Reader as usize].is_some();
        self.lend && (pump || reader)
    }

    /// Without a borrower, an offer not taken yet goes back at once.
    pub(super) fn withdraw_offers_unless_borrowed(&self) {
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
    pub(super) fn new(wake: Box<dyn Fn() + Send + Sync>) -> Arc<Wake> {
        Arc::new(Wake { wake, scheduled: AtomicBool::new(false) })
    }

    /// Calls the wake-up unless one is scheduled and not yet answered by a take.
    pub(super) fn call(&self) {
        if !self.scheduled.swap(true, Ordering::AcqRel) {
            (self.wake)();
        }
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

/// The one lag rule: more than half the log (bytes or events) after `position`.
pub(super) fn lags(log: &OutputLog, position: u64) -> bool {
    log.bytes_after(position) > (log.max_bytes() / 2) as u64
        || log.last_seq().saturating_sub(position) > (log.max_events() / 2) as u64
}

/// The same rule for the ring's reader: more than half the ring after `position`. Without a
/// ring (no client reads it any more) nothing is held for it.
pub(super) fn ring_lags(ring: Option<&RingWriter>, position: Option<u64>) -> bool {
    matches!((ring, position), (Some(r), Some(p)) if r.lags(p))
}
