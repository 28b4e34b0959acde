//! Checkpoints of a sandbox's working directory: a named copy under a checkpoints directory,
//! in the layout Mastra's `LocalSandbox` uses (`<checkpoints>/<name>`, written to a temporary
//! sibling and renamed into place), so a checkpoint of either restores in the other.
//!
//! The copier walks the tree through directory descriptors (`openat` with `O_NOFOLLOW`), never
//! through paths, so a symlink is copied as a link and never followed, even one that appears in
//! place of a directory while the copy runs. Regular files go to a few threads: each is cloned
//! (`FICLONE`) where the filesystem shares extents, otherwise copied in the kernel
//! (`copy_file_range`), otherwise read and written. Modes and times are copied; a directory's
//! own are set last, deepest first, because writing into it changes its mtime and a read-only
//! mode would stop the copy. Sockets, FIFOs and devices cannot be copied as data and are skipped
//! and reported.

use crate::core::error::{errno_name, CoreError, CoreResult};
use crate::core::value::Value;
use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// An entry that was not copied because it holds no data a copy could carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Relative to the root of the copy.
    pub path: String,
    /// "socket", "fifo", "character device" or "block device".
    pub kind: &'static str,
}

/// What one copy did.
#[derive(Debug, Default, Clone)]
pub struct Report {
    pub files: u64,
    pub directories: u64,
    pub symlinks: u64,
    pub bytes: u64,
    /// Files that share their extents with the source (no data was copied).
    pub reflinked: u64,
    pub skipped: Vec<Skipped>,
    pub duration_ms: f64,
}

/// The options a sandbox's lifetime and checkpoints are read from.
#[derive(Debug, Clone, PartialEq)]
pub struct LifecycleOptions {
    pub timeout_ms: Option<f64>,
    pub snapshot_on_stop: bool,
}

/// Reads `timeoutMs` (absent, or a positive finite number) and `snapshotOnStop` (absent or a
/// boolean) from a sandbox's options object.
pub fn lifecycle_options(v: &Value) -> CoreResult<LifecycleOptions> {
    let timeout_ms = match v.get("timeoutMs") {
        Value::Undefined => None,
        Value::Number(n) if n.is_finite() && *n > 0.0 => Some(*n),
        other => {
            return Err(CoreError::invalid_option(
                "timeoutMs",
                format!("timeoutMs must be a positive finite number of milliseconds, got {}", other.describe()),
            ))
        }
    };
    let snapshot_on_stop = match v.get("snapshotOnStop") {
        Value::Undefined => false,
        Value::Bool(b) => *b,
        other => {
            return Err(CoreError::invalid_option(
                "snapshotOnStop",
                format!("snapshotOnStop must be a boolean, got {}", other.describe()),
            ))
        }
    };
    Ok(LifecycleOptions { timeout_ms, snapshot_on_stop })
}

/// Mastra's rule for checkpoint names, so that both read the same directory the same way.
pub fn check_name(name: &str) -> CoreResult<()> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if first_ok && rest_ok && !name.contains("..") {
        Ok(())
    } else {
        Err(CoreError::invalid_option("checkpointName", format!("Invalid checkpoint name: {name}")))
    }
}

/// A system call that failed, on which path.
#[derive(Debug)]
struct Fail {
    errno: i32,
    syscall: &'static str,
    path: PathBuf,
}

impl Fail {
    fn new(errno: i32, syscall: &'static str, path: impl Into<PathBuf>) -> Self {
        Fail { errno, syscall, path: path.into() }
    }

    fn into_core(self, what: String) -> CoreError {
        let text = std::io::Error::from_raw_os_error(self.errno).to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        CoreError::SnapshotFailed {
            what,
            path: self.path.display().to_string(),
            syscall: self.syscall.to_string(),
            reason: format!("{}: {}", errno_name(self.errno), text),
            errno: Some(self.errno),
        }
    }
}

fn io_fail(e: std::io::Error, syscall: &'static str, path: &Path) -> Fail {
    Fail::new(e.raw_os_error().unwrap_or(libc::EIO), syscall, path)
}

mod sys {
    //! The few system calls the copier makes, each retried on EINTR, each returning the errno.
    use std::ffi::{CStr, CString};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

