//! The one thread that writes every process's log files (`disk`), and when it writes them.
//!
//! A log whose files are small enough to hold in memory (`lazy_window`) is written late: an event
//! waits in the queue until it is `DELAY_MS` old, the process ends, or an event that is not
//! output comes. Meanwhile the queue side drops every event that rotation would delete anyway
//! (`DiskLog::push`). A process that floods its output then costs the disk the last window of it,
//! not all of it: the supervisor copied every byte of a 256 MiB flood into the page cache, and
//! the rotation deleted 92% of it seconds later. A process that writes a line now and then has it
//! in its file within `DELAY_MS`, and the writer wakes once per `DELAY_MS` at most for it.
//!
//! What lazy logs hold in memory is bounded per log (its window) and in all (`BUDGET`): past the
//! budget, a log is written as its output comes, as before.

use super::disk::{DiskLog, LogFiles};
pub(super) use super::log::now_ms;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long an event of a lazy log may wait before it is written.
pub(super) const DELAY_MS: u64 = 50;
/// The largest window a lazy log holds: `(keep + 1) × max_bytes` past it is written as it comes.
const MAX_WINDOW: u64 = 32 * 1024 * 1024;
/// Files smaller than this are written as their output comes (an event could fill half a file).
const MIN_LAZY_FILE: u64 = 2 * 1024 * 1024;
/// Output all lazy logs together may hold.
const BUDGET: usize = 128 * 1024 * 1024;

static HELD: AtomicUsize = AtomicUsize::new(0);

/// The window of a log with `files`, or None when it is written as its output comes.
pub(super) fn lazy_window(files: &LogFiles) -> Option<usize> {
    let window = (files.keep as u64).checked_add(1)?.checked_mul(files.max_bytes)?;
    (files.max_bytes >= MIN_LAZY_FILE && window <= MAX_WINDOW).then_some(window as usize)
}

/// Counts `n` more bytes held by lazy logs; false, counting nothing, past the budget.
pub(super) fn hold(n: usize) -> bool {
    let before = HELD.fetch_add(n, Ordering::Relaxed);
    if before + n > BUDGET {
        HELD.fetch_sub(n, Ordering::Relaxed);
        return false;
    }
    true
}

pub(super) fn release(n: usize) {
    HELD.fetch_sub(n, Ordering::Relaxed);
}

/// Whether an event logged at `at_ms` is due at `now`; one from the future (the clock went back)
/// is due at once rather than after the clock catches up.
pub(super) fn is_due(at_ms: u64, now: u64) -> bool {
    now >= at_ms.saturating_add(DELAY_MS) || at_ms > now.saturating_add(DELAY_MS)
}

pub(super) struct Writer(Mutex<mpsc::Sender<Arc<DiskLog>>>);

impl Writer {
    pub(super) fn send(&self, log: Arc<DiskLog>) {
        let tx = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(mpsc::SendError(log)) = tx.send(log) {
            log.stop_writing("the writer thread is gone");
        }
    }
}

/// The writer thread, started at the first event any process logs to disk.
pub(super) fn writer() -> &'static Writer {
    static WRITER: OnceLock<Writer> = OnceLock::new();
    WRITER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Arc<DiskLog>>();
        let spawned = std::thread::Builder::new().name("procvisor-logs".into()).spawn(move || run(rx));
        // Without the thread the receiver is gone with the closure, and each log stops on its
        // first send, reporting why.
        drop(spawned);
        Writer(Mutex::new(tx))
    })
}

/// Writes each log handed over, now or at its deadline, until every sender is gone.
fn run(rx: mpsc::Receiver<Arc<DiskLog>>) {
    // Lazy logs waiting for their next event to be due, with that deadline (ms since the epoch).
    let mut waiting: Vec<(u64, Arc<DiskLog>)> = Vec::new();
    loop {
        let next = waiting.iter().map(|(at, _)| *at).min();
        let got = match next {
            None => match rx.recv() {
                Ok(log) => Some(log),
                Err(_) => return,
            },
            Some(at) => match rx.recv_timeout(Duration::from_millis(at.saturating_sub(now_ms()))) {
                Ok(log) => Some(log),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            },
        };
        if let Some(log) = got {
            write(log, &mut waiting);
        }
        let now = now_ms();
        let (due, later): (Vec<_>, Vec<_>) = waiting.drain(..).partition(|(at, _)| *at <= now);
        waiting = later;
        for (_, log) in due {
            write(log, &mut waiting);
        }
    }
}

fn write(log: Arc<DiskLog>, waiting: &mut Vec<(u64, Arc<DiskLog>)>) {
    let Some(at) = log.write_due() else { return };
    match waiting.iter_mut().find(|(_, l)| Arc::ptr_eq(l, &log)) {
        Some(entry) => entry.0 = entry.0.min(at),
        None => waiting.push((at, log)),
    }
}
