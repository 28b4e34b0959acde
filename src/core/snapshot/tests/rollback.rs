//! A restore in place writes only what differs, and leaves exactly what a restore into an empty
//! directory makes.
use super::digest::{assert_same_tree, settle};
use super::*;
use std::io::{Seek, SeekFrom, Write};

/// The sample tree, a sparse file and a few more files to leave alone.
fn working_tree(wd: &Path, outside: &Path) {
    std::fs::create_dir_all(wd).unwrap();
    std::fs::create_dir_all(outside).unwrap();
    sample(wd, outside);
    let mut f = std::fs::File::create(wd.join("disk.img")).unwrap();
    f.set_len(64 << 20).unwrap();
    f.seek(SeekFrom::Start(10 << 20)).unwrap();
    f.write_all(b"data in the middle").unwrap();
    drop(f);
    std::fs::create_dir_all(wd.join("many")).unwrap();
    for i in 0..30 {
        std::fs::write(wd.join(format!("many/{i}")), format!("{i}").repeat(i + 1)).unwrap();
    }
    set_mtime(&wd.join("many"), 1_600_000_000, 1);
}

/// Every kind of difference a working directory can have from its checkpoint.
fn mess_up(wd: &Path) {
    std::fs::write(wd.join("README"), "changed\n").unwrap();
    std::fs::set_permissions(wd.join("src/run.sh"), std::fs::Permissions::from_mode(0o600)).unwrap();
    set_mtime(&wd.join("src/big.bin"), 1_700_000_000, 0);
    std::fs::remove_file(wd.join("many/3")).unwrap();
    std::fs::write(wd.join("many/extra"), "extra").unwrap();
    std::fs::create_dir_all(wd.join("new/deep/er")).unwrap();
    std::fs::write(wd.join("new/deep/er/f"), "f").unwrap();
    std::fs::remove_dir_all(wd.join("empty")).unwrap();
    std::fs::write(wd.join("empty"), "a file where a directory was").unwrap();
    std::fs::remove_file(wd.join("many/7")).unwrap();
    std::fs::create_dir_all(wd.join("many/7/inside")).unwrap();
    std::fs::remove_file(wd.join("link-in")).unwrap();
    symlink("elsewhere", wd.join("link-in")).unwrap();
    std::fs::remove_file(wd.join("dangling")).unwrap();
    std::fs::write(wd.join("dangling"), "a file where a link was").unwrap();
    let fifo = CString::new(wd.join("pipe").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let mut f = std::fs::OpenOptions::new().write(true).open(wd.join("disk.img")).unwrap();
    f.seek(SeekFrom::Start(40 << 20)).unwrap();
    f.write_all(b"more").unwrap();
    std::fs::set_permissions(wd.join("ro"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(wd.join("ro/added"), "x").unwrap();
}

#[test]
fn a_restore_in_place_leaves_what_a_full_restore_makes_and_writes_only_what_differs() {
    let base = tmp("in-place");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd, &base.join("outside"));
    settle();
    capture(&wd, &cps, "box", Some("sb"), 2).unwrap();
    let full = base.join("full");
    std::fs::create_dir(&full).unwrap();
    restore(&cps.join("box"), &full, 2).unwrap();
    assert_same_tree(&wd, &full);

    mess_up(&wd);
    let kept = ["src/deep/er/key", "many/0", "many/29", "src/odd"];
    let before: Vec<_> = kept.iter().map(|f| std::fs::symlink_metadata(wd.join(f)).unwrap()).collect();
    let report = restore_in_place(&cps, "box", &wd, 3).unwrap();
    assert_same_tree(&full, &wd);

    // README, run.sh, big.bin, disk.img, many/3, many/7, empty's place and ro/file's dir
    // aside, every file is the one that was there, untouched.
    for (f, m) in kept.iter().zip(&before) {
        let now = std::fs::symlink_metadata(wd.join(f)).unwrap();
        assert_eq!((now.ino(), now.ctime(), now.ctime_nsec()), (m.ino(), m.ctime(), m.ctime_nsec()), "{f}");
    }
    let changed = ["README", "src/run.sh", "src/big.bin", "disk.img", "many/3", "many/7"];
    assert_eq!(report.files, 6 + 30 + 1);
    assert_eq!(report.unchanged, report.files - changed.len() as u64);
    let written: u64 = changed.iter().map(|f| std::fs::metadata(full.join(f)).unwrap().len()).sum();
    assert!(report.new_bytes < written, "the sparse image's holes are not written");
    assert!(report.new_bytes >= written - (64 << 20) + 18, "{} bytes written", report.new_bytes);
    // many/extra, new/, pipe and ro/added taken out; what stood in the place of a checkpoint's
    // entry (empty, many/7, dangling) was replaced, not counted.
    assert_eq!(report.removed, 4);
    remove_tree(&base).unwrap();
}

#[test]
fn an_unchanged_working_directory_is_left_untouched() {
    let base = tmp("untouched");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd, &base.join("outside"));
    settle();
    capture(&wd, &cps, "box", None, 2).unwrap();
    let before = super::digest::entries(&wd);
    let ctimes = |root: &Path| -> Vec<(String, i64, i64)> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(root.join("many")).unwrap() {
            let m = std::fs::symlink_metadata(e.unwrap().path()).unwrap();
            v.push((String::new(), m.ctime(), m.ctime_nsec()));
        }
        let m = std::fs::symlink_metadata(root.join("many")).unwrap();
        v.push(("many".into(), m.ctime(), m.ctime_nsec()));
        v.sort();
        v
    };
    let c0 = ctimes(&wd);
    let report = restore_in_place(&cps, "box", &wd, 2).unwrap();
    assert_eq!((report.new_bytes, report.removed, report.unchanged), (0, 0, report.files));
    assert_eq!(super::digest::entries(&wd), before);
    assert_eq!(ctimes(&wd), c0, "neither the files nor their directory were written");
    remove_tree(&base).unwrap();
}