    pub fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
    }

    fn retry<T: Copy + PartialOrd + Default>(mut f: impl FnMut() -> T) -> Result<T, i32> {
        loop {
            let r = f();
            if r >= T::default() {
                return Ok(r);
            }
            let e = errno();
            if e != libc::EINTR {
                return Err(e);
            }
        }
    }

    pub fn openat(dir: RawFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> Result<OwnedFd, i32> {
        let fd = retry(|| unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) })?;
        // SAFETY: a descriptor openat just returned, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    pub fn open_dir(dir: RawFd, name: &CStr) -> Result<OwnedFd, i32> {
        openat(dir, name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0)
    }

    pub fn fstat(fd: RawFd) -> Result<libc::stat, i32> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        retry(|| unsafe { libc::fstat(fd, st.as_mut_ptr()) })?;
        // SAFETY: fstat succeeded, so it filled the struct.
        Ok(unsafe { st.assume_init() })
    }

    pub fn lstatat(dir: RawFd, name: &CStr) -> Result<libc::stat, i32> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        retry(|| unsafe { libc::fstatat(dir, name.as_ptr(), st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) })?;
        // SAFETY: fstatat succeeded, so it filled the struct.
        Ok(unsafe { st.assume_init() })
    }

    pub fn mkdirat(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), i32> {
        retry(|| unsafe { libc::mkdirat(dir, name.as_ptr(), mode) }).map(drop)
    }

    pub fn readlinkat(dir: RawFd, name: &CStr) -> Result<CString, i32> {
        let mut buf = vec![0u8; 256];
        loop {
            let n = retry(|| unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) })?;
            let n = n as usize;
            if n < buf.len() {
                buf.truncate(n);
                return CString::new(buf).map_err(|_| libc::EINVAL);
            }
            buf.resize(buf.len() * 4, 0);
        }
    }

    pub fn symlinkat(target: &CStr, dir: RawFd, name: &CStr) -> Result<(), i32> {
        retry(|| unsafe { libc::symlinkat(target.as_ptr(), dir, name.as_ptr()) }).map(drop)
    }

    pub fn times(st: &libc::stat) -> [libc::timespec; 2] {
        [
            libc::timespec { tv_sec: st.st_atime, tv_nsec: st.st_atime_nsec as _ },
            libc::timespec { tv_sec: st.st_mtime, tv_nsec: st.st_mtime_nsec as _ },
        ]
    }

    pub fn futimens(fd: RawFd, st: &libc::stat) -> Result<(), i32> {
        let t = times(st);
        retry(|| unsafe { libc::futimens(fd, t.as_ptr()) }).map(drop)
    }

    pub fn lutimensat(dir: RawFd, name: &CStr, st: &libc::stat) -> Result<(), i32> {
        let t = times(st);
        retry(|| unsafe { libc::utimensat(dir, name.as_ptr(), t.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) }).map(drop)
    }

    pub fn fchmod(fd: RawFd, mode: libc::mode_t) -> Result<(), i32> {
        retry(|| unsafe { libc::fchmod(fd, mode & 0o7777) }).map(drop)
    }

    pub fn unlinkat(dir: RawFd, name: &CStr, flags: libc::c_int) -> Result<(), i32> {
        retry(|| unsafe { libc::unlinkat(dir, name.as_ptr(), flags) }).map(drop)
    }

    /// The names in a directory (without `.` and `..`) and their `d_type`.
    pub fn entries(dir: &OwnedFd) -> Result<Vec<(CString, u8)>, i32> {
        // fdopendir takes the descriptor it is given, and a duplicate shares the file offset, so
        // the stream is rewound before reading.
        let dup = retry(|| unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
        let stream = unsafe { libc::fdopendir(dup) };
        if stream.is_null() {
            let e = errno();
            // SAFETY: fdopendir failed, so the duplicate is still ours to close.
            drop(unsafe { OwnedFd::from_raw_fd(dup) });
            return Err(e);
        }
        unsafe { libc::rewinddir(stream) };
        let mut out = Vec::new();
        let result = loop {
            nix::errno::Errno::clear();
            // SAFETY: a stream fdopendir returned, read by this thread only.
            let ent = unsafe { libc::readdir(stream) };
            if ent.is_null() {
                let e = nix::errno::Errno::last_raw();
                break if e == 0 { Ok(()) } else { Err(e) };
            }
            // SAFETY: readdir returned an entry whose name is NUL-terminated.
            let (name, kind) = unsafe { (CStr::from_ptr((*ent).d_name.as_ptr()), (*ent).d_type) };
            let bytes = name.to_bytes();
            if bytes != b"." && bytes != b".." {
                out.push((name.to_owned(), kind));
            }
        };
        unsafe { libc::closedir(stream) };
        result.map(|()| out)
    }
}

fn cstring(p: &Path) -> Result<CString, Fail> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Fail::new(libc::EINVAL, "open", p))
}

fn name_path(name: &CStr) -> &Path {
    Path::new(OsStr::from_bytes(name.to_bytes()))
}

/// What an entry is, from `d_type` or else from its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Link,
    Other(&'static str),
}

