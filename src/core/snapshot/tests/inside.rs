//! A checkpoints directory inside the working directory would make a capture copy itself.
use super::*;

fn refused(r: &CoreResult<Report>) -> bool {
    matches!(r, Err(CoreError::InvalidOption { name, .. }) if name == "checkpointsDirectory")
}

#[test]
fn a_checkpoints_directory_inside_the_working_directory_is_refused_at_once() {
    let base = tmp("inside");
    let wd = base.join("wd");
    std::fs::create_dir_all(wd.join("src")).unwrap();
    std::fs::write(wd.join("src/f"), "f").unwrap();
    symlink(&wd, base.join("link")).unwrap();
    for cps in [
        wd.join(".checkpoints"),
        wd.join("src/deeper/still"),
        wd.clone(),
        // The same place by other names: through a link, with `..`, relative to nothing.
        base.join("link/.checkpoints"),
        wd.join("missing/../.checkpoints"),
    ] {
        let r = capture(&wd, &cps, "box", None, 2);
        assert!(refused(&r), "{}: {r:?}", cps.display());
    }
    let mut left: Vec<_> = std::fs::read_dir(&wd).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, vec!["src"], "nothing was made in the working directory");
    assert_eq!(std::fs::read_dir(wd.join("src")).unwrap().count(), 1);

    // Beside it, even under a name that starts like it, is fine.
    capture(&wd, &base.join("wd-checkpoints"), "box", None, 2).unwrap();
    capture(&wd, &base.join(".checkpoints"), "box", None, 2).unwrap();
    // A path that cannot be resolved all the way (a file where a directory should be) is
    // compared as written: not inside, so the capture itself says what is wrong with it.
    std::fs::write(base.join("a-file"), "").unwrap();
    assert!(check_checkpoints_directory(&wd, &base.join("a-file/cps")).is_ok());
    let r = capture(&wd, &base.join("a-file/cps"), "box", None, 2);
    assert!(matches!(r, Err(CoreError::SnapshotFailed { errno: Some(libc::ENOTDIR), .. })), "{r:?}");
    // The working directory inside the checkpoints directory is fine too.
    let nested = base.join("cps/wd");
    std::fs::create_dir_all(&nested).unwrap();
    capture(&nested, &base.join("cps"), "box", None, 2).unwrap();
    remove_tree(&base).unwrap();
}

#[test]
fn a_copy_that_meets_its_own_destination_stops_there() {
    // What the path check cannot see (a bind mount, say): the copy reaches the directory it is
    // writing, and must not copy that into itself over and over.
    let base = tmp("itself");
    std::fs::create_dir_all(base.join("src/sub")).unwrap();
    std::fs::write(base.join("src/f"), "f").unwrap();
    let r = copy_tree(&base.join("src"), &base.join("src/sub/copy"), Dest::Create, 2);
    let f = r.expect_err("the copy fails");
    assert_eq!((f.errno, f.syscall), (libc::ELOOP, "open"));
    assert_eq!(f.path, base.join("src/sub/copy"));
    assert!(!base.join("src/sub/copy").exists(), "the partial copy is removed");
    remove_tree(&base).unwrap();
}