#[test]
fn a_checkpoint_without_a_record_is_restored_in_place_whole() {
    let base = tmp("no-record");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd, &base.join("outside"));
    // Made as Mastra's LocalSandbox makes one: no record beside it.
    std::fs::create_dir_all(&cps).unwrap();
    copy_tree(&wd, &cps.join("theirs"), Dest::Create, 2).unwrap();
    let full = base.join("full");
    std::fs::create_dir(&full).unwrap();
    restore(&cps.join("theirs"), &full, 2).unwrap();
    mess_up(&wd);
    let untouched = std::fs::symlink_metadata(wd.join("many/0")).unwrap();
    let report = restore_in_place(&cps, "theirs", &wd, 2).unwrap();
    assert_same_tree(&full, &wd);
    // No record vouches for any file; those that agree with the checkpoint's in size, mode,
    // mtime and bytes are left alone all the same, the six that differ are copied.
    assert_eq!(report.unchanged, report.files - 6);
    let now = std::fs::symlink_metadata(wd.join("many/0")).unwrap();
    assert_eq!(
        (now.ino(), now.ctime(), now.ctime_nsec()),
        (untouched.ino(), untouched.ctime(), untouched.ctime_nsec())
    );
    remove_tree(&base).unwrap();
}

#[test]
fn a_missing_working_directory_is_made() {
    let base = tmp("missing-wd");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd, &base.join("outside"));
    capture(&wd, &cps, "box", None, 2).unwrap();
    let full = base.join("full");
    std::fs::create_dir(&full).unwrap();
    restore(&cps.join("box"), &full, 2).unwrap();
    let elsewhere = base.join("a/b/wd");
    restore_in_place(&cps, "box", &elsewhere, 2).unwrap();
    assert_same_tree(&full, &elsewhere);
    remove_tree(&base).unwrap();
}

