//! The output log on disk: every event of a process also goes, in order, to `<dir>/<id>.log`,
//! rotated by size to `<id>.log.1`, `.2`… (the oldest deleted past `keep` files), so that a
//! cursor older than the memory ring still resumes (`disk_read`). The frames are
//! `disk_frame`'s.
//!
//! Appending only queues the event (a clone of its `Bytes`, no copy), under the log's lock so
//! that the queue keeps the log's order; one writer thread for every process does the file
//! work, so neither the JS thread nor a runtime thread ever waits on the disk. The queue is
//! bounded: past `SOFT_QUEUE_BYTES` the reader tasks wait (`behind`, as for a lagging consumer),
//! and past `HARD_QUEUE_BYTES` (a pipe lent to the JS thread does not wait) disk logging of that
//! process stops. A write error stops it too, reported once on stderr: the process and its
//! in-memory output go on as without a log directory.

use crate::core::error::{CoreError, CoreResult};
use crate::core::output::disk_frame;
use crate::core::output::log::LogEvent;
use crate::core::value::Value;
use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tokio::sync::Notify;

pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
pub const DEFAULT_KEEP: usize = 5;
/// Files smaller than this would rotate at nearly every chunk of a flood.
const MIN_FILE_BYTES: u64 = 4096;
const MAX_KEEP: usize = 10_000;
/// Queued bytes past which the reader tasks wait for the writer.
pub(super) const SOFT_QUEUE_BYTES: usize = 8 * 1024 * 1024;
/// Queued bytes past which disk logging of the process gives up rather than grow without bound.
const HARD_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// Where and how a manager's processes log to disk (the manager's `logDirectory`, `logMaxBytes`
/// and `logKeep`), checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFiles {
    pub directory: PathBuf,
    pub max_bytes: u64,
    pub keep: usize,
}

