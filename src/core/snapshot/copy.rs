//! The copier: a walk through directory descriptors, regular files fanned out to a few threads.

use super::prefetch;
use super::record::{self, Entries, Entry};
use super::tree::{self, DirMeta};
use super::walk::walk;
use super::*;
use std::ffi::{CStr, OsStr};
use std::os::fd::OwnedFd;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

pub(super) fn cstring(p: &Path) -> Result<CString, Fail> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Fail::new(libc::EINVAL, "open", p))
}

pub(super) fn name_path(name: &CStr) -> &Path {
    Path::new(OsStr::from_bytes(name.to_bytes()))
}

/// What an entry is, from `d_type` or else from its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    Link,
    Other(&'static str),
}

pub(super) fn kind_of_mode(mode: libc::mode_t) -> Kind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Link,
        libc::S_IFIFO => Kind::Other("fifo"),
        libc::S_IFSOCK => Kind::Other("socket"),
        libc::S_IFCHR => Kind::Other("character device"),
        libc::S_IFBLK => Kind::Other("block device"),
        _ => Kind::Other("unknown"),
    }
}

pub(super) fn kind_of_dtype(t: u8) -> Option<Kind> {
    match t {
        libc::DT_REG => Some(Kind::File),
        libc::DT_DIR => Some(Kind::Dir),
        libc::DT_LNK => Some(Kind::Link),
        libc::DT_FIFO => Some(Kind::Other("fifo")),
        libc::DT_SOCK => Some(Kind::Other("socket")),
        libc::DT_CHR => Some(Kind::Other("character device")),
        libc::DT_BLK => Some(Kind::Other("block device")),
        _ => None,
    }
}

/// Where a copy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// A new directory, which must not exist yet.
    Create,
    /// An existing, empty directory, which receives the tree's contents and root metadata.
    Into,
}

/// How many threads copy files when the caller does not say: more than the cores, because a copy
/// waits on the disk and on system calls (a few per file) more than it computes; measured on a
/// cold cache, 2 cores copy a 16,000-file tree 2× faster with 4 to 8 threads than with 1.
pub fn default_threads() -> usize {
    (std::thread::available_parallelism().map_or(2, |n| n.get()) * 2).clamp(4, 8)
}

/// One regular file for a copying thread.
pub(super) struct Job {
    pub(super) src_dir: Arc<OwnedFd>,
    pub(super) dst_dir: Arc<OwnedFd>,
    /// The same directory in the previous capture, where it has one.
    pub(super) base_dir: Option<Arc<OwnedFd>>,
    pub(super) name: CString,
    pub(super) rel: PathBuf,
}

/// A previous capture of the same working directory, whose files a capture links where the
/// record says they have not changed since.
pub(super) struct Base {
    pub(super) dir: OwnedFd,
    pub(super) entries: record::Table,
}

/// What a capture adds to a copy: the previous capture to link from, and a record to make.
#[derive(Default)]
pub(super) struct Recording {
    pub(super) base: Option<Base>,
    pub(super) record: bool,
}

/// What the copying threads share.
pub(super) struct Shared<'a> {
    pub(super) src_root: &'a Path,
    pub(super) dst_root: &'a Path,
    pub(super) failed: AtomicBool,
    pub(super) first_error: Mutex<Option<Fail>>,
    pub(super) skipped: Mutex<Vec<Skipped>>,
    pub(super) files: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) reflinked: AtomicU64,
    pub(super) symlinks: AtomicU64,
    /// Bytes of data written (not linked, not cloned).
    pub(super) new_bytes: AtomicU64,
    /// Files linked from the previous capture.
    pub(super) linked: AtomicU64,
    pub(super) base: Option<&'a record::Table>,
    /// The source is a working directory, which its processes may change while it is read (a
    /// capture): an entry removed between its listing and its reading is skipped as `VANISHED`
    /// rather than failing the copy. A checkpoint is never written, so in a restore the same
    /// absence is damage, and fails it.
    pub(super) live_source: bool,
    /// The record being made, and the time (ns, the filesystem's clock) before which a file's
    /// last change must lie for it to be in it (see `record::SETTLED_NS`).
    pub(super) record: Option<(Mutex<Entries>, i64)>,
    /// Cleared after the first refusal, so a filesystem without the call costs one syscall
    /// (Linux's `FICLONE` and `copy_file_range`; elsewhere unread).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) try_clone: AtomicBool,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) try_range: AtomicBool,
}