#[test]
fn names_are_checked_and_an_unknown_one_is_named() {
    let base = tmp("names");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    std::fs::create_dir_all(&wd).unwrap();
    std::fs::write(wd.join("f"), "f").unwrap();
    for bad in ["../x", ".hidden", ""] {
        assert!(matches!(restore_in_place(&cps, bad, &wd, 2), Err(CoreError::InvalidOption { .. })), "{bad}");
        assert!(matches!(delete(&cps, bad), Err(CoreError::InvalidOption { .. })), "{bad}");
    }
    // No checkpoints directory at all, then one without that name.
    for _ in 0..2 {
        for e in [restore_in_place(&cps, "nope", &wd, 2).unwrap_err(), delete(&cps, "nope").unwrap_err()] {
            assert_eq!(e.code(), "SANDBOX_SNAPSHOT_FAILED");
            assert_eq!(e.os_code().as_deref(), Some("ENOENT"));
            assert!(e.to_string().contains("no checkpoint named \"nope\""), "{e}");
        }
        capture(&wd, &cps, "other", None, 2).unwrap();
    }
    assert_eq!(std::fs::read(wd.join("f")).unwrap(), b"f", "nothing was changed");
    // A working directory inside the checkpoints directory would write into a checkpoint.
    let e = restore_in_place(&cps, "other", &cps.join("other/sub"), 2).unwrap_err();
    assert!(matches!(&e, CoreError::InvalidOption { name, .. } if name == "workingDirectory"), "{e}");
    remove_tree(&base).unwrap();
}

#[test]
fn list_reports_every_checkpoint_oldest_first() {
    let base = tmp("list");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    std::fs::create_dir_all(wd.join("d")).unwrap();
    std::fs::write(wd.join("a"), "12345").unwrap();
    std::fs::write(wd.join("d/b"), "123").unwrap();
    assert_eq!(list(&cps).unwrap(), vec![]);
    settle();
    let one = capture(&wd, &cps, "one", Some("sb"), 2).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let two = capture(&wd, &cps, "two", None, 2).unwrap();
    // Past a tick of the filesystem's coarse clock, which dates the foreign one.
    std::thread::sleep(std::time::Duration::from_millis(30));
    copy_tree(&wd, &cps.join("foreign"), Dest::Create, 1).unwrap();
    let got = list(&cps).unwrap();
    let names: Vec<_> = got.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["one", "two", "foreign"]);
    assert_eq!((got[0].files, got[0].bytes, got[0].new_bytes, got[0].created_ms), (2, 8, Some(8), one.created_ms));
    assert_eq!((got[1].files, got[1].bytes, got[1].new_bytes, got[1].created_ms), (2, 8, Some(0), two.created_ms));
    assert_eq!((got[2].files, got[2].bytes, got[2].new_bytes), (2, 8, None));
    assert!(got[2].created_ms >= two.created_ms);
    // The owner record of an older version names the directory but counts nothing: counted.
    let m = std::fs::metadata(cps.join("foreign")).unwrap();
    let old = format!("procvisor checkpoint owner\nid={}\ndev={}\nino={}\n", hex("sb"), m.dev(), m.ino());
    std::fs::write(owner_file(&cps, "foreign"), old).unwrap();
    assert_eq!(list(&cps).unwrap()[2], got[2]);
    delete(&cps, "one").unwrap();
    assert_eq!(list(&cps).unwrap().len(), 2);
    remove_tree(&base).unwrap();
}

#[test]
fn a_restore_in_place_never_removes_what_is_mounted_in_the_working_directory() {
    if !is_root() {
        eprintln!("skipped: mounting takes root");
        return;
    }
    let base = tmp("mounted");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    std::fs::create_dir_all(&wd).unwrap();
    std::fs::write(wd.join("f"), "f").unwrap();
    capture(&wd, &cps, "box", None, 2).unwrap();
    let mnt = wd.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !Command::new("mount").args(["-t", "tmpfs", "none"]).arg(&mnt).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: no tmpfs could be mounted here");
        remove_tree(&base).unwrap();
        return;
    }
    std::fs::write(mnt.join("kept"), "on another filesystem").unwrap();
    // Not in the checkpoint (an extra entry), then in it (a directory to restore into).
    let not_in_it = restore_in_place(&cps, "box", &wd, 2).err();
    let holder = base.join("holder");
    std::fs::create_dir_all(holder.join("mnt")).unwrap();
    std::fs::write(holder.join("f"), "f").unwrap();
    capture(&holder, &cps, "with-mnt", None, 2).unwrap();
    let in_it = restore_in_place(&cps, "with-mnt", &wd, 2).err();
    let kept = std::fs::read_dir(&mnt).map(|d| d.count()).unwrap_or(0);
    let content = std::fs::read_to_string(mnt.join("kept"));
    assert!(Command::new("umount").arg(&mnt).status().unwrap().success());
    for err in [not_in_it, in_it] {
        let err = err.expect("the restore stops at the mount point");
        assert_eq!(err.os_code().as_deref(), Some("EXDEV"), "{err}");
        assert!(err.to_string().ends_with("/wd/mnt'"), "{err}");
    }
    assert_eq!((kept, content.unwrap().as_str()), (1, "on another filesystem"));
    remove_tree(&base).unwrap();
}

