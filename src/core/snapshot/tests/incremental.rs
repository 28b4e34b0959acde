//! A capture shares every unchanged file with the last capture of the same working directory,
//! and copies everything else.
use super::digest::{assert_same_tree, ino, settle};
use super::*;

/// A working directory of 40 files in 4 directories, a link and an empty directory.
fn working_tree(wd: &Path) {
    for d in 0..4 {
        std::fs::create_dir_all(wd.join(format!("d{d}"))).unwrap();
        for f in 0..10 {
            std::fs::write(wd.join(format!("d{d}/f{f}")), format!("file {d}/{f} ").repeat(100 + f)).unwrap();
        }
    }
    std::fs::create_dir_all(wd.join("empty")).unwrap();
    symlink("d0/f0", wd.join("link")).unwrap();
}

fn restored(cps: &Path, name: &str, into: &Path) -> PathBuf {
    std::fs::create_dir_all(into).unwrap();
    restore(&cps.join(name), into, 2).unwrap();
    into.to_path_buf()
}

#[test]
fn unchanged_files_are_linked_from_the_last_capture_and_changed_ones_copied() {
    let base = tmp("incremental");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd);
    settle();
    let first = capture(&wd, &cps, "one", Some("sb"), 2).unwrap();
    assert_eq!((first.files, first.unchanged), (40, 0));
    assert_eq!(first.new_bytes, first.bytes, "a first capture writes every byte");

    // One file rewritten with other bytes of the same size and given back its mtime (only its
    // ctime tells), one appended to, one removed, one added, one made executable.
    let same_size = wd.join("d1/f3");
    let old = std::fs::metadata(&same_size).unwrap();
    std::fs::write(&same_size, "X".repeat(old.len() as usize)).unwrap();
    set_mtime(&same_size, old.mtime(), old.mtime_nsec());
    std::fs::write(wd.join("d2/f0"), "longer now ".repeat(500)).unwrap();
    std::fs::remove_file(wd.join("d3/f9")).unwrap();
    std::fs::write(wd.join("d3/new"), "new").unwrap();
    std::fs::set_permissions(wd.join("d0/f5"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let second = capture(&wd, &cps, "two", Some("sb"), 2).unwrap();

    assert_eq!(second.files, 40);
    assert_eq!(second.unchanged, 36, "all but the four changed files are shared");
    let written: u64 =
        ["d1/f3", "d2/f0", "d3/new", "d0/f5"].iter().map(|f| std::fs::metadata(wd.join(f)).unwrap().len()).sum();
    assert_eq!(second.new_bytes, written, "only the changed files were written");
    assert_eq!(ino(&cps.join("one/d0/f1")), ino(&cps.join("two/d0/f1")), "an unchanged file is one inode in both");
    for changed in ["d1/f3", "d2/f0", "d0/f5"] {
        assert_ne!(ino(&cps.join("one").join(changed)), ino(&cps.join("two").join(changed)), "{changed}");
    }
    // Each checkpoint is exactly what was captured.
    assert_same_tree(&wd, &restored(&cps, "two", &base.join("back-two")));
    assert_eq!(std::fs::read(cps.join("two/d1/f3")).unwrap(), "X".repeat(old.len() as usize).as_bytes());
    assert!(std::fs::read_to_string(cps.join("one/d1/f3")).unwrap().starts_with("file 1/3"));
    assert!(cps.join("one/d3/f9").exists() && !cps.join("two/d3/f9").exists());
    remove_tree(&base).unwrap();
}

#[test]
fn deleting_a_checkpoint_never_breaks_one_that_shares_its_files() {
    let base = tmp("shared-delete");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd);
    settle();
    capture(&wd, &cps, "one", None, 2).unwrap();
    let as_captured = restored(&cps, "one", &base.join("as-captured"));
    let two = capture(&wd, &cps, "two", None, 2).unwrap();
    assert_eq!(two.unchanged, 40);
    delete(&cps, "one").unwrap();
    assert!(!cps.join("one").exists() && !owner_file(&cps, "one").exists());
    assert_same_tree(&as_captured, &restored(&cps, "two", &base.join("back")));
    // And the other way: the newer one deleted, a third still shares with what is left.
    let three = capture(&wd, &cps, "three", None, 2).unwrap();
    assert_eq!(three.unchanged, 40);
    delete(&cps, "two").unwrap();
    assert_same_tree(&as_captured, &restored(&cps, "three", &base.join("back-three")));
    remove_tree(&base).unwrap();
}

