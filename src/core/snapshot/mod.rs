//! Checkpoints of a sandbox's working directory: a named copy under a checkpoints directory,
//! in the layout Mastra's `LocalSandbox` uses (`<checkpoints>/<name>`, written to a temporary
//! sibling and renamed into place), so a checkpoint of either restores in the other.
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
//! data and are skipped and reported.

use crate::core::error::{errno_name, CoreError, CoreResult};
use crate::core::value::Value;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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
    pub persistent: bool,
}

/// The lifetime of a persistent sandbox that names none: nothing may run forever with nobody
/// attached, and five minutes is the default of the cloud sandboxes this lifecycle follows.
pub const PERSISTENT_DEFAULT_TIMEOUT_MS: f64 = 300_000.0;

/// Reads `timeoutMs` (absent, or a positive finite number), `snapshotOnStop` and `persistent`
/// (absent or booleans) from a sandbox's options object. A persistent sandbox always has a
/// lifetime: `PERSISTENT_DEFAULT_TIMEOUT_MS` when it names none.
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
    let timeout_ms = if persistent { Some(timeout_ms.unwrap_or(PERSISTENT_DEFAULT_TIMEOUT_MS)) } else { timeout_ms };
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

mod copy;
mod files;
mod sys;
mod tree;
pub use copy::default_threads;
use copy::*;
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

/// `path` made absolute (against the current directory) with every link in it resolved, as far
/// as it can be; the rest is taken as written, `..` removing the name before it (a name that does
/// not exist is no link).
fn resolved(path: &Path) -> std::io::Result<PathBuf> {
    let path = std::path::absolute(path)?;
    let mut missing = Vec::new();
    let mut existing = path.as_path();
    let mut out = loop {
        match existing.canonicalize() {
            Ok(p) => break p,
            // Missing, or not reachable by this process (EACCES, ENOTDIR): no link there that a
            // capture by this process could follow either.
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    missing.push(name.to_owned());
                    existing = parent;
                }
                // `..` last, or the root: nothing exists to resolve.
                _ => break existing.to_path_buf(),
            },
        }
    };
    for name in missing.iter().rev() {
        out.push(name);
    }
    Ok(out.components().fold(PathBuf::new(), |mut p, c| {
        match c {
            std::path::Component::ParentDir => {
                p.pop();
            }
            std::path::Component::CurDir => {}
            c => p.push(c),
        }
        p
    }))
}

/// Refuses a checkpoints directory that is the working directory or inside it: a capture would
/// copy the copy it is making into itself. Compared as absolute paths with links resolved.
pub fn check_checkpoints_directory(workdir: &Path, checkpoints: &Path) -> CoreResult<()> {
    let fail = |e: std::io::Error, p: &Path| {
        CoreError::invalid_option("checkpointsDirectory", format!("cannot resolve {}: {e}", p.display()))
    };
    let wd = resolved(workdir).map_err(|e| fail(e, workdir))?;
    let cps = resolved(checkpoints).map_err(|e| fail(e, checkpoints))?;
    if cps.starts_with(&wd) {
        return Err(CoreError::invalid_option(
            "checkpointsDirectory",
            format!(
                "checkpointsDirectory {} is inside the working directory {}, so a capture would copy itself; \
                 put it beside the working directory",
                checkpoints.display(),
                workdir.display()
            ),
        ));
    }
    Ok(())
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
    check_checkpoints_directory(workdir, checkpoints)?;
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
mod tests;