#[test]
fn a_file_a_restore_copied_back_is_neither_copied_again_nor_captured_again() {
    let base = tmp("copied-back");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    working_tree(&wd, &base.join("outside"));
    settle();
    capture(&wd, &cps, "box", None, 2).unwrap();
    for f in ["many/1", "many/2", "README"] {
        std::fs::write(wd.join(f), "edited").unwrap();
    }
    let first = restore_in_place(&cps, "box", &wd, 2).unwrap();
    assert_eq!(first.unchanged, first.files - 3);
    let copied_back = std::fs::symlink_metadata(wd.join("many/1")).unwrap();

    // New inodes no record knows: their bytes are compared with the checkpoint's.
    let again = restore_in_place(&cps, "box", &wd, 2).unwrap();
    assert_eq!((again.unchanged, again.new_bytes), (again.files, 0));
    let now = std::fs::symlink_metadata(wd.join("many/1")).unwrap();
    assert_eq!(
        (now.ino(), now.ctime(), now.ctime_nsec()),
        (copied_back.ino(), copied_back.ctime(), copied_back.ctime_nsec())
    );
    // Once their last change is old enough, a restore that compared them records them: the next
    // one leaves them alone without reading them.
    let m = std::fs::metadata(cps.join("box")).unwrap();
    let recorded = || record::read_entries(&owner_file(&cps, "box"), (m.dev(), m.ino())).unwrap();
    assert_ne!(recorded()[b"many/1".as_slice()].ino, copied_back.ino(), "too new to record");
    settle();
    restore_in_place(&cps, "box", &wd, 2).unwrap();
    assert_eq!(recorded()[b"many/1".as_slice()].ino, copied_back.ino());
    assert_eq!(recorded().len() as u64, first.files);
    let two = capture(&wd, &cps, "two", None, 2).unwrap();
    assert_eq!((two.unchanged, two.new_bytes), (two.files, 0), "shared with the capture they were copied from");
    assert_eq!(super::digest::ino(&cps.join("two/many/1")), super::digest::ino(&cps.join("box/many/1")));

    // The same size, mode and mtime but other bytes: copied.
    std::fs::write(wd.join("many/1"), "X").unwrap();
    set_mtime(&wd.join("many/1"), copied_back.mtime(), copied_back.mtime_nsec());
    let three = capture(&wd, &cps, "three", None, 2).unwrap();
    assert_eq!(three.unchanged, three.files - 1);
    assert_eq!(std::fs::read(cps.join("three/many/1")).unwrap(), b"X");
    // A file the restore copies is a new inode with the checkpoint's times: nothing a record can
    // vouch for, so the record is left as it was (no rewrite on every restore that copies), even
    // where the checkpoint's file is old enough to be.
    settle();
    let record_before = std::fs::read(owner_file(&cps, "box")).unwrap();
    let back = restore_in_place(&cps, "box", &wd, 2).unwrap();
    assert_eq!(back.unchanged, back.files - 1);
    assert_eq!(std::fs::read(wd.join("many/1")).unwrap(), b"1".repeat(2));
    assert!(std::fs::read(owner_file(&cps, "box")).unwrap() == record_before, "the record was rewritten");
    remove_tree(&base).unwrap();
}
