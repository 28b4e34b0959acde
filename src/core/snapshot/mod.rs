//! Checkpoints of a sandbox's working directory: a named copy under a checkpoints directory,
//! in the layout Mastra's `LocalSandbox` uses (`<checkpoints>/<name>`, written to a temporary
//! sibling and renamed into place), so a checkpoint of either restores in the other. Captures
//! and restores of one name may run at once (see `checkpoint::capture` and `swap`).
//!
//! The copier walks the tree through directory descriptors (`openat` with `O_NOFOLLOW`), never
//! through paths, so a symlink is copied as a link and never followed, even one that appears in
//! place of a directory while the copy runs. Regular files go to a few threads: each is cloned
//! (`FICLONE`) where the filesystem shares extents, otherwise copied in the kernel
//! (`copy_file_range`), otherwise read and written; a file with holes has only its data copied
//! (`SEEK_DATA`/`SEEK_HOLE`, Linux), so it takes no more room in the copy. Modes and times are copied; a directory's
//! own are set last, deepest first, because writing into it changes its mtime and a read-only
//! mode would stop the copy, and they too are set through descriptors opened from the root down,
//! so no depth is too deep for them and a directory swapped for a link meanwhile fails the copy
//! instead of changing where the link points. A walk keeps a bounded number of descriptors open
//! however deep the tree (see `tree::Chain`). Sockets, FIFOs and devices cannot be copied as
//! data and are skipped and reported. A capture reads a working directory that its processes may
//! be changing: an entry listed and then gone is left out and reported as `VANISHED`.
//!
//! A checkpoint costs what changed: each capture writes a record beside it (`record`) of the
//! state of every file it read, and the next capture of the same working directory hard-links
//! the files still in that state from it instead of copying them (`checkpoint::capture`). No
//! file of a checkpoint is written after it is made, and a restore copies out, so a shared
//! inode is never written through. A restore in place (`rollback`) leaves the working files the
//! record vouches for as they are and writes only the rest, to the same result as a restore
//! into an empty directory. `catalog` lists, finds and deletes checkpoints by name.

use crate::core::error::{errno_name, CoreError, CoreResult};
use crate::core::value::Value;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An entry that was not copied: it holds no data a copy could carry, or (a capture) it was
/// removed while the capture read the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Relative to the root of the copy.
    pub path: String,
    /// "socket", "fifo", "character device", "block device", or `VANISHED`.
    pub kind: &'static str,
}

/// The kind of an entry a capture found listed and then gone: a process removed it while the
/// capture ran, and the checkpoint is as if it had been removed just before.
pub const VANISHED: &str = "vanished";

/// What one copy did.
#[derive(Debug, Default, Clone)]
pub struct Report {
    pub files: u64,
    pub directories: u64,
    pub symlinks: u64,
    pub bytes: u64,
    /// Files that share their extents with the source (no data was copied).
    pub reflinked: u64,
    /// Bytes of file data written: what was neither linked from the previous capture, nor
    /// cloned, nor left as it was; a sparse file's holes are not written.
    pub new_bytes: u64,
    /// A capture: files linked from the previous capture of the same working directory. A
    /// restore in place: files left as they were.
    pub unchanged: u64,
    /// A restore in place: entries of the working directory that the checkpoint does not have,
    /// removed (a directory with everything in it counts once).
    pub removed: u64,
    /// A capture: when it was put in place, in milliseconds since the epoch.
    pub created_ms: u64,
    pub skipped: Vec<Skipped>,
    pub duration_ms: f64,
}

/// The options a sandbox's lifetime and checkpoints are read from.
#[derive(Debug, Clone, PartialEq)]
pub struct LifecycleOptions {
    pub timeout_ms: Option<f64>,
    pub snapshot_on_stop: bool,
    pub persistent: bool,
}

/// The lifetime of a persistent sandbox that names none: nothing may run forever with nobody
/// attached, and five minutes is the default of the cloud sandboxes this lifecycle follows.
pub const PERSISTENT_DEFAULT_TIMEOUT_MS: f64 = 300_000.0;

/// Reads `timeoutMs` (absent, 0, or a positive finite number), `snapshotOnStop` and `persistent`
/// (absent or booleans) from a sandbox's options object. A persistent sandbox that names no
/// lifetime gets `PERSISTENT_DEFAULT_TIMEOUT_MS`; `timeoutMs: 0` asks for none, said outright
/// because such a sandbox runs on with nobody attached until it is stopped.
pub fn lifecycle_options(v: &Value) -> CoreResult<LifecycleOptions> {
    let timeout_ms = match v.get("timeoutMs") {
        Value::Undefined => None,
        Value::Number(n) if n.is_finite() && *n >= 0.0 => Some(*n),
        other => {
            return Err(CoreError::invalid_option(
                "timeoutMs",
                format!(
                    "timeoutMs must be a positive finite number of milliseconds, or 0 for no lifetime, got {}",
                    other.describe()
                ),
            ))
        }
    };
    let snapshot_on_stop = flag(v, "snapshotOnStop")?;
    let persistent = flag(v, "persistent")?;
    let no_id = match v.get("id") {
        Value::Undefined | Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    if persistent && no_id {
        return Err(CoreError::invalid_option(
            "id",
            "persistent: true needs an id: a later start(), here or in another Node process, finds the sandbox by it, \
             and a generated one is known to nobody",
        ));
    }
    let timeout_ms = match timeout_ms {
        Some(0.0) => None,
        None if persistent => Some(PERSISTENT_DEFAULT_TIMEOUT_MS),
        given => given,
    };
    Ok(LifecycleOptions { timeout_ms, snapshot_on_stop, persistent })
}

/// An option that is absent (false) or a boolean.
fn flag(v: &Value, name: &str) -> CoreResult<bool> {
    match v.get(name) {
        Value::Undefined => Ok(false),
        Value::Bool(b) => Ok(*b),
        other => Err(CoreError::invalid_option(name, format!("{name} must be a boolean, got {}", other.describe()))),
    }
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

mod catalog;
mod checkpoint;
mod compare;
mod copy;
mod files;
mod path_hash;
mod prefetch;
mod record;
mod replace;
mod rollback;
mod swap;
mod sys;
mod tree;
mod walk;
pub use catalog::{delete, list, Listed};
use checkpoint::owner_file;
pub use checkpoint::{capture, check_checkpoints_directory, remove_owned, restore};
#[cfg(test)]
use checkpoint::{hex, read_owner};
pub use copy::default_threads;
#[cfg(test)]
use copy::*;
pub use rollback::restore_in_place;
use tree::remove_entry;

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

#[cfg(test)]
mod tests;