impl<'a> Shared<'a> {
    pub(super) fn new(src_root: &'a Path, dst_root: &'a Path) -> Self {
        Shared {
            src_root,
            dst_root,
            failed: AtomicBool::new(false),
            first_error: Mutex::new(None),
            skipped: Mutex::new(Vec::new()),
            files: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            reflinked: AtomicU64::new(0),
            symlinks: AtomicU64::new(0),
            new_bytes: AtomicU64::new(0),
            linked: AtomicU64::new(0),
            base: None,
            live_source: false,
            record: None,
            try_clone: AtomicBool::new(true),
            try_range: AtomicBool::new(true),
        }
    }

    /// Adds a copied file to the record, if one is made and the file's last change is old
    /// enough for its timestamps to show any later one.
    pub(super) fn note(&self, rel: &Path, st: &libc::stat, stored: u64) {
        if let Some((entries, before)) = &self.record {
            if record::settled(st, *before) {
                let key = rel.as_os_str().as_bytes().to_vec();
                entries.lock().unwrap_or_else(|e| e.into_inner()).push((key, Entry::of(st, stored)));
            }
        }
    }

    /// The first failure, if any, and the report of what was done.
    pub(super) fn finish(&self, directories: u64) -> Result<Report, Fail> {
        if let Some(f) = self.first_error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(f);
        }
        let mut skipped = std::mem::take(&mut *self.skipped.lock().unwrap_or_else(|e| e.into_inner()));
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Report {
            files: self.files.load(Ordering::Relaxed),
            directories,
            symlinks: self.symlinks.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            reflinked: self.reflinked.load(Ordering::Relaxed),
            new_bytes: self.new_bytes.load(Ordering::Relaxed),
            unchanged: self.linked.load(Ordering::Relaxed),
            skipped,
            ..Report::default()
        })
    }

    pub(super) fn fail(&self, f: Fail) {
        let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(f);
        }
        self.failed.store(true, Ordering::Relaxed);
    }

    pub(super) fn skip(&self, rel: &Path, kind: &'static str) {
        self.skipped.lock().unwrap_or_else(|e| e.into_inner()).push(Skipped { path: rel.display().to_string(), kind });
    }

    /// Whether `errno`, met reading the source entry `rel`, says that it was removed since it was
    /// listed, where that is no failure (`live_source`); if so, it is reported as skipped.
    pub(super) fn vanished(&self, rel: &Path, errno: i32) -> bool {
        let gone = self.live_source && errno == libc::ENOENT;
        if gone {
            self.skip(rel, VANISHED);
        }
        gone
    }

    pub(super) fn src(&self, rel: &Path) -> PathBuf {
        self.src_root.join(rel)
    }

    pub(super) fn dst(&self, rel: &Path) -> PathBuf {
        self.dst_root.join(rel)
    }
}

#[cfg(test)]
thread_local! {
    /// Runs once between the copy of the entries and the setting of directory metadata, so a
    /// test can change the destination at that moment.
    pub(super) static BEFORE_DIR_META: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::RefCell::new(None) };
}

/// A test's hook on what a walk reads (see `LISTED`).
#[cfg(test)]
pub(super) type Hook = Option<Box<dyn FnMut(&Path)>>;