#[test]
fn nothing_writes_through_a_shared_file() {
    let base = tmp("immutable");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd);
    settle();
    capture(&wd, &cps, "one", None, 2).unwrap();
    capture(&wd, &cps, "two", None, 2).unwrap();
    let shared = cps.join("two/d0/f1");
    assert_eq!(ino(&cps.join("one/d0/f1")), ino(&shared));
    let before = std::fs::read(&shared).unwrap();
    // A restore copies out: the working files are inodes of their own, and writing them
    // changes no checkpoint.
    let back = restored(&cps, "two", &base.join("back"));
    std::fs::remove_dir_all(&wd).unwrap();
    restore_in_place(&cps, "two", &wd, 2).unwrap();
    for dir in [&back, &wd] {
        assert_ne!(ino(&dir.join("d0/f1")), ino(&shared));
        std::fs::write(dir.join("d0/f1"), "scribbled").unwrap();
    }
    assert_eq!(std::fs::read(&shared).unwrap(), before);
    assert_eq!(std::fs::read(cps.join("one/d0/f1")).unwrap(), before);
    remove_tree(&base).unwrap();
}

#[test]
fn a_file_changed_just_before_a_capture_is_not_vouched_for_by_its_record() {
    let base = tmp("settled");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd);
    settle();
    std::fs::write(wd.join("d0/f0"), "just now").unwrap();
    capture(&wd, &cps, "one", None, 2).unwrap();
    // Its timestamps could not yet tell a second write in the same tick apart: left out.
    let m = std::fs::metadata(cps.join("one")).unwrap();
    let entries = record::read_entries(&owner_file(&cps, "one"), (m.dev(), m.ino())).unwrap();
    assert_eq!(entries.len(), 39);
    assert!(!entries.contains_key(b"d0/f0".as_slice()) && entries.contains_key(b"d0/f1".as_slice()));
    // So the next capture compares its bytes: shared while they are the same...
    let two = capture(&wd, &cps, "two", None, 2).unwrap();
    assert_eq!(two.unchanged, 40);
    assert_eq!(ino(&cps.join("one/d0/f0")), ino(&cps.join("two/d0/f0")));
    // ...and copied once they differ, whatever its size and mtime say.
    let before = std::fs::metadata(wd.join("d0/f0")).unwrap();
    std::fs::write(wd.join("d0/f0"), "just new").unwrap();
    set_mtime(&wd.join("d0/f0"), before.mtime(), before.mtime_nsec());
    let three = capture(&wd, &cps, "three", None, 2).unwrap();
    assert_eq!(three.unchanged, 39);
    assert_eq!(std::fs::read(cps.join("three/d0/f0")).unwrap(), b"just new");
    remove_tree(&base).unwrap();
}

#[test]
fn a_checkpoint_someone_else_replaced_is_not_linked_from() {
    let base = tmp("replaced");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd);
    settle();
    capture(&wd, &cps, "one", None, 2).unwrap();
    // As Mastra's own snapshot() does: a new directory under the same name, the record left.
    std::fs::rename(cps.join("one"), base.join("old")).unwrap();
    copy_tree(&wd, &cps.join("one"), Dest::Create, 1).unwrap();
    std::fs::write(cps.join("one/d0/f1"), "not what was captured").unwrap();
    let two = capture(&wd, &cps, "two", None, 2).unwrap();
    assert_eq!(two.unchanged, 0, "a stale record vouches for nothing");
    assert_same_tree(&wd, &restored(&cps, "two", &base.join("back")));

    // A file in the previous checkpoint that is not the inode its record names is copied too.
    let three = capture(&wd, &cps, "three", None, 2).unwrap();
    assert_eq!(three.unchanged, 40);
    std::fs::remove_file(cps.join("three/d0/f2")).unwrap();
    std::fs::write(cps.join("three/d0/f2"), "planted").unwrap();
    let four = capture(&wd, &cps, "four", None, 2).unwrap();
    assert_eq!(four.unchanged, 39);
    assert_eq!(std::fs::read(cps.join("four/d0/f2")).unwrap(), std::fs::read(wd.join("d0/f2")).unwrap());
    remove_tree(&base).unwrap();
}

#[test]
fn another_working_directory_shares_nothing() {
    let base = tmp("other-wd");
    let cps = base.join(".checkpoints");
    let (a, b) = (base.join("a"), base.join("b"));
    working_tree(&a);
    working_tree(&b);
    settle();
    capture(&a, &cps, "a", None, 2).unwrap();
    let from_b = capture(&b, &cps, "b", None, 2).unwrap();
    assert_eq!(from_b.unchanged, 0);
    let again = capture(&a, &cps, "a2", None, 2).unwrap();
    assert_eq!(again.unchanged, 40, "the last capture of this working directory, not the last capture");
    remove_tree(&base).unwrap();
}
