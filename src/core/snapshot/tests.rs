use super::*;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::process::Command;

mod concurrent;
mod deep;
mod digest;
mod incremental;
mod inside;
mod rollback;
mod sparse;
mod vanishing;

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
    let t = [libc::timespec { tv_sec: secs, tv_nsec: nsec as _ }, libc::timespec { tv_sec: secs, tv_nsec: nsec as _ }];
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
        LifecycleOptions { timeout_ms: None, snapshot_on_stop: false, persistent: false }
    );
    // A persistent sandbox always has a lifetime: five minutes unless it names one.
    let persistent = Value::Object(vec![
        ("persistent".to_string(), Value::Bool(true)),
        ("id".to_string(), Value::String("agent-1".into())),
    ]);
    let persistent = lifecycle_options(&persistent).unwrap();
    assert_eq!((persistent.persistent, persistent.timeout_ms), (true, Some(300_000.0)));
    let both = Value::Object(vec![
        ("persistent".to_string(), Value::Bool(true)),
        ("id".to_string(), Value::String("agent-1".into())),
        ("timeoutMs".to_string(), Value::Number(2_000.0)),
    ]);
    assert_eq!(lifecycle_options(&both).unwrap().timeout_ms, Some(2_000.0));
    // 0: no lifetime, persistent or not.
    let forever = Value::Object(vec![
        ("persistent".to_string(), Value::Bool(true)),
        ("id".to_string(), Value::String("agent-1".into())),
        ("timeoutMs".to_string(), Value::Number(0.0)),
    ]);
    assert_eq!(lifecycle_options(&forever).unwrap().timeout_ms, None);
    assert_eq!(lifecycle_options(&obj("timeoutMs", Value::Number(0.0))).unwrap().timeout_ms, None);
    assert_eq!(
        lifecycle_options(&obj("persistent", Value::String("yes".into()))).unwrap_err().code(),
        "INVALID_PROCESS_OPTION"
    );
    assert_eq!(lifecycle_options(&obj("timeoutMs", Value::Number(1.5))).unwrap().timeout_ms, Some(1.5));
    assert!(lifecycle_options(&obj("snapshotOnStop", Value::Bool(true))).unwrap().snapshot_on_stop);
    for bad in [
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
    // Without an id nothing could find a persistent sandbox again.
    for id in [None, Some(Value::Null), Some(Value::String(String::new()))] {
        let mut o = vec![("persistent".to_string(), Value::Bool(true))];
        o.extend(id.map(|v| ("id".to_string(), v)));
        let e = lifecycle_options(&Value::Object(o)).unwrap_err();
        assert!(matches!(&e, CoreError::InvalidOption { name, .. } if name == "id"), "{e}");
    }
    assert!(check_name("a.b-c_1").is_ok());
    for bad in ["", ".tmp", "a/b", "a..b", "-x"] {
        assert!(check_name(bad).is_err(), "{bad}");
    }
}