#[cfg(test)]
thread_local! {
    /// Runs each time a walk has listed a directory (its path relative to the root), so a test
    /// can change the trees at that moment, as a process may.
    pub(super) static LISTED: std::cell::RefCell<Hook> = const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
pub(super) fn listed(rel: &Path) {
    LISTED.with(|h| {
        if let Some(f) = h.borrow_mut().as_mut() {
            f(rel)
        }
    });
}

/// How many threads read directories ahead of a capture that links files. Its links and the
/// directories it makes are the kernel's CPU work; more readers beside them made it no faster
/// (4 against 2: slower in 2 of 2 alternated series).
const PREFETCH_THREADS: usize = 2;

/// How many files of one directory go to a copying thread together.
const BATCH: usize = 32;

/// Jobs on their way to the copying threads, a directory's files together: two threads writing
/// into one directory wait for each other on its lock in the kernel, so each takes a batch.
pub(super) struct Batches<'t, J> {
    tx: &'t mpsc::SyncSender<Vec<J>>,
    open: Vec<J>,
}

impl<J> Batches<'_, J> {
    /// Adds a job to the open batch; false once the threads are gone (a job failed).
    pub(super) fn push(&mut self, job: J) -> bool {
        self.open.push(job);
        self.open.len() < BATCH || self.flush()
    }

    /// Sends the open batch: the walk is leaving its directory.
    pub(super) fn flush(&mut self) -> bool {
        self.open.is_empty() || self.tx.send(std::mem::take(&mut self.open)).is_ok()
    }
}

/// Runs `work` on `threads` threads for every job `produce` sends, until it returns or a job
/// fails. A bounded queue keeps the producer at most this far ahead, which bounds the directory
/// descriptors the queued jobs hold open.
pub(super) fn on_threads<J: Send>(
    shared: &Shared,
    threads: usize,
    work: impl Fn(J, &mut Vec<u8>) -> Result<(), Fail> + Sync,
    produce: impl FnOnce(&mut Batches<J>) -> Result<(), Fail>,
) {
    let (tx, rx) = mpsc::sync_channel::<Vec<J>>(512 / BATCH);
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut buf = Vec::new();
                loop {
                    let batch = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
                        Ok(batch) => batch,
                        Err(_) => return,
                    };
                    for job in batch {
                        if shared.failed.load(Ordering::Relaxed) {
                            break;
                        }
                        if let Err(f) = work(job, &mut buf) {
                            shared.fail(f);
                        }
                    }
                }
            });
        }
        let mut batches = Batches { tx: &tx, open: Vec::new() };
        let produced = produce(&mut batches).map(|()| batches.flush());
        drop(batches);
        drop(tx);
        if let Err(f) = produced {
            shared.fail(f);
        }
    });
}

/// Copies the tree at `src` to `dst` (see `Dest`) with `threads` copying threads. On failure
/// nothing of the copy is left: a created `dst` is removed, and what was put into an existing
/// one is taken out again.
pub(super) fn copy_tree(src: &Path, dst: &Path, dest: Dest, threads: usize) -> Result<Report, Fail> {
    copy_tree_recorded(src, dst, dest, threads, Recording::default()).map(|(r, _)| r)
}

