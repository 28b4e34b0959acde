//! The walk of a copy: directories made on the walking thread, one level at a time, and regular
//! files sent to the copying threads. A capture walks its previous capture alongside, so that a
//! file can be linked from the same place there.

use super::copy::{kind_of_dtype, kind_of_mode, name_path, Batches, Job, Kind, Shared};
use super::tree::{self, Chain, DirMeta, KEEP};
use super::*;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// A directory being walked: where it is, the entries still to visit, and the same directory in
/// the previous capture where there is one.
struct Frame {
    rel: PathBuf,
    entries: std::vec::IntoIter<(CString, u8)>,
    base: Option<Arc<OwnedFd>>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn walk(
    shared: &Shared,
    listed: &super::prefetch::Listings,
    src_fd: Arc<OwnedFd>,
    src_stat: &libc::stat,
    dst_fd: Arc<OwnedFd>,
    base_fd: Option<Arc<OwnedFd>>,
    tx: &mut Batches<Job>,
    dirs: &mut Vec<DirMeta>,
    top_level: &mut Vec<CString>,
) -> Result<(), Fail> {
    let entries = listed.entries(&src_fd, src_stat).map_err(|e| Fail::new(e, "scandir", shared.src_root))?;
    #[cfg(test)]
    super::copy::listed(Path::new(""));
    let dst_stat = sys::fstat(dst_fd.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", shared.dst_root))?;
    let dst_id = tree::id_of(&dst_stat);
    let (mut src, mut dst) = (Chain::new(src_fd, src_stat), Chain::new(dst_fd, &dst_stat));
    let mut stack = vec![Frame { rel: PathBuf::new(), entries: entries.into_iter(), base: base_fd }];
    loop {
        let depth = stack.len();
        let Some(frame) = stack.last_mut() else { break };
        if shared.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some((name, dtype)) = frame.entries.next() else {
            if !tx.flush() {
                return Ok(());
            }
            let done = stack.pop().expect("the frame just read");
            if !stack.is_empty() {
                src.pop().map_err(|e| Fail::new(e, "open", shared.src(&done.rel).join("..")))?;
                dst.pop().map_err(|e| Fail::new(e, "open", shared.dst(&done.rel).join("..")))?;
            }
            continue;
        };
        let rel = frame.rel.join(name_path(&name));
        if frame.rel.as_os_str().is_empty() {
            top_level.push(name.clone());
        }
        let (sdir, ddir) = (src.top().as_raw_fd(), dst.top().as_raw_fd());
        let kind = match kind_of_dtype(dtype) {
            Some(k) => k,
            None => match sys::lstatat(sdir, &name) {
                Ok(st) => kind_of_mode(st.st_mode),
                Err(e) if shared.vanished(&rel, e) => continue,
                Err(e) => return Err(Fail::new(e, "lstat", shared.src(&rel))),
            },
        };
        match kind {
            Kind::File => {
                let base_dir = frame.base.clone();
                let job = Job { src_dir: src.top().clone(), dst_dir: dst.top().clone(), base_dir, name, rel };
                if !tx.push(job) {
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
                    Err(e) if shared.vanished(&rel, e) => continue,
                    Err(e) => return Err(Fail::new(e, "open", shared.src(&rel))),
                };
                let st = sys::fstat(s.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", shared.src(&rel)))?;
                if tree::id_of(&st) == dst_id {
                    // The copy reached its own destination (a bind mount, say): copying it would
                    // nest the copy in itself without end.
                    return Err(Fail::new(libc::ELOOP, "open", shared.dst_root));
                }
                sys::mkdirat(ddir, &name, 0o700).map_err(|e| Fail::new(e, "mkdir", shared.dst(&rel)))?;
                let d = sys::open_dir(ddir, &name).map_err(|e| Fail::new(e, "open", shared.dst(&rel)))?;
                let dst_st = sys::fstat(d.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", shared.dst(&rel)))?;
                let entries = match listed.entries(&s, &st) {
                    Ok(entries) => entries,
                    // Removed since it was opened: neither is the copy made of it kept.
                    Err(e) if shared.vanished(&rel, e) => {
                        let _ = sys::unlinkat(ddir, &name, libc::AT_REMOVEDIR);
                        continue;
                    }
                    Err(e) => return Err(Fail::new(e, "scandir", shared.src(&rel))),
                };
                #[cfg(test)]
                super::copy::listed(&rel);
                // Each level of the previous capture holds a descriptor, so below `KEEP` levels
                // files are copied rather than linked: a deep tree costs no more descriptors.
                let base = match &frame.base {
                    Some(b) if depth < KEEP => sys::open_dir(b.as_raw_fd(), &name).ok().map(Arc::new),
                    _ => None,
                };
                if !tx.flush() {
                    return Ok(());
                }
                dirs.push(DirMeta { depth, name, id: tree::id_of(&dst_st), stat: st });
                src.push(Arc::new(s), &st);
                dst.push(Arc::new(d), &dst_st);
                stack.push(Frame { rel, entries: entries.into_iter(), base });
            }
        }
    }
    Ok(())
}
