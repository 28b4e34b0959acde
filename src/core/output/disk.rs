//! The output log on disk: every event of a process also goes, in order, to `<dir>/<id>.log`,
//! rotated by size to `<id>.log.1`, `.2`… (the oldest deleted past `keep` files), so that a
//! cursor older than the memory ring still resumes (`disk_read`). The frames are
//! `disk_frame`'s. Events that rotation would delete before they could be read are dropped
//! unwritten (`push`; when, in `disk_writer`).
//!
//! Appending only queues the event (a clone of its `Bytes`, no copy), under the log's lock so
//! that the queue keeps the log's order; one writer thread for every process does the file
//! work, so neither the JS thread nor a runtime thread ever waits on the disk. The queue is
//! bounded: a lazy one by its window, others as follows: past `SOFT_QUEUE_BYTES` the reader
//! tasks wait (`behind`, as for a lagging consumer),
//! and past `HARD_QUEUE_BYTES` (a pipe lent to the JS thread does not wait) disk logging of that
//! process stops. A write error stops it too, reported once on stderr: the process and its
//! in-memory output go on as without a log directory.

use super::disk_writer::{self, writer};
use crate::core::output::disk_frame;
use crate::core::output::log::LogEvent;
use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// Queued bytes past which the reader tasks wait for the writer.
pub(super) const SOFT_QUEUE_BYTES: usize = 8 * 1024 * 1024;
/// Queued bytes past which disk logging of the process gives up rather than grow without bound.
const HARD_QUEUE_BYTES: usize = 64 * 1024 * 1024;

pub use super::disk_options::{options, resolved, LogFiles, DEFAULT_KEEP, DEFAULT_MAX_FILE_BYTES};

/// The disk side of one process's log, shared by its output (which queues and reads) and the
/// writer thread.
pub struct DiskLog {
    pub(super) files: LogFiles,
    pub(super) id: String,
    /// Taken only for a push or a pop, never across a file operation: the log's appends take it.
    pub(super) queue: Mutex<Queue>,
    /// Taken across file operations, by the writer thread and by readers off the JS thread.
    pub(super) kept: Mutex<Kept>,
    /// Notified as the writer empties the queue: reader tasks waiting on `behind` go on.
    pub(super) drained: Notify,
}

#[derive(Default)]
pub(super) struct Queue {
    /// Events not yet written, oldest first. An event leaves only once written, so that a read
    /// finds every event either in a file or here.
    pub(super) events: VecDeque<LogEvent>,
    bytes: usize,
    /// Disk logging stopped (a write error or a writer far behind): nothing more is queued.
    pub(super) stopped: bool,
    /// Handed to the writer thread, which writes it now or at its next event's deadline.
    scheduled: bool,
    /// While output may be left unwritten (see `push`): the output that makes an event's file
    /// one that rotation deletes, `(keep + 1) × max_bytes`. None: everything is written.
    lazy: Option<usize>,
    /// Bytes of the queue counted in the writer's budget of held output (`disk_writer::hold`).
    held: usize,
    /// An event that is not output (the end, above all) waits: everything is written at once.
    urgent: bool,
    /// An event came before: a log whose first event is its end is never written (`push`).
    begun: bool,
}

impl Queue {
    /// Gives back to the budget what this queue no longer holds.
    fn settle_held(&mut self) {
        let excess = self.held.saturating_sub(self.bytes);
        if excess > 0 {
            self.held -= excess;
            disk_writer::release(excess);
        }
    }
}

#[derive(Default)]
pub(super) struct Kept {
    /// The first sequence number of each kept file, oldest first; the last is `<id>.log`.
    pub(super) firsts: VecDeque<u64>,
    /// The newest sequence number written whole.
    pub(super) written: u64,
    /// Bytes of frames written to the files, rotated away since or not.
    pub(super) bytes_written: u64,
    /// The current file and its size, once opened.
    file: Option<(File, u64)>,
}