fn kind_of_mode(mode: libc::mode_t) -> Kind {
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

fn kind_of_dtype(t: u8) -> Option<Kind> {
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
struct Job {
    src_dir: Arc<OwnedFd>,
    dst_dir: Arc<OwnedFd>,
    name: CString,
    rel: PathBuf,
}

/// What the copying threads share.
struct Shared<'a> {
    src_root: &'a Path,
    dst_root: &'a Path,
    failed: AtomicBool,
    first_error: Mutex<Option<Fail>>,
    skipped: Mutex<Vec<Skipped>>,
    files: AtomicU64,
    bytes: AtomicU64,
    reflinked: AtomicU64,
    symlinks: AtomicU64,
    /// Cleared after the first refusal, so a filesystem without the call costs one syscall.
    try_clone: AtomicBool,
    try_range: AtomicBool,
}

impl Shared<'_> {
    fn fail(&self, f: Fail) {
        let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(f);
        }
        self.failed.store(true, Ordering::Relaxed);
    }

    fn skip(&self, rel: &Path, kind: &'static str) {
        self.skipped.lock().unwrap_or_else(|e| e.into_inner()).push(Skipped { path: rel.display().to_string(), kind });
    }

    fn src(&self, rel: &Path) -> PathBuf {
        self.src_root.join(rel)
    }

    fn dst(&self, rel: &Path) -> PathBuf {
        self.dst_root.join(rel)
    }

    fn copy_link(&self, src_dir: RawFd, dst_dir: RawFd, name: &CStr, rel: &Path) -> Result<(), Fail> {
        let target = sys::readlinkat(src_dir, name).map_err(|e| Fail::new(e, "readlink", self.src(rel)))?;
        let st = sys::lstatat(src_dir, name).map_err(|e| Fail::new(e, "lstat", self.src(rel)))?;
        sys::symlinkat(&target, dst_dir, name).map_err(|e| Fail::new(e, "symlink", self.dst(rel)))?;
        // Some filesystems cannot time a link itself; the link is still a faithful copy.
        match sys::lutimensat(dst_dir, name, &st) {
            Ok(()) | Err(libc::EOPNOTSUPP) | Err(libc::ENOSYS) => {}
            Err(e) => return Err(Fail::new(e, "utimensat", self.dst(rel))),
        }
        self.symlinks.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn copy_file(&self, job: &Job, buf: &mut Vec<u8>) -> Result<(), Fail> {
        let (sdir, ddir) = (job.src_dir.as_raw_fd(), job.dst_dir.as_raw_fd());
        // O_NONBLOCK: an entry that became a FIFO since it was listed must not block the open.
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
        let src = match sys::openat(sdir, &job.name, flags, 0) {
            Ok(fd) => fd,
            Err(libc::ELOOP) => return self.copy_link(sdir, ddir, &job.name, &job.rel),
            Err(e) => return Err(Fail::new(e, "open", self.src(&job.rel))),
        };
        let st = sys::fstat(src.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", self.src(&job.rel)))?;
        match kind_of_mode(st.st_mode) {
            Kind::File => {}
            Kind::Other(kind) => {
                self.skip(&job.rel, kind);
                return Ok(());
            }
            _ => return Err(Fail::new(libc::EISDIR, "open", self.src(&job.rel))),
        }
        let dflags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let dst = sys::openat(ddir, &job.name, dflags, 0o600).map_err(|e| Fail::new(e, "open", self.dst(&job.rel)))?;
        let size = st.st_size as u64;
        if size > 0 {
            self.copy_data(&src, &dst, job, buf)?;
        }
        sys::fchmod(dst.as_raw_fd(), st.st_mode).map_err(|e| Fail::new(e, "fchmod", self.dst(&job.rel)))?;
        sys::futimens(dst.as_raw_fd(), &st).map_err(|e| Fail::new(e, "futimens", self.dst(&job.rel)))?;
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(size, Ordering::Relaxed);
        Ok(())
    }

    fn copy_data(&self, src: &OwnedFd, dst: &OwnedFd, job: &Job, buf: &mut Vec<u8>) -> Result<(), Fail> {
        let (s, d) = (src.as_raw_fd(), dst.as_raw_fd());
        #[cfg(target_os = "linux")]
        {
            if self.try_clone.load(Ordering::Relaxed) {
                // SAFETY: both descriptors are open; FICLONE reads an int argument.
                if unsafe { libc::ioctl(d, libc::FICLONE, s) } == 0 {
                    self.reflinked.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                // A refusal that is about the filesystem (not this file) will repeat for every
                // file; anything else falls through to a copy, which reports a real error itself.
                if matches!(sys::errno(), libc::EOPNOTSUPP | libc::EXDEV | libc::EINVAL | libc::ENOTTY | libc::ENOSYS) {
                    self.try_clone.store(false, Ordering::Relaxed);
                }
            }
            if self.try_range.load(Ordering::Relaxed) {
                let mut copied = 0u64;
                loop {
                    // SAFETY: both descriptors are open; null offsets use and advance the file positions.
                    let n =
                        unsafe { libc::copy_file_range(s, std::ptr::null_mut(), d, std::ptr::null_mut(), 1 << 30, 0) };
                    if n > 0 {
                        copied += n as u64;
                        continue;
                    }
                    if n == 0 {
                        return Ok(());
                    }
                    match sys::errno() {
                        libc::EINTR => continue,
                        libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL if copied == 0 => {
                            self.try_range.store(false, Ordering::Relaxed);
                            break;
                        }
                        e => return Err(Fail::new(e, "copy_file_range", self.dst(&job.rel))),
                    }
                }
            }
        }
        if buf.is_empty() {
            buf.resize(256 * 1024, 0);
        }
        loop {
            // SAFETY: `buf` is a live allocation of `buf.len()` bytes.
            let n = unsafe { libc::read(s, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match sys::errno() {
                    libc::EINTR => continue,
                    e => return Err(Fail::new(e, "read", self.src(&job.rel))),
                }
            }
            if n == 0 {
                return Ok(());
            }
            let mut off = 0usize;
            while off < n as usize {
                // SAFETY: `off..n` lies within what read just filled.
                let w = unsafe { libc::write(d, buf[off..].as_ptr().cast(), n as usize - off) };
                if w < 0 {
                    match sys::errno() {
                        libc::EINTR => continue,
                        e => return Err(Fail::new(e, "write", self.dst(&job.rel))),
                    }
                }
                off += w as usize;
            }
        }
    }
}

/// A directory being walked: its descriptors on both sides and the entries still to visit.
struct Frame {
    src: Arc<OwnedFd>,
    dst: Arc<OwnedFd>,
    rel: PathBuf,
    entries: std::vec::IntoIter<(CString, u8)>,
}

/// Copies the tree at `src` to `dst` (see `Dest`) with `threads` copying threads. On failure
/// nothing of the copy is left: a created `dst` is removed, and what was put into an existing
/// one is taken out again.
fn copy_tree(src: &Path, dst: &Path, dest: Dest, threads: usize) -> Result<Report, Fail> {
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
    let mut top_level: Vec<CString> = Vec::new();
    let result = walk_and_copy(src, dst, Arc::new(src_root), dst_root.clone(), &src_stat, threads, &mut top_level);
    match result {
        Ok(mut report) => {
            report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            Ok(report)
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

fn walk_and_copy(
    src_root: &Path,
    dst_root: &Path,
    src_fd: Arc<OwnedFd>,
    dst_fd: Arc<OwnedFd>,
    root_stat: &libc::stat,
    threads: usize,
    top_level: &mut Vec<CString>,
) -> Result<Report, Fail> {
    let shared = Shared {
        src_root,
        dst_root,
        failed: AtomicBool::new(false),
        first_error: Mutex::new(None),
        skipped: Mutex::new(Vec::new()),
        files: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        reflinked: AtomicU64::new(0),
        symlinks: AtomicU64::new(0),
        try_clone: AtomicBool::new(true),
        try_range: AtomicBool::new(true),
    };
    // Directories in the order they were made; their own mode and times are set in reverse.
    let mut dirs: Vec<(PathBuf, libc::stat)> = vec![(PathBuf::new(), *root_stat)];
    let threads = threads.max(1);
    // A bounded queue keeps the walker at most this far ahead, which bounds the directory
    // descriptors the queued jobs hold open.
    let (tx, rx) = mpsc::sync_channel::<Job>(512);
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut buf = Vec::new();
                loop {
                    let job = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
                        Ok(job) => job,
                        Err(_) => return,
                    };
                    if shared.failed.load(Ordering::Relaxed) {
                        continue;
                    }
                    if let Err(f) = shared.copy_file(&job, &mut buf) {
                        shared.fail(f);
                    }
                }
            });
        }
        let walked = walk(&shared, src_fd, dst_fd, &tx, &mut dirs, top_level);
        drop(tx);
        if let Err(f) = walked {
            shared.fail(f);
        }
    });
    if let Some(f) = shared.first_error.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(f);
    }
    for (rel, st) in dirs.iter().rev() {
        set_dir_meta(&shared, rel, st)?;
    }
    let mut skipped = std::mem::take(&mut *shared.skipped.lock().unwrap_or_else(|e| e.into_inner()));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Report {
        files: shared.files.load(Ordering::Relaxed),
        directories: dirs.len() as u64 - 1,
        symlinks: shared.symlinks.load(Ordering::Relaxed),
        bytes: shared.bytes.load(Ordering::Relaxed),
        reflinked: shared.reflinked.load(Ordering::Relaxed),
        skipped,
        duration_ms: 0.0,
    })
}

