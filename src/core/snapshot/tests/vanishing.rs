//! What a process of the sandbox removes while a capture or a restore in place walks its tree.
use super::digest::assert_same_tree;
use super::*;
use std::cell::Cell;
use std::rc::Rc;

/// Runs `f` each time a walk on this thread has listed a directory, until the guard is dropped.
struct Listed;

impl Listed {
    fn on(f: impl FnMut(&Path) + 'static) -> Listed {
        copy::LISTED.with(|h| *h.borrow_mut() = Some(Box::new(f)));
        Listed
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        copy::LISTED.with(|h| *h.borrow_mut() = None);
    }
}

fn tree(wd: &Path) {
    std::fs::create_dir_all(wd.join("gonedir/deeper")).unwrap();
    std::fs::create_dir_all(wd.join("sub")).unwrap();
    for f in ["keep.txt", "gone.txt", "gonedir/x.txt", "gonedir/deeper/y.txt", "sub/inner.txt", "sub/gone-later.txt"] {
        std::fs::write(wd.join(f), f).unwrap();
    }
    symlink("keep.txt", wd.join("gonelink")).unwrap();
}

#[test]
fn a_capture_leaves_out_what_is_removed_while_it_reads_and_says_so() {
    let base = tmp("vanish-capture");
    let (wd, cps) = (base.join("wd"), base.join("cps"));
    tree(&wd);
    let w = wd.clone();
    // Removed after their directory was listed and before the walk reached them.
    let _hook = Listed::on(move |rel| {
        if rel.as_os_str().is_empty() {
            std::fs::remove_file(w.join("gone.txt")).unwrap();
            std::fs::remove_file(w.join("gonelink")).unwrap();
            std::fs::remove_dir_all(w.join("gonedir")).unwrap();
        } else if rel == Path::new("sub") {
            std::fs::remove_file(w.join("sub/gone-later.txt")).unwrap();
        }
    });
    let report = capture(&wd, &cps, "box", None, 2).unwrap();
    let mut vanished: Vec<_> = report.skipped.iter().filter(|s| s.kind == VANISHED).map(|s| s.path.as_str()).collect();
    vanished.sort();
    assert_eq!(vanished, ["gone.txt", "gonedir", "gonelink", "sub/gone-later.txt"]);
    assert_eq!(report.files, 2, "keep.txt and sub/inner.txt");
    // The checkpoint is the tree as it is now, as if they had been removed before the capture,
    // but for the mtimes the removals gave their directories after the capture read them.
    for dir in ["", "sub"] {
        let m = std::fs::metadata(cps.join("box").join(dir)).unwrap();
        set_mtime(&wd.join(dir), m.mtime(), m.mtime_nsec());
    }
    assert_same_tree(&wd, &cps.join("box"));
    remove_tree(&base).unwrap();
}

#[test]
fn a_file_removed_from_a_checkpoint_while_it_is_restored_fails_the_restore() {
    let base = tmp("vanish-restore");
    let (wd, cps, out) = (base.join("wd"), base.join("cps"), base.join("out"));
    tree(&wd);
    capture(&wd, &cps, "box", None, 2).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let c = cps.join("box");
    // A checkpoint is never written: a file gone from it is damage, not a process at work.
    let _hook = Listed::on(move |rel| {
        if rel.as_os_str().is_empty() {
            let _ = std::fs::remove_file(c.join("keep.txt"));
        }
    });
    let e = restore(&cps.join("box"), &out, 2).unwrap_err();
    assert!(e.to_string().contains("ENOENT"), "{e}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "a failed restore leaves the directory empty");
    remove_tree(&base).unwrap();
}

#[test]
fn a_restore_in_place_goes_over_the_tree_again_when_a_directory_it_writes_into_is_removed() {
    let base = tmp("vanish-in-place");
    let (wd, cps) = (base.join("wd"), base.join("cps"));
    tree(&wd);
    capture(&wd, &cps, "box", None, 2).unwrap();
    // Every file of sub/ differs, so the restore writes into it.
    for f in ["sub/inner.txt", "sub/gone-later.txt"] {
        std::fs::write(wd.join(f), "changed").unwrap();
    }
    let fired = Rc::new(Cell::new(0));
    let (w, n) = (wd.clone(), fired.clone());
    // The first time the walk is in sub/, a process removes it: the files the restore then
    // copies into it have no directory left to go to.
    let _hook = Listed::on(move |rel| {
        if rel == Path::new("sub") && n.get() == 0 {
            n.set(1);
            std::fs::remove_dir_all(w.join("sub")).unwrap();
        }
    });
    restore_in_place(&cps, "box", &wd, 2).unwrap();
    assert_eq!(fired.get(), 1);
    assert_same_tree(&wd, &cps.join("box"));
    remove_tree(&base).unwrap();
}