/// The manager's log options from its options object, resolved against `base` (its working
/// directory): `None` without `logDirectory`. The directory is created if missing and must
/// take a new file, so that a bad one fails here rather than after processes ran.
pub fn options(v: &Value, base: &Path) -> CoreResult<Option<LogFiles>> {
    let dir = match v.get("logDirectory") {
        Value::Undefined => {
            for name in ["logMaxBytes", "logKeep"] {
                if !v.get(name).is_absent() {
                    return Err(CoreError::invalid_option(name, format!("{name} needs logDirectory")));
                }
            }
            return Ok(None);
        }
        Value::String(s) if !s.is_empty() && !s.contains('\0') => base.join(s),
        other => {
            return Err(CoreError::invalid_option(
                "logDirectory",
                format!("logDirectory must be a non-empty path, got {}", other.describe()),
            ))
        }
    };
    let max_bytes =
        whole("logMaxBytes", v.get("logMaxBytes"), MIN_FILE_BYTES, u64::MAX as f64)?.unwrap_or(DEFAULT_MAX_FILE_BYTES);
    let keep = whole("logKeep", v.get("logKeep"), 1, MAX_KEEP as f64)?.map(|k| k as usize).unwrap_or(DEFAULT_KEEP);
    let refuse = |why: String| CoreError::invalid_option("logDirectory", format!("{}: {why}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(|e| refuse(io_reason(&e)))?;
    if !std::fs::metadata(&dir).map_err(|e| refuse(io_reason(&e)))?.is_dir() {
        return Err(refuse("not a directory".into()));
    }
    // Asked by trying: permission bits say nothing for root or a read-only mount.
    let probe = dir.join(format!(".procvisor-probe-{}", std::process::id()));
    File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .map_err(|e| refuse(format!("cannot create a file in it ({})", io_reason(&e))))?;
    let _ = std::fs::remove_file(&probe);
    Ok(Some(LogFiles { directory: dir, max_bytes, keep }))
}

/// The log options a launch request carries (`logFiles`: what `options` resolved, as the
/// manager keeps them), read without touching the disk.
pub fn resolved(v: &Value) -> CoreResult<Option<LogFiles>> {
    let bad = || CoreError::invalid_option("logFiles", "must be the manager's resolved log options");
    match v {
        Value::Undefined | Value::Null => Ok(None),
        Value::Object(_) => {
            let Value::String(dir) = v.get("directory") else { return Err(bad()) };
            let max_bytes =
                whole("logMaxBytes", v.get("maxBytes"), MIN_FILE_BYTES, u64::MAX as f64)?.ok_or_else(bad)?;
            let keep = whole("logKeep", v.get("keep"), 1, MAX_KEEP as f64)?.ok_or_else(bad)?;
            Ok(Some(LogFiles { directory: PathBuf::from(dir), max_bytes, keep: keep as usize }))
        }
        _ => Err(bad()),
    }
}

fn whole(name: &str, v: &Value, min: u64, max: f64) -> CoreResult<Option<u64>> {
    match v {
        Value::Undefined => Ok(None),
        Value::Number(n) if n.fract() == 0.0 && *n >= min as f64 && *n <= max => Ok(Some(*n as u64)),
        other => Err(CoreError::invalid_option(
            name,
            format!("{name} must be an integer from {min} to {max}, got {}", other.describe()),
        )),
    }
}

fn io_reason(e: &std::io::Error) -> String {
    e.raw_os_error().map(crate::core::error::errno_name).unwrap_or_else(|| e.to_string())
}

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
    /// Handed to the writer thread and not yet taken up by it.
    scheduled: bool,
}

#[derive(Default)]
pub(super) struct Kept {
    /// The first sequence number of each kept file, oldest first; the last is `<id>.log`.
    pub(super) firsts: VecDeque<u64>,
    /// The newest sequence number written whole.
    pub(super) written: u64,
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
            files,
            id: id.to_string(),
            queue: Mutex::default(),
            kept: Mutex::default(),
            drained: Notify::new(),
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
            let weight = disk_frame::payload_len(&ev.body);
            if q.bytes + weight > HARD_QUEUE_BYTES {
                self.stop(&mut q, "the disk could not keep up with the output".into());
                return;
            }
            q.bytes += weight;
            q.events.push_back(ev.clone());
            !std::mem::replace(&mut q.scheduled, true)
        };
        if schedule {
            writer().send(self.clone());
        }
    }

    /// Whether the queue is long enough that the reader tasks should wait for the writer.
    pub(super) fn behind(&self) -> bool {
        self.queue_lock().bytes > SOFT_QUEUE_BYTES
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
        q.scheduled = false;
        self.drained.notify_waiters();
    }

    /// The writer's part: writes what is queued, then gives the log back to the queue side.
    fn write_queued(&self) {
        loop {
            let batch: Vec<LogEvent> = {
                let mut q = self.queue_lock();
                if q.stopped || q.events.is_empty() {
                    q.scheduled = false;
                    return;
                }
                q.events.iter().take(64).cloned().collect()
            };
            for ev in &batch {
                if let Err(e) = self.write_one(ev) {
                    self.kept_lock().file = None;
                    let mut q = self.queue_lock();
                    self.stop(&mut q, e.to_string());
                    return;
                }
            }
            {
                let mut q = self.queue_lock();
                for _ in 0..batch.len() {
                    if let Some(ev) = q.events.pop_front() {
                        q.bytes -= disk_frame::payload_len(&ev.body);
                    }
                }
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

/// The one writer thread, started at the first event any process logs to disk.
struct Writer(Mutex<mpsc::Sender<Arc<DiskLog>>>);

impl Writer {
    fn send(&self, log: Arc<DiskLog>) {
        let tx = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(mpsc::SendError(log)) = tx.send(log) {
            let mut q = log.queue_lock();
            log.stop(&mut q, "the writer thread is gone".into());
        }
    }
}

fn writer() -> &'static Writer {
    static WRITER: OnceLock<Writer> = OnceLock::new();
    WRITER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Arc<DiskLog>>();
        let spawned = std::thread::Builder::new().name("procvisor-logs".into()).spawn(move || {
            for log in rx {
                log.write_queued();
            }
        });
        // Without the thread the receiver is gone with the closure, and each log stops on its
        // first send, reporting why.
        drop(spawned);
        Writer(Mutex::new(tx))
    })
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
