//! The checkpoints under a checkpoints directory by name: the last capture of a working
//! directory (what the next capture shares files with), listing, deleting, and restoring one in
//! place.

use super::copy::{Base, Kind};
use super::record::{self, Header};
use super::tree::Chain;
use super::*;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// The names of the checkpoints under `checkpoints` that have a record, with its header.
fn recorded(checkpoints: &Path) -> Vec<(String, Header)> {
    let Ok(entries) = std::fs::read_dir(checkpoints) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let file = e.file_name();
            let name = file.to_str()?.strip_prefix(".owner-")?;
            check_name(name).ok()?;
            Some((name.to_string(), record::read_header(&e.path())?))
        })
        .collect()
}

/// Opens checkpoint `name` as a directory, never through a link; its descriptor and identity.
pub(super) fn open_checkpoint(checkpoints: &Path, name: &str) -> Result<(OwnedFd, (u64, u64), libc::stat), i32> {
    let path = super::copy::cstring(&checkpoints.join(name)).map_err(|f| f.errno)?;
    let fd = sys::openat(libc::AT_FDCWD, &path, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0)?;
    let st = sys::fstat(fd.as_raw_fd())?;
    Ok((fd, super::tree::id_of(&st), st))
}

/// The newest complete capture of the working directory `root` (device, inode) whose record
/// still describes it, to share files with; none where there is no such capture.
pub(super) fn last_capture(checkpoints: &Path, root: (u64, u64)) -> Option<Base> {
    let mut mine: Vec<_> = recorded(checkpoints).into_iter().filter(|(_, h)| h.root == Some(root)).collect();
    mine.sort_by_key(|(_, h)| std::cmp::Reverse(h.created_ms));
    mine.into_iter().find_map(|(name, h)| {
        let (dir, id, _) = open_checkpoint(checkpoints, &name).ok()?;
        if id != (h.dev, h.ino) {
            return None;
        }
        let entries = record::read_entries(&owner_file(checkpoints, &name), id)?;
        Some(Base { dir, entries })
    })
}

/// One checkpoint as `list` reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub name: String,
    /// When it was captured (ms since the epoch); for a checkpoint with no record of ours, when
    /// its directory was last put in place.
    pub created_ms: u64,
    pub files: u64,
    pub bytes: u64,
    /// Bytes its capture wrote; unknown for a checkpoint with no record of ours.
    pub new_bytes: Option<u64>,
}

/// Every checkpoint under `checkpoints`, oldest first. A checkpoint without a record of ours
/// (Mastra's own, or one captured over since) is counted by walking it.
pub fn list(checkpoints: &Path) -> CoreResult<Vec<Listed>> {
    let what = || format!("listing of the checkpoints in {}", checkpoints.display());
    let entries = match std::fs::read_dir(checkpoints) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_fail(e, "scandir", checkpoints).into_core(what())),
    };
    let headers: std::collections::HashMap<_, _> = recorded(checkpoints).into_iter().collect();
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
        if check_name(&name).is_err() {
            continue;
        }
        // Gone since it was listed, or not a directory: not a checkpoint.
        let Ok((fd, id, st)) = open_checkpoint(checkpoints, &name) else { continue };
        let listed = match headers.get(&name) {
            // A record of this very directory, made by a capture that counted its files.
            Some(h @ Header { created_ms: Some(created_ms), .. }) if (h.dev, h.ino) == id => {
                Listed { name, created_ms: *created_ms, files: h.files, bytes: h.bytes, new_bytes: h.new_bytes }
            }
            _ => {
                let (files, bytes) =
                    count(fd, &st).map_err(|e| Fail::new(e, "scandir", entry.path()).into_core(what()))?;
                let created_ms = (st.st_ctime as u64).saturating_mul(1000) + st.st_ctime_nsec as u64 / 1_000_000;
                Listed { name, created_ms, files, bytes, new_bytes: None }
            }
        };
        out.push(listed);
    }
    out.sort_by(|a, b| a.created_ms.cmp(&b.created_ms).then_with(|| a.name.cmp(&b.name)));
    Ok(out)
}

/// The regular files under a directory and their bytes, through descriptors (any depth).
fn count(root: OwnedFd, st: &libc::stat) -> Result<(u64, u64), i32> {
    let root = Arc::new(root);
    let mut chain = Chain::new(root.clone(), st);
    let mut levels = vec![sys::entries(&root)?];
    let (mut files, mut bytes) = (0u64, 0u64);
    while let Some(left) = levels.last_mut() {
        let Some((name, dtype)) = left.pop() else {
            levels.pop();
            if !levels.is_empty() {
                chain.pop()?;
            }
            continue;
        };
        let here = chain.top().as_raw_fd();
        let kind = super::copy::kind_of_dtype(dtype);
        if matches!(kind, Some(Kind::Link | Kind::Other(_))) {
            continue;
        }
        let st = sys::lstatat(here, &name)?;
        match super::copy::kind_of_mode(st.st_mode) {
            Kind::File => {
                files += 1;
                bytes += st.st_size as u64;
            }
            Kind::Dir => {
                let fd = sys::open_dir(here, &name)?;
                let sub = sys::fstat(fd.as_raw_fd())?;
                levels.push(sys::entries(&fd)?);
                chain.push(Arc::new(fd), &sub);
            }
            _ => {}
        }
    }
    Ok((files, bytes))
}

/// The error for a checkpoint name with no checkpoint.
pub(super) fn not_found(checkpoints: &Path, name: &str, what: String) -> CoreError {
    CoreError::SnapshotFailed {
        what,
        path: checkpoints.join(name).display().to_string(),
        syscall: "open".into(),
        reason: format!("ENOENT: no checkpoint named {name:?}"),
        errno: Some(libc::ENOENT),
    }
}

/// Deletes checkpoint `name`, whoever captured it, with its record: taken away under its lock
/// (so no restore of ours is reading it), removed after. Other checkpoints that share its files
/// keep them: a file goes only with its last link.
pub fn delete(checkpoints: &Path, name: &str) -> CoreResult<()> {
    check_name(name)?;
    let what = || format!("deletion of checkpoint {name:?}");
    let target = checkpoints.join(name);
    match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(not_found(checkpoints, name, what())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(checkpoints, name, what())),
        Err(e) => return Err(io_fail(e, "lstat", &target).into_core(what())),
    }
    let lock_file = swap::lock_path(checkpoints, name);
    let lock = swap::Lock::exclusive(&lock_file).map_err(|e| io_fail(e, "flock", &lock_file).into_core(what()))?;
    let away = checkpoints.join(format!(".tmp-{name}-{}", random_hex()));
    match std::fs::rename(&target, &away) {
        Ok(()) => {}
        // Deleted by someone else meanwhile.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(checkpoints, name, what())),
        Err(e) => return Err(io_fail(e, "rename", &target).into_core(what())),
    }
    let _ = std::fs::remove_file(owner_file(checkpoints, name));
    drop(lock);
    remove_tree(&away).map_err(|e| io_fail(e, "rm", &away).into_core(what()))
}
