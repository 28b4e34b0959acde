//! A stream's pipe lent to the thread that consumes its output.
//!
//! A runtime thread that reads a flood for a listener on another thread is faster than the
//! producer: it empties the pipe, parks, and is woken by the producer's next write, some 15,000
//! times per GiB, and every byte is handed from thread to thread once more. Reading on the
//! consumer's own thread, from its event loop, is what a plain `child_process` stream does: its
//! reads wait while it works, the pipe fills meanwhile, and one wake-up brings a large read.
//!
//! So once a stream floods (a read found the pipe full) while a consumer that can borrow is
//! installed (a listener pump, or a byte-stream reader woken on its thread), the runtime's
//! reader offers the pipe: it stops polling it and parks until the pipe
//! comes back. The borrower reads into the same log, under the same lag rule, and gives the pipe
//! back at its end of file (`end`), when asked to (`reclaim`: the group died, and what is
//! buffered must be taken without waiting for writers outside it), or when it goes away. An offer
//! nobody takes within `TAKE_PATIENCE` is withdrawn and the runtime reads on.

use crate::core::output::log::Stream;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::Notify;

/// How long an offer waits to be taken. The borrower takes it when it is next woken (a drain of
/// the pump, a reader's take), so a borrower this late is busy elsewhere, and the runtime reads on without it.
pub const TAKE_PATIENCE: Duration = Duration::from_secs(1);

/// How a loan ended.
pub enum Back {
    /// The pipe is the runtime's again, open, with whatever the borrower has not read.
    Returned(OwnedFd),
    /// The borrower read the end of file, or an error that ends the stream, and closed the pipe.
    Ended,
}

pub struct Loan {
    pub stream: Stream,
    /// The pipe while it is offered and not yet taken.
    offered: Mutex<Option<OwnedFd>>,
    back: Mutex<Option<Back>>,
    reclaim: AtomicBool,
    returned: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Loan {
    pub(crate) fn new(stream: Stream, fd: OwnedFd) -> Loan {
        Loan {
            stream,
            offered: Mutex::new(Some(fd)),
            back: Mutex::new(None),
            reclaim: AtomicBool::new(false),
            returned: Notify::new(),
        }
    }

    /// Takes the pipe while it is still offered: the borrower to read it, or the runtime to
    /// withdraw the offer. `None` once either has.
    pub fn take(&self) -> Option<OwnedFd> {
        lock(&self.offered).take()
    }

    /// The borrower gives the pipe back, open.
    pub fn give_back(&self, fd: OwnedFd) {
        self.settle(Back::Returned(fd));
    }

    /// The borrower read the stream's end (or an error that ends it) and closed the pipe.
    pub fn end(&self) {
        self.settle(Back::Ended);
    }

    fn settle(&self, back: Back) {
        *lock(&self.back) = Some(back);
        // A permit is stored when the runtime is not waiting yet: the return is never missed.
        self.returned.notify_one();
    }

    /// Whether the runtime wants the pipe back.
    pub fn reclaim_requested(&self) -> bool {
        self.reclaim.load(Ordering::Acquire)
    }

    pub(crate) fn request_reclaim(&self) {
        self.reclaim.store(true, Ordering::Release);
    }

    /// Waits for the borrower's return.
    pub(crate) async fn returned(&self) -> Back {
        loop {
            if let Some(b) = lock(&self.back).take() {
                return b;
            }
            self.returned.notified().await;
        }
    }
}