/// `copy_tree`, linking from `rec.base` the files its record vouches for, and returning the
/// record of the copy when `rec.record` asks for one.
pub(super) fn copy_tree_recorded(
    src: &Path,
    dst: &Path,
    dest: Dest,
    threads: usize,
    rec: Recording,
) -> Result<(Report, Entries), Fail> {
    let started = Instant::now();
    let src_c = cstring(src)?;
    let dst_c = cstring(dst)?;
    // The roots are the caller's paths and are resolved as given (a working directory may be
    // reached through a symlink); everything below them is walked without following links.
    let src_root = sys::openat(libc::AT_FDCWD, &src_c, libc::O_RDONLY | libc::O_DIRECTORY, 0)
        .map_err(|e| Fail::new(e, "open", src))?;
    let src_stat = sys::fstat(src_root.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", src))?;
    if dest == Dest::Create {
        sys::mkdirat(libc::AT_FDCWD, &dst_c, 0o700).map_err(|e| Fail::new(e, "mkdir", dst))?;
    }
    let dst_root = match sys::openat(libc::AT_FDCWD, &dst_c, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
        Ok(fd) => Arc::new(fd),
        Err(e) => {
            if dest == Dest::Create {
                let _ = remove_tree(dst);
            }
            return Err(Fail::new(e, "open", dst));
        }
    };
    if dest == Dest::Into {
        // Everything in it afterwards is then the copy's, and can be taken out on failure.
        match sys::entries(&dst_root) {
            Ok(e) if e.is_empty() => {}
            Ok(_) => return Err(Fail::new(libc::ENOTEMPTY, "open", dst)),
            Err(e) => return Err(Fail::new(e, "scandir", dst)),
        }
    }
    let mut shared = Shared::new(src, dst);
    shared.base = rec.base.as_ref().map(|b| &b.entries);
    // Only a capture records, and only a capture reads a working directory.
    shared.live_source = rec.record;
    if rec.record {
        // The directory just made tells the filesystem's own time, the clock of the times
        // compared with it (see `record::SETTLED_NS`).
        let now = sys::fstat(dst_root.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", dst))?;
        shared.record = Some((Mutex::new(Vec::new()), record::ctime_ns(&now) - record::SETTLED_NS));
    }
    let base_root = rec.base.as_ref().and_then(|b| sys::dup(b.dir.as_raw_fd()).ok()).map(Arc::new);
    // A capture that links most of its files waits on directories more than on data: both trees
    // are read ahead of it (see `prefetch`).
    let ahead: Vec<prefetch::Root> = match &rec.base {
        Some(b) => [(src_root.as_raw_fd(), true), (b.dir.as_raw_fd(), false)]
            .into_iter()
            .filter_map(|(fd, listed)| prefetch::reopen(fd).ok().map(|fd| (fd, listed)))
            .collect(),
        None => Vec::new(),
    };
    let mut top_level: Vec<CString> = Vec::new();
    let src_root = Arc::new(src_root);
    let result = prefetch::ahead(ahead, PREFETCH_THREADS, |listed| {
        walk_and_copy(&shared, listed, src_root, dst_root.clone(), base_root, &src_stat, threads, &mut top_level)
    });
    match result {
        Ok(mut report) => {
            report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            let entries = shared.record.map(|(m, _)| m.into_inner().unwrap_or_else(|e| e.into_inner()));
            Ok((report, entries.unwrap_or_default()))
        }
        Err(f) => {
            match dest {
                Dest::Create => {
                    let _ = remove_tree(dst);
                }
                Dest::Into => {
                    for name in &top_level {
                        let _ = remove_entry(dst_root.as_raw_fd(), name);
                    }
                }
            }
            Err(f)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn walk_and_copy(
    shared: &Shared,
    listed: &prefetch::Listings,
    src_fd: Arc<OwnedFd>,
    dst_fd: Arc<OwnedFd>,
    base_fd: Option<Arc<OwnedFd>>,
    root_stat: &libc::stat,
    threads: usize,
    top_level: &mut Vec<CString>,
) -> Result<Report, Fail> {
    // Directories in the order they were made; their own mode and times are set afterwards.
    let mut dirs: Vec<DirMeta> = Vec::new();
    on_threads(
        shared,
        threads,
        |job: Job, buf| shared.copy_file(&job, buf),
        |tx| walk(shared, listed, src_fd, root_stat, dst_fd.clone(), base_fd, tx, &mut dirs, top_level),
    );
    if let Some(f) = shared.first_error.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(f);
    }
    #[cfg(test)]
    if let Some(f) = BEFORE_DIR_META.with(|h| h.borrow_mut().take()) {
        f();
    }
    // Last, because writing into a directory changes its mtime and a read-only mode would stop
    // the copy; through descriptors, because a path may be too long to resolve or point elsewhere.
    tree::set_dirs_meta(dst_fd, root_stat, &dirs).map_err(|(e, call, names)| {
        let rel: PathBuf = names.iter().map(|n| name_path(n)).collect();
        Fail::new(e, call, shared.dst(&rel))
    })?;
    shared.finish(dirs.len() as u64)
}
