//! Directory metadata is applied through descriptors: deeper than PATH_MAX, and never through a
//! name that was swapped for a link.
use super::*;
use std::os::fd::OwnedFd;

/// Past PATH_MAX (4096) as a path: 2,500 levels of "d/".
const DEEP: usize = 2_500;

fn mode_at(level: usize) -> libc::mode_t {
    [0o755, 0o700, 0o750, 0o555, 0o711][level % 5]
}

fn time_at(level: usize) -> libc::timespec {
    libc::timespec { tv_sec: 1_500_000_000 + level as i64 * 60, tv_nsec: (level * 1_000 + 7) as _ }
}

fn stamp(fd: &OwnedFd, level: usize) {
    let t = [time_at(level), time_at(level)];
    assert_eq!(unsafe { libc::fchmod(fd.as_raw_fd(), mode_at(level)) }, 0);
    assert_eq!(unsafe { libc::futimens(fd.as_raw_fd(), t.as_ptr()) }, 0);
}

/// A chain of `DEEP` directories named "d" under `root`, each with its own mode and mtime, and
/// a file at the bottom; built through descriptors, as no path reaches the bottom.
fn deep_tree(root: &Path) {
    let d = CString::new("d").unwrap();
    let mut fd =
        sys::openat(libc::AT_FDCWD, &CString::new(root.as_os_str().as_bytes()).unwrap(), libc::O_RDONLY, 0).unwrap();
    for level in 0..DEEP {
        sys::mkdirat(fd.as_raw_fd(), &d, 0o700).unwrap();
        let child = sys::open_dir(fd.as_raw_fd(), &d).unwrap();
        // Set after the child exists, as making it changes this directory's mtime.
        stamp(&fd, level);
        fd = child;
    }
    let f = CString::new("bottom").unwrap();
    let file = sys::openat(fd.as_raw_fd(), &f, libc::O_WRONLY | libc::O_CREAT, 0o640).unwrap();
    assert_eq!(unsafe { libc::write(file.as_raw_fd(), b"the bottom".as_ptr().cast(), 10) }, 10);
    drop(file);
    stamp(&fd, DEEP);
}

/// Mode and mtime of every level, and the bottom file's content, read through descriptors.
fn read_deep(root: &Path) -> (Vec<(libc::mode_t, i64, i64)>, Vec<u8>) {
    let d = CString::new("d").unwrap();
    let mut fd =
        sys::openat(libc::AT_FDCWD, &CString::new(root.as_os_str().as_bytes()).unwrap(), libc::O_RDONLY, 0).unwrap();
    let mut levels = Vec::new();
    loop {
        let st = sys::fstat(fd.as_raw_fd()).unwrap();
        levels.push((st.st_mode & 0o7777, st.st_mtime, st.st_mtime_nsec));
        match sys::open_dir(fd.as_raw_fd(), &d) {
            Ok(child) => fd = child,
            Err(libc::ENOENT) => break,
            Err(e) => panic!("open at level {}: {}", levels.len(), errno_name(e)),
        }
    }
    let file = sys::openat(fd.as_raw_fd(), &CString::new("bottom").unwrap(), libc::O_RDONLY, 0).unwrap();
    let mut content = vec![0u8; 64];
    let n = unsafe { libc::read(file.as_raw_fd(), content.as_mut_ptr().cast(), 64) };
    content.truncate(n.max(0) as usize);
    (levels, content)
}

#[test]
fn a_tree_deeper_than_path_max_comes_back_with_modes_and_mtimes() {
    let base = tmp("deep");
    let (wd, cps, back) = (base.join("wd"), base.join(".checkpoints"), base.join("back"));
    std::fs::create_dir_all(&wd).unwrap();
    std::fs::create_dir_all(&back).unwrap();
    deep_tree(&wd);
    let (want, bottom) = read_deep(&wd);
    assert_eq!((want.len(), bottom.as_slice()), (DEEP + 1, &b"the bottom"[..]));

    let report = capture(&wd, &cps, "deep", None, 2).unwrap();
    assert_eq!((report.directories, report.files), (DEEP as u64, 1));
    assert_eq!(read_deep(&cps.join("deep")).0[1..], want[1..], "the checkpoint keeps every level");
    restore(&cps.join("deep"), &back, 2).unwrap();
    assert_eq!(read_deep(&back), (want, bottom));
    remove_tree(&base).unwrap();
    assert!(!base.exists());
}

#[test]
fn a_directory_swapped_for_a_link_before_its_metadata_is_set_leaves_the_target_alone() {
    let base = tmp("swap");
    let (src, cps, wd, outside) = (base.join("src"), base.join(".checkpoints"), base.join("wd"), base.join("outside"));
    std::fs::create_dir_all(src.join("a/b")).unwrap();
    std::fs::write(src.join("a/b/f"), "f").unwrap();
    std::fs::set_permissions(src.join("a/b"), std::fs::Permissions::from_mode(0o750)).unwrap();
    set_mtime(&src.join("a/b"), 1_500_000_000, 0);
    capture(&src, &cps, "box", None, 2).unwrap();
    // A directory outside the working directory, shaped like the one the restore makes.
    std::fs::create_dir_all(outside.join("b")).unwrap();
    std::fs::set_permissions(outside.join("b"), std::fs::Permissions::from_mode(0o755)).unwrap();
    set_mtime(&outside.join("b"), 1_000_000_000, 0);
    std::fs::create_dir(&wd).unwrap();

    // Something in the sandbox moves "a" away and puts a link to the outside in its place, after
    // the entries are copied and before the directories get their modes and times.
    let (wd2, outside2, moved) = (wd.clone(), outside.clone(), base.join("moved"));
    copy::BEFORE_DIR_META.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            std::fs::rename(wd2.join("a"), &moved).unwrap();
            symlink(&outside2, wd2.join("a")).unwrap();
        }))
    });
    let result = restore(&cps.join("box"), &wd, 2);
    let m = std::fs::metadata(outside.join("b")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.mtime()), (0o755, 1_000_000_000), "the outside directory is untouched");
    // A working directory changed under the restore fails it.
    assert!(
        matches!(result, Err(CoreError::SnapshotFailed { errno: Some(libc::ENOTDIR | libc::ELOOP), .. })),
        "{result:?}"
    );
    assert_eq!(std::fs::read_dir(&wd).unwrap().count(), 0, "the restore is taken out again");
    remove_tree(&base).unwrap();
}
