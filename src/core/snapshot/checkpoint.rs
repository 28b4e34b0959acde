//! Checkpoints as named copies under a checkpoints directory: capture, restore, and removal of
//! the ones a sandbox made.

use super::copy::{copy_tree, copy_tree_recorded, Dest, Recording};
use super::record::{self, Header};
use super::*;

/// The file next to a checkpoint that says which sandbox made it. A checkpoint directory is
/// never written into, so it restores exactly what was captured; and a name starting with a
/// dot is one no checkpoint can have.
pub(super) fn owner_file(checkpoints: &Path, name: &str) -> PathBuf {
    checkpoints.join(format!(".owner-{name}"))
}

pub(super) fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The owner's id (hex), and the checkpoint directory (device, inode) its record describes.
pub(super) fn read_owner(path: &Path) -> Option<(String, u64, u64)> {
    let h = record::read_header(path)?;
    Some((h.id?, h.dev, h.ino))
}

/// `path` made absolute (against the current directory) with every link in it resolved, as far
/// as it can be; the rest is taken as written, `..` removing the name before it (a name that does
/// not exist is no link).
pub(super) fn resolved(path: &Path) -> std::io::Result<PathBuf> {
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
    checked_directories(workdir, checkpoints).map(drop)
}

/// `check_checkpoints_directory`, with both directories as it resolved them (`resolved`).
pub(super) fn checked_directories(workdir: &Path, checkpoints: &Path) -> CoreResult<(PathBuf, PathBuf)> {
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
    Ok((wd, cps))
}

/// Captures `workdir` as checkpoint `name` under `checkpoints`: a copy to `.tmp-<name>-<hex>`,
/// then swapped into place in one step (`swap::swap_in`), so a reader sees either the old
/// checkpoint or the new one, whole. Captures of one name may run at once: each swaps in a whole
/// copy and the last to swap stays, with nothing left behind. The checkpoint replaced is removed
/// only once no restore reads it (`swap::Lock`). On any failure the old checkpoint is left as it
/// was. With `owner`, the checkpoint is recorded as that sandbox's.
///
/// The copy shares with the last complete capture of the same working directory (under any name
/// here) every file its record vouches for: a hard link, not a copy (see `record`). The files
/// of a checkpoint are never written after it is made, so a link shares only what no one
/// changes, and deleting either checkpoint leaves the other whole.
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
    let root = std::fs::metadata(workdir).map(|m| (m.dev(), m.ino())).ok();
    let base = root.and_then(|root| catalog::last_capture(checkpoints, root));
    let target = checkpoints.join(name);
    let tmp = checkpoints.join(format!(".tmp-{name}-{}", random_hex()));
    let rec = Recording { base, record: true };
    // Shared: captures read the working directory side by side; a restore in place waits.
    let wd_lock = swap::lock_workdir(checkpoints, root, false).map_err(|f| f.into_core(what()))?;
    let (mut report, entries) =
        copy_tree_recorded(workdir, &tmp, Dest::Create, threads, rec).map_err(|f| f.into_core(what()))?;
    drop(wd_lock);
    let placed = (|| -> Result<Option<PathBuf>, Fail> {
        let made = std::fs::symlink_metadata(&tmp).map_err(|e| io_fail(e, "lstat", &tmp))?;
        let lock_file = swap::lock_path(checkpoints, name);
        let _lock = swap::Lock::exclusive(&lock_file).map_err(|e| io_fail(e, "flock", &lock_file))?;
        let backup = checkpoints.join(format!(".bak-{name}-{}", random_hex()));
        let old = swap::swap_in(&tmp, &target, &backup)?;
        report.created_ms = now_ms();
        let header = Header {
            id: owner.map(hex),
            dev: made.dev(),
            ino: made.ino(),
            created_ms: Some(report.created_ms),
            root,
            files: report.files,
            bytes: report.bytes,
            new_bytes: Some(report.new_bytes),
        };
        // Under the lock, so the record follows the order of the swaps. The checkpoint is in
        // place either way; without its record it is merely never taken for ours, and the next
        // capture copies what it would have linked, which is the safe side.
        if record::write(checkpoints, name, &header, &entries).is_err() {
            let _ = std::fs::remove_file(owner_file(checkpoints, name));
        }
        Ok(old)
    })();
    match placed {
        Ok(old) => {
            // No restore reads it: each one holds the lock while it reads, and the swap waited
            // for them; those that came after read the new one.
            if let Some(old) = old {
                let _ = remove_tree(&old);
            }
            Ok(report)
        }
        Err(f) => {
            let _ = remove_tree(&tmp);
            Err(f.into_core(what()))
        }
    }
}

pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Restores the checkpoint at `checkpoint` into `workdir`, an existing empty directory. On
/// failure the working directory is left empty again. A checkpoint under a valid name holds
/// its lock shared while it is read, so a capture of that name cannot remove it meanwhile.
pub fn restore(checkpoint: &Path, workdir: &Path, threads: usize) -> CoreResult<Report> {
    let what = || format!("restore of checkpoint {:?}", checkpoint.display().to_string());
    let lock = match (checkpoint.parent(), checkpoint.file_name().and_then(|n| n.to_str())) {
        (Some(dir), Some(name)) if check_name(name).is_ok() => {
            let path = swap::lock_path(dir, name);
            match swap::Lock::shared(&path) {
                Ok(lock) => lock,
                // No checkpoints directory: nothing to restore, which the copy reports.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(io_fail(e, "flock", &path).into_core(what())),
            }
        }
        _ => None,
    };
    let r = copy_tree(checkpoint, workdir, Dest::Into, threads).map_err(|f| f.into_core(what()));
    drop(lock);
    r
}

/// Deletes every checkpoint under `checkpoints` that `owner` made and that is still the one it
/// made; returns their names. A checkpoint someone else captured since, under the same name, is
/// left alone (only the stale record goes). Each is taken away under its lock, so no restore is
/// reading it, and removed after.
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
        let lock_file = swap::lock_path(checkpoints, name);
        let lock = swap::Lock::exclusive(&lock_file).map_err(|e| io_fail(e, "flock", &lock_file).into_core(what()))?;
        let target = checkpoints.join(name);
        let away = match std::fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() && m.dev() == dev && m.ino() == ino => {
                let away = checkpoints.join(format!(".tmp-{name}-{}", random_hex()));
                std::fs::rename(&target, &away).map_err(|e| io_fail(e, "rename", &target).into_core(what()))?;
                Some(away)
            }
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_fail(e, "lstat", &target).into_core(what())),
        };
        let _ = std::fs::remove_file(&record);
        drop(lock);
        if let Some(away) = away {
            remove_tree(&away).map_err(|e| io_fail(e, "rm", &away).into_core(what()))?;
            removed.push(name.to_string());
        }
    }
    removed.sort();
    Ok(removed)
}