fn set_dir_meta(shared: &Shared, rel: &Path, st: &libc::stat) -> Result<(), Fail> {
    let path = shared.dst(rel);
    let fd = sys::openat(libc::AT_FDCWD, &cstring(&path)?, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0)
        .map_err(|e| Fail::new(e, "open", &path))?;
    sys::fchmod(fd.as_raw_fd(), st.st_mode).map_err(|e| Fail::new(e, "fchmod", &path))?;
    sys::futimens(fd.as_raw_fd(), st).map_err(|e| Fail::new(e, "futimens", &path))
}

fn walk(
    shared: &Shared,
    src_fd: Arc<OwnedFd>,
    dst_fd: Arc<OwnedFd>,
    tx: &mpsc::SyncSender<Job>,
    dirs: &mut Vec<(PathBuf, libc::stat)>,
    top_level: &mut Vec<CString>,
) -> Result<(), Fail> {
    let entries = sys::entries(&src_fd).map_err(|e| Fail::new(e, "scandir", shared.src_root))?;
    let mut stack = vec![Frame { src: src_fd, dst: dst_fd, rel: PathBuf::new(), entries: entries.into_iter() }];
    while let Some(frame) = stack.last_mut() {
        if shared.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some((name, dtype)) = frame.entries.next() else {
            stack.pop();
            continue;
        };
        let rel = frame.rel.join(name_path(&name));
        if frame.rel.as_os_str().is_empty() {
            top_level.push(name.clone());
        }
        let (sdir, ddir) = (frame.src.as_raw_fd(), frame.dst.as_raw_fd());
        let kind = match kind_of_dtype(dtype) {
            Some(k) => k,
            None => {
                kind_of_mode(sys::lstatat(sdir, &name).map_err(|e| Fail::new(e, "lstat", shared.src(&rel)))?.st_mode)
            }
        };
        match kind {
            Kind::File => {
                let job = Job { src_dir: frame.src.clone(), dst_dir: frame.dst.clone(), name, rel };
                if tx.send(job).is_err() {
                    return Ok(());
                }
            }
            Kind::Link => shared.copy_link(sdir, ddir, &name, &rel)?,
            Kind::Other(kind) => shared.skip(&rel, kind),
            Kind::Dir => {
                let s = match sys::open_dir(sdir, &name) {
                    Ok(fd) => fd,
                    // Replaced by a link since it was listed: copied as what it is now.
                    Err(libc::ELOOP) | Err(libc::ENOTDIR) => {
                        match kind_of_mode(
                            sys::lstatat(sdir, &name).map_err(|e| Fail::new(e, "lstat", shared.src(&rel)))?.st_mode,
                        ) {
                            Kind::Link => shared.copy_link(sdir, ddir, &name, &rel)?,
                            _ => return Err(Fail::new(libc::ENOTDIR, "open", shared.src(&rel))),
                        }
                        continue;
                    }
                    Err(e) => return Err(Fail::new(e, "open", shared.src(&rel))),
                };
                let st = sys::fstat(s.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", shared.src(&rel)))?;
                sys::mkdirat(ddir, &name, 0o700).map_err(|e| Fail::new(e, "mkdir", shared.dst(&rel)))?;
                let d = sys::open_dir(ddir, &name).map_err(|e| Fail::new(e, "open", shared.dst(&rel)))?;
                let entries = sys::entries(&s).map_err(|e| Fail::new(e, "scandir", shared.src(&rel)))?;
                dirs.push((rel.clone(), st));
                stack.push(Frame { src: Arc::new(s), dst: Arc::new(d), rel, entries: entries.into_iter() });
            }
        }
    }
    Ok(())
}

/// Removes one entry of `dir`, a directory with everything in it.
fn remove_entry(dir: RawFd, name: &CStr) -> Result<(), i32> {
    match sys::unlinkat(dir, name, 0) {
        Ok(()) | Err(libc::ENOENT) => return Ok(()),
        Err(libc::EISDIR) | Err(libc::EPERM) => {}
        Err(e) => return Err(e),
    }
    // A checkpoint keeps read-only modes; its owner may still make a directory writable again.
    let _ = unsafe { libc::fchmodat(dir, name.as_ptr(), 0o700, 0) };
    let sub = sys::open_dir(dir, name)?;
    for (child, _) in sys::entries(&sub)? {
        remove_entry(sub.as_raw_fd(), &child)?;
    }
    drop(sub);
    match sys::unlinkat(dir, name, libc::AT_REMOVEDIR) {
        Ok(()) | Err(libc::ENOENT) => Ok(()),
        Err(e) => Err(e),
    }
}

/// `rm -rf` without following links. A missing path is not an error.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let dir = std::fs::File::open(parent)?;
    let name = CString::new(name.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    remove_entry(dir.as_raw_fd(), &name).map_err(std::io::Error::from_raw_os_error)
}

/// A short random suffix for temporary names (as Mastra's: 12 hex digits).
fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// The file next to a checkpoint that says which sandbox made it. A checkpoint directory is
/// never written into, so it restores exactly what was captured; and a name starting with a
/// dot is one no checkpoint can have.
fn owner_file(checkpoints: &Path, name: &str) -> PathBuf {
    checkpoints.join(format!(".owner-{name}"))
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Records that `owner` made the checkpoint now at `target`, by the directory's identity (device
/// and inode), so that a later capture by anyone else (a new directory renamed over it) is not
/// taken for ours.
fn write_owner(checkpoints: &Path, name: &str, owner: &str, target: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(target)?;
    let text = format!("procvisor checkpoint owner\nid={}\ndev={}\nino={}\n", hex(owner), meta.dev(), meta.ino());
    let tmp = checkpoints.join(format!(".tmp-owner-{name}-{}", random_hex()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, owner_file(checkpoints, name)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn read_owner(path: &Path) -> Option<(String, u64, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != "procvisor checkpoint owner" {
        return None;
    }
    let (mut id, mut dev, mut ino) = (None, None, None);
    for line in lines {
        match line.split_once('=') {
            Some(("id", v)) => id = Some(v.to_string()),
            Some(("dev", v)) => dev = v.parse().ok(),
            Some(("ino", v)) => ino = v.parse().ok(),
            _ => {}
        }
    }
    Some((id?, dev?, ino?))
}

/// Captures `workdir` as checkpoint `name` under `checkpoints`: a copy to `.tmp-<name>-<hex>`,
/// then the old checkpoint renamed away and the copy renamed into place, so a reader sees
/// either the old checkpoint or the new one, whole. On any failure the old checkpoint is left
/// as it was. With `owner`, the checkpoint is recorded as that sandbox's.
pub fn capture(
    workdir: &Path,
    checkpoints: &Path,
    name: &str,
    owner: Option<&str>,
    threads: usize,
) -> CoreResult<Report> {
    check_name(name)?;
    let what = || format!("capture of checkpoint {name:?}");
    std::fs::create_dir_all(checkpoints).map_err(|e| io_fail(e, "mkdir", checkpoints).into_core(what()))?;
    let target = checkpoints.join(name);
    let tmp = checkpoints.join(format!(".tmp-{name}-{}", random_hex()));
    let backup = checkpoints.join(format!(".bak-{name}-{}", random_hex()));
    let report = copy_tree(workdir, &tmp, Dest::Create, threads).map_err(|f| f.into_core(what()))?;
    let moved = match std::fs::rename(&target, &backup) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            let _ = remove_tree(&tmp);
            return Err(io_fail(e, "rename", &target).into_core(what()));
        }
    };
    if let Err(e) = std::fs::rename(&tmp, &target) {
        let _ = remove_tree(&tmp);
        if moved {
            let _ = std::fs::rename(&backup, &target);
        }
        return Err(io_fail(e, "rename", &tmp).into_core(what()));
    }
    if moved {
        let _ = remove_tree(&backup);
    }
    if let Some(owner) = owner {
        // The checkpoint is in place either way; without the record it is merely never taken
        // for ours, which is the safe side.
        let _ = write_owner(checkpoints, name, owner, &target);
    }
    Ok(report)
}

/// Restores the checkpoint at `checkpoint` into `workdir`, an existing empty directory. On
/// failure the working directory is left empty again.
pub fn restore(checkpoint: &Path, workdir: &Path, threads: usize) -> CoreResult<Report> {
    copy_tree(checkpoint, workdir, Dest::Into, threads)
        .map_err(|f| f.into_core(format!("restore of checkpoint {:?}", checkpoint.display().to_string())))
}

/// Deletes every checkpoint under `checkpoints` that `owner` made and that is still the one it
/// made; returns their names. A checkpoint someone else captured since, under the same name, is
/// left alone (only the stale record goes).
pub fn remove_owned(checkpoints: &Path, owner: &str) -> CoreResult<Vec<String>> {
    let what = || format!("removal of the checkpoints of {owner:?}");
    let entries = match std::fs::read_dir(checkpoints) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_fail(e, "scandir", checkpoints).into_core(what())),
    };
    let id = hex(owner);
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(name) = file.to_str().and_then(|f| f.strip_prefix(".owner-")) else { continue };
        if check_name(name).is_err() {
            continue;
        }
        let record = entry.path();
        let Some((rid, dev, ino)) = read_owner(&record) else { continue };
        if rid != id {
            continue;
        }
        let target = checkpoints.join(name);
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() && m.dev() == dev && m.ino() == ino => {
                remove_tree(&target).map_err(|e| io_fail(e, "rm", &target).into_core(what()))?;
                removed.push(name.to_string());
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_fail(e, "lstat", &target).into_core(what())),
        }
        let _ = std::fs::remove_file(&record);
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};
    use std::process::Command;

    fn tmp(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("procvisor-snapshot-{tag}-{}", random_hex()));
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    fn is_root() -> bool {
        unsafe { libc::geteuid() == 0 }
    }

    fn set_mtime(p: &Path, secs: i64, nsec: i64) {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        let t =
            [libc::timespec { tv_sec: secs, tv_nsec: nsec as _ }, libc::timespec { tv_sec: secs, tv_nsec: nsec as _ }];
        assert_eq!(unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), t.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) }, 0);
    }

    /// Everything a copy must keep, per relative path: kind, mode, mtime, content or link target.
    fn describe(root: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        fn go(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
            let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
            names.sort();
            for p in names {
                let m = std::fs::symlink_metadata(&p).unwrap();
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                let t = m.file_type();
                let body = if t.is_symlink() {
                    format!("link -> {}", std::fs::read_link(&p).unwrap().display())
                } else if t.is_dir() {
                    "dir".to_string()
                } else {
                    format!(
                        "file {:x?}",
                        std::fs::read(&p).unwrap().iter().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(*b as u64))
                    )
                };
                let mode = if t.is_symlink() { 0 } else { m.mode() & 0o7777 };
                out.push((rel, format!("{body} mode {mode:o} mtime {}.{:09}", m.mtime(), m.mtime_nsec())));
                if t.is_dir() {
                    go(root, &p, out);
                }
            }
        }
        go(root, root, &mut out);
        out
    }

    /// A tree with what a copy can get wrong: modes (executable, read-only, setgid-free odd
    /// ones), nanosecond mtimes, empty and read-only directories, links inside, outside,
    /// dangling and to directories, and a file larger than one read.
    fn sample(root: &Path, outside: &Path) {
        std::fs::create_dir_all(root.join("src/deep/er")).unwrap();
        std::fs::create_dir_all(root.join("empty")).unwrap();
        std::fs::create_dir_all(root.join("ro")).unwrap();
        std::fs::write(root.join("README"), "hello\n").unwrap();
        std::fs::write(root.join("src/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(root.join("src/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(root.join("src/deep/er/key"), "secret").unwrap();
        std::fs::set_permissions(root.join("src/deep/er/key"), std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::write(root.join("src/odd"), "").unwrap();
        std::fs::set_permissions(root.join("src/odd"), std::fs::Permissions::from_mode(0o1751)).unwrap();
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(root.join("src/big.bin"), &big).unwrap();
        std::fs::write(root.join("ro/file"), "ro").unwrap();
        std::fs::write(outside.join("outside.txt"), "not part of the tree").unwrap();
        symlink("src/run.sh", root.join("link-in")).unwrap();
        symlink(outside.join("outside.txt"), root.join("link-out")).unwrap();
        symlink("../../../../../../etc/passwd", root.join("src/deep/escape")).unwrap();
        symlink("missing", root.join("dangling")).unwrap();
        symlink(outside, root.join("dir-link")).unwrap();
        for (i, p) in
            ["README", "src/run.sh", "src/big.bin", "link-out", "empty", "src/deep/er", "src/deep", "src", "ro/file"]
                .iter()
                .enumerate()
        {
            set_mtime(&root.join(p), 1_600_000_000 + i as i64 * 1000, 123_456_789);
        }
        std::fs::set_permissions(root.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
        set_mtime(&root.join("ro"), 1_500_000_000, 5);
        set_mtime(root, 1_400_000_000, 7);
    }

    #[test]
    fn copies_modes_links_mtimes_and_empty_directories() {
        let base = tmp("tree");
        let (src, outside) = (base.join("wd"), base.join("outside"));
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        sample(&src, &outside);
        let dst = base.join("copy");
        let report = copy_tree(&src, &dst, Dest::Create, 3).unwrap();
        assert_eq!(describe(&src), describe(&dst));
        assert_eq!(std::fs::metadata(&dst).unwrap().mode() & 0o7777, std::fs::metadata(&src).unwrap().mode() & 0o7777);
        assert_eq!(std::fs::metadata(&dst).unwrap().mtime(), 1_400_000_000);
        assert_eq!((report.files, report.symlinks, report.directories), (6, 5, 5));
        assert_eq!(report.bytes, 3_000_000 + 6 + 18 + 6 + 2);
        assert!(report.skipped.is_empty());
        // Links are links: nothing behind them was copied, whatever they point at.
        for l in ["link-out", "dir-link", "src/deep/escape", "dangling"] {
            assert!(std::fs::symlink_metadata(dst.join(l)).unwrap().file_type().is_symlink(), "{l}");
        }
        assert_eq!(std::fs::read_link(dst.join("src/deep/escape")).unwrap(), Path::new("../../../../../../etc/passwd"));
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "nothing was written outside the tree");

        // Into an existing empty directory: the same tree, the root's own mode and mtime too.
        let into = base.join("into");
        std::fs::create_dir(&into).unwrap();
        copy_tree(&dst, &into, Dest::Into, 2).unwrap();
        assert_eq!(describe(&src), describe(&into));
        assert_eq!(std::fs::metadata(&into).unwrap().mtime(), 1_400_000_000);
        remove_tree(&base).unwrap();
        assert!(!base.exists(), "read-only directories are removed too");
    }

    #[test]
    fn sockets_and_fifos_are_skipped_and_reported() {
        let base = tmp("special");
        let src = base.join("wd");
        std::fs::create_dir_all(src.join("run")).unwrap();
        std::fs::write(src.join("kept"), "x").unwrap();
        let fifo = CString::new(src.join("run/pipe").as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let _sock = std::os::unix::net::UnixListener::bind(src.join("run/server.sock")).unwrap();
        let report = copy_tree(&src, &base.join("copy"), Dest::Create, 2).unwrap();
        assert_eq!(
            report.skipped,
            vec![
                Skipped { path: "run/pipe".into(), kind: "fifo" },
                Skipped { path: "run/server.sock".into(), kind: "socket" },
            ]
        );
        assert_eq!(report.files, 1);
        let names: Vec<_> = std::fs::read_dir(base.join("copy/run")).unwrap().collect();
        assert!(names.is_empty(), "neither was created in the copy");
        remove_tree(&base).unwrap();
    }

    #[test]
    fn capture_replaces_the_checkpoint_and_restore_brings_it_back() {
        let base = tmp("capture");
        let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
        std::fs::create_dir_all(&wd).unwrap();
        std::fs::write(wd.join("a"), "one").unwrap();
        capture(&wd, &cps, "box", Some("sb-1"), 2).unwrap();
        std::fs::write(wd.join("a"), "two").unwrap();
        std::fs::write(wd.join("b"), "new").unwrap();
        capture(&wd, &cps, "box", Some("sb-1"), 2).unwrap();
        let mut names: Vec<_> =
            std::fs::read_dir(&cps).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, vec![".owner-box", "box"], "no temporary or backup left behind");
        let restored = base.join("restored");
        std::fs::create_dir(&restored).unwrap();
        restore(&cps.join("box"), &restored, 2).unwrap();
        assert_eq!(describe(&wd), describe(&restored));
        assert!(matches!(capture(&wd, &cps, "../x", None, 2), Err(CoreError::InvalidOption { .. })));
        remove_tree(&base).unwrap();
    }

    #[test]
    fn removes_only_its_own_checkpoints() {
        let base = tmp("owned");
        let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
        std::fs::create_dir_all(&wd).unwrap();
        std::fs::write(wd.join("f"), "x").unwrap();
        std::fs::create_dir_all(wd.join("ro")).unwrap();
        std::fs::set_permissions(wd.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
        capture(&wd, &cps, "mine", Some("sb-a"), 2).unwrap();
        capture(&wd, &cps, "theirs", Some("sb-b"), 2).unwrap();
        capture(&wd, &cps, "retaken", Some("sb-a"), 2).unwrap();
        // Someone else captures over "retaken" (a new directory under the same name, as
        // Mastra's own snapshot() does): it is no longer ours.
        std::fs::rename(cps.join("retaken"), base.join("old")).unwrap();
        copy_tree(&wd, &cps.join("retaken"), Dest::Create, 1).unwrap();
        // A checkpoint with no record at all.
        copy_tree(&wd, &cps.join("foreign"), Dest::Create, 1).unwrap();
        assert_eq!(remove_owned(&cps, "sb-a").unwrap(), vec!["mine".to_string()]);
        for kept in ["theirs", "retaken", "foreign"] {
            assert!(cps.join(kept).join("f").exists(), "{kept} is kept");
        }
        assert!(!cps.join("mine").exists());
        assert!(!cps.join(".owner-mine").exists() && !cps.join(".owner-retaken").exists());
        assert!(cps.join(".owner-theirs").exists());
        assert_eq!(remove_owned(&base.join("none"), "sb-a").unwrap(), Vec::<String>::new());
        remove_tree(&base).unwrap();
    }

    fn assert_intact(cps: &Path) {
        assert_eq!(std::fs::read_to_string(cps.join("box/a")).unwrap(), "v1");
        assert!(!cps.join("box/big").exists());
        let left: Vec<_> = std::fs::read_dir(cps)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".tmp-") || n.starts_with(".bak-"))
            .collect();
        assert!(left.is_empty(), "temporary copies removed: {left:?}");
    }

    #[test]
    fn an_unreadable_file_fails_the_capture_and_leaves_the_previous_checkpoint() {
        if is_root() {
            eprintln!("skipped: root reads any file (the file-size test covers root)");
            return;
        }
        let base = tmp("unreadable");
        let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
        std::fs::create_dir_all(wd.join("d")).unwrap();
        std::fs::write(wd.join("a"), "v1").unwrap();
        capture(&wd, &cps, "box", None, 2).unwrap();
        std::fs::write(wd.join("a"), "v2").unwrap();
        std::fs::write(wd.join("big"), "x").unwrap();
        std::fs::write(wd.join("d/secret"), "s").unwrap();
        std::fs::set_permissions(wd.join("d/secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let err = capture(&wd, &cps, "box", None, 2).unwrap_err();
        match &err {
            CoreError::SnapshotFailed { path, syscall, errno, .. } => {
                assert_eq!(path, &wd.join("d/secret").display().to_string());
                assert_eq!((syscall.as_str(), *errno), ("open", Some(libc::EACCES)));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(err.code(), "SANDBOX_SNAPSHOT_FAILED");
        assert_intact(&cps);
        remove_tree(&base).unwrap();
    }

    /// Run in a child with RLIMIT_FSIZE (see `under_a_file_size_limit`): a capture or a restore
    /// whose one large file cannot be written; prints the outcome.
    #[test]
    #[ignore = "run by the file-size limit tests"]
    fn child_copy_under_a_file_size_limit() {
        let Ok(base) = std::env::var("PROCVISOR_SNAPSHOT_CHILD") else { return };
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
        let base = PathBuf::from(base);
        let r = match std::env::var("PROCVISOR_SNAPSHOT_OP").as_deref() {
            Ok("restore") => restore(&base.join(".checkpoints/box"), &base.join("wd"), 3),
            _ => capture(&base.join("wd"), &base.join(".checkpoints"), "box", None, 3),
        };
        match r {
            Ok(_) => println!("RESULT ok"),
            Err(CoreError::SnapshotFailed { path, syscall, errno, .. }) => {
                println!("RESULT failed {syscall} {} {path}", errno.map(errno_name).unwrap_or_default())
            }
            Err(e) => println!("RESULT other {e}"),
        }
    }

    /// A file size limit binds root too: writing the large file fails (EFBIG) after the small
    /// ones were copied, a failure in the middle of a real copy.
    fn under_a_file_size_limit(base: &Path, op: &str) -> String {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "core::snapshot::tests::child_copy_under_a_file_size_limit", "--ignored", "--nocapture"])
            .env("PROCVISOR_SNAPSHOT_CHILD", base)
            .env("PROCVISOR_SNAPSHOT_OP", op);
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                let lim = libc::rlimit { rlim_cur: 1 << 20, rlim_max: 1 << 20 };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        stdout.lines().find(|l| l.starts_with("RESULT")).unwrap_or_else(|| panic!("{stdout}")).to_string()
    }

    fn tree_with_a_large_file(wd: &Path) {
        std::fs::create_dir_all(wd.join("sub")).unwrap();
        for i in 0..50 {
            std::fs::write(wd.join(format!("sub/small-{i}")), "small").unwrap();
        }
        std::fs::write(wd.join("big"), vec![7u8; 4 << 20]).unwrap();
    }

    #[test]
    fn capture_failing_mid_copy_leaves_the_previous_checkpoint() {
        let base = tmp("fsize");
        let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
        std::fs::create_dir_all(&wd).unwrap();
        std::fs::write(wd.join("a"), "v1").unwrap();
        capture(&wd, &cps, "box", None, 2).unwrap();
        std::fs::write(wd.join("a"), "v2").unwrap();
        tree_with_a_large_file(&wd);
        let line = under_a_file_size_limit(&base, "capture");
        assert!(line.starts_with("RESULT failed ") && line.contains(" EFBIG "), "{line}");
        let tmp_prefix = cps.join(".tmp-box-").display().to_string();
        assert!(line.contains(&tmp_prefix) && line.ends_with("/big"), "names the file: {line}");
        assert_intact(&cps);
        remove_tree(&base).unwrap();
    }

    #[test]
    fn a_failed_restore_leaves_the_working_directory_empty() {
        let base = tmp("restore-fail");
        let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
        tree_with_a_large_file(&base.join("src"));
        capture(&base.join("src"), &cps, "box", None, 2).unwrap();
        std::fs::create_dir(&wd).unwrap();
        let line = under_a_file_size_limit(&base, "restore");
        assert!(line.starts_with("RESULT failed ") && line.contains(" EFBIG "), "{line}");
        assert!(line.ends_with(&wd.join("big").display().to_string()), "{line}");
        assert_eq!(std::fs::read_dir(&wd).unwrap().count(), 0, "what the restore made is taken out again");

        // Into a directory that is not empty: refused before anything is written.
        std::fs::write(wd.join("mine"), "kept").unwrap();
        let err = restore(&cps.join("box"), &wd, 2).unwrap_err();
        assert!(matches!(&err, CoreError::SnapshotFailed { errno: Some(libc::ENOTEMPTY), .. }), "{err:?}");
        assert_eq!(std::fs::read_to_string(wd.join("mine")).unwrap(), "kept");
        assert_eq!(std::fs::read_dir(&wd).unwrap().count(), 1);
        remove_tree(&base).unwrap();
    }

    #[test]
    fn lifecycle_options_are_read_by_one_rule() {
        let obj = |k: &str, v: Value| Value::Object(vec![(k.to_string(), v)]);
        assert_eq!(
            lifecycle_options(&Value::Object(vec![])).unwrap(),
            LifecycleOptions { timeout_ms: None, snapshot_on_stop: false }
        );
        assert_eq!(lifecycle_options(&obj("timeoutMs", Value::Number(1.5))).unwrap().timeout_ms, Some(1.5));
        assert!(lifecycle_options(&obj("snapshotOnStop", Value::Bool(true))).unwrap().snapshot_on_stop);
        for bad in [
            Value::Number(0.0),
            Value::Number(-1.0),
            Value::Number(f64::NAN),
            Value::Number(f64::INFINITY),
            Value::String("5".into()),
            Value::Null,
        ] {
            let e = lifecycle_options(&obj("timeoutMs", bad.clone())).unwrap_err();
            assert_eq!(e.code(), "INVALID_PROCESS_OPTION", "{bad:?}");
        }
        assert_eq!(
            lifecycle_options(&obj("snapshotOnStop", Value::Number(1.0))).unwrap_err().code(),
            "INVALID_PROCESS_OPTION"
        );
        assert!(check_name("a.b-c_1").is_ok());
        for bad in ["", ".tmp", "a/b", "a..b", "-x"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