/// Writes `a` then `b` whole, in one system call when the kernel takes them at once.
fn write_both(file: &mut File, mut a: &[u8], mut b: &[u8]) -> std::io::Result<()> {
    while !a.is_empty() || !b.is_empty() {
        let n = match file.write_vectored(&[std::io::IoSlice::new(a), std::io::IoSlice::new(b)]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let from_a = n.min(a.len());
        a = &a[from_a..];
        b = &b[n - from_a..];
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl DiskLog {
    pub fn new(files: LogFiles, id: &str) -> Arc<DiskLog> {
        Arc::new(DiskLog {
            id: id.to_string(),
            queue: Mutex::new(Queue { lazy: disk_writer::lazy_window(&files), ..Queue::default() }),
            kept: Mutex::default(),
            drained: Notify::new(),
            files,
        })
    }

    pub(super) fn queue_lock(&self) -> MutexGuard<'_, Queue> {
        lock(&self.queue)
    }

    pub(super) fn kept_lock(&self) -> MutexGuard<'_, Kept> {
        lock(&self.kept)
    }

    /// The path of the kept file `back` rotations old (0: the current one).
    pub(super) fn path(&self, back: usize) -> PathBuf {
        let name = if back == 0 { format!("{}.log", self.id) } else { format!("{}.log.{back}", self.id) };
        self.files.directory.join(name)
    }

    /// Queues `ev` for the writer. Called under the log's lock, in the log's order.
    pub(super) fn push(self: &Arc<Self>, ev: &LogEvent) {
        let schedule = {
            let mut q = self.queue_lock();
            if q.stopped {
                return;
            }
            let first = !std::mem::replace(&mut q.begun, true);
            if first && matches!(ev.body, crate::core::output::log::EventBody::Exited(_)) {
                // A process that ended without a byte of output, a restart or a probe verdict:
                // its file would hold its end alone, which memory keeps while the process is
                // listed (nothing reads past memory), and would cost a quiet command more than
                // its launch (an inode allocated, written back, listed forever).
                return;
            }
            let weight = disk_frame::payload_len(&ev.body);
            if q.bytes + weight > HARD_QUEUE_BYTES {
                self.stop(&mut q, "the disk could not keep up with the output".into());
                return;
            }
            q.bytes += weight;
            q.events.push_back(ev.clone());
            if q.lazy.is_some() {
                // A frame that could fill half a file breaks the count below, and past the
                // writer's budget the output is written as it comes: from then on, everything is.
                if disk_frame::HEADER + weight > (self.files.max_bytes / 2) as usize || !disk_writer::hold(weight) {
                    q.lazy = None;
                } else {
                    q.held += weight;
                }
            }
            if let Some(window) = q.lazy {
                // Files hold at most max_bytes each, and keep of them are kept: an event followed
                // by (keep + 1) × max_bytes of output is in a file that rotation has deleted by
                // the time that output is written. Such events are never written (a flood of 256
                // MiB writes the last window of it, not all of it); a reader that asks for them
                // is told it was truncated, as after a rotation.
                while q.events.len() > 1 {
                    let front = disk_frame::payload_len(&q.events[0].body);
                    if q.bytes - front < window {
                        break;
                    }
                    q.events.pop_front();
                    q.bytes -= front;
                }
                q.settle_held();
            }
            let urgent = !matches!(ev.body, crate::core::output::log::EventBody::Output(..));
            let woken = urgent && !std::mem::replace(&mut q.urgent, true);
            !std::mem::replace(&mut q.scheduled, true) || woken
        };
        if schedule {
            writer().send(self.clone());
        }
    }

    /// Whether the queue is long enough that the reader tasks should wait for the writer.
    pub(super) fn behind(&self) -> bool {
        let q = self.queue_lock();
        // A lazy queue is bounded by its window, and waits on purpose.
        q.lazy.is_none() && q.bytes > SOFT_QUEUE_BYTES
    }

    /// Resolves once every event queued so far is in the files (or disk logging stopped): after
    /// the process is done, nothing more is queued, so nothing more is written or created.
    pub async fn written(&self) {
        loop {
            // Registered before the look: a drain between the two is not missed.
            let notified = self.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let q = self.queue_lock();
                if q.stopped || q.events.is_empty() {
                    return;
                }
            }
            notified.await;
        }
    }

    /// Whether disk logging of this process has stopped.
    pub fn stopped(&self) -> bool {
        self.queue_lock().stopped
    }

    /// Stops disk logging of this process, saying why once.
    pub(super) fn stop_writing(&self, why: &str) {
        let mut q = self.queue_lock();
        self.stop(&mut q, why.into());
    }

    fn stop(&self, q: &mut Queue, why: String) {
        if !q.stopped {
            q.stopped = true;
            eprintln!(
                "procvisor: process {}: output is no longer written to {}: {why}",
                self.id,
                self.files.directory.display()
            );
        }
        q.events.clear();
        q.bytes = 0;
        q.settle_held();
        q.scheduled = false;
        q.urgent = false;
        self.drained.notify_waiters();
    }

    /// The writer's part: writes what is due (everything, unless the log is lazy and nothing
    /// urgent came: then what is older than `disk_writer::DELAY_MS`), then gives the log back
    /// to the queue side. Returns when to come back (ms since the epoch) while events wait.
    pub(super) fn write_due(&self) -> Option<u64> {
        loop {
            let batch: Vec<LogEvent> = {
                let mut q = self.queue_lock();
                if q.stopped || q.events.is_empty() {
                    q.scheduled = false;
                    q.urgent = false;
                    return None;
                }
                let all = q.lazy.is_none() || q.urgent;
                let now = disk_writer::now_ms();
                let due = |e: &&LogEvent| all || disk_writer::is_due(e.at_ms, now);
                let batch: Vec<LogEvent> = q.events.iter().take(64).take_while(due).cloned().collect();
                if batch.is_empty() {
                    return Some(q.events[0].at_ms.saturating_add(disk_writer::DELAY_MS));
                }
                batch
            };
            for ev in &batch {
                if let Err(e) = self.write_one(ev) {
                    self.kept_lock().file = None;
                    let mut q = self.queue_lock();
                    self.stop(&mut q, e.to_string());
                    return None;
                }
            }
            {
                // By sequence number: the queue side may have dropped some of these meanwhile.
                let last = batch.last().map_or(0, |e| e.seq);
                let mut q = self.queue_lock();
                while q.events.front().is_some_and(|e| e.seq <= last) {
                    if let Some(ev) = q.events.pop_front() {
                        q.bytes -= disk_frame::payload_len(&ev.body);
                    }
                }
                q.settle_held();
            }
            self.drained.notify_waiters();
        }
    }

    fn write_one(&self, ev: &LogEvent) -> std::io::Result<()> {
        let (head, data) = disk_frame::encode(ev);
        let frame_len = head.len() + data.as_ref().map_or(0, |d| d.len());
        let mut k = self.kept_lock();
        if k.file.is_none() && k.firsts.is_empty() {
            // Files left under this id by an earlier Node process are not this process's. A
            // rotation renames the current file and makes the next one at once, so rotated files
            // are found only beside a current one: a name that is free means there are none, and
            // the file is made in one system call rather than `keep` removals and a create (a
            // tenth of a persistent sandbox's supervisor CPU per spawn of a quiet process).
            let file = match File::options().write(true).create_new(true).open(self.path(0)) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    for back in 0..self.files.keep.max(1) {
                        let _ = std::fs::remove_file(self.path(back));
                    }
                    self.create()?
                }
                Err(e) => return Err(e),
            };
            k.file = Some((file, 0));
            k.firsts.push_back(ev.seq);
        }
        let size = k.file.as_ref().map_or(0, |f| f.1);
        if size > 0 && size + frame_len as u64 > self.files.max_bytes {
            // Renamed under the lock: a reader opens a file by the name its first sequence
            // number has at that moment.
            self.rotate(&mut k)?;
            k.file = Some((self.create()?, 0));
            k.firsts.push_back(ev.seq);
        }
        // Written under the lock: a reader takes only frames up to `written`, so a frame half
        // written is never read, and a rotation never moves a file under a read's open.
        let Some((file, size)) = k.file.as_mut() else {
            return Err(std::io::Error::other("the log file is closed"));
        };
        write_both(file, &head, data.as_deref().unwrap_or(&[]))?;
        *size += frame_len as u64;
        k.written = ev.seq;
        k.bytes_written += frame_len as u64;
        if matches!(ev.body, crate::core::output::log::EventBody::Exited(_)) {
            // Nothing follows the end: a finished process that is kept holds no descriptor.
            k.file = None;
        }
        Ok(())
    }

    fn create(&self) -> std::io::Result<File> {
        File::options().write(true).create(true).truncate(true).open(self.path(0))
    }

    fn rotate(&self, k: &mut Kept) -> std::io::Result<()> {
        k.file = None;
        let keep = self.files.keep;
        if keep <= 1 {
            k.firsts.clear();
            return std::fs::remove_file(self.path(0));
        }
        let _ = std::fs::remove_file(self.path(keep - 1));
        for back in (1..keep - 1).rev() {
            match std::fs::rename(self.path(back), self.path(back + 1)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(self.path(0), self.path(1))?;
        while k.firsts.len() >= keep {
            k.firsts.pop_front();
        }
        Ok(())
    }
}

impl Drop for DiskLog {
    fn drop(&mut self) {
        // Gone with output still held (its runtime shut down before the end was written).
        let mut q = self.queue_lock();
        q.bytes = 0;
        q.settle_held();
    }
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
