//! Several sandboxes capturing one checkpoint name at once, and restores while they do.
use super::*;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};

const WRITERS: usize = 4;
const TIMES: usize = 16;

/// A working directory whose every file says which one it is, so a checkpoint mixing two of
/// them shows.
fn working_directory(root: &Path, who: usize) {
    std::fs::create_dir_all(root.join("sub")).unwrap();
    for i in 0..20 {
        std::fs::write(root.join(format!("sub/f{i}")), format!("{who}")).unwrap();
    }
    std::fs::write(root.join("who"), format!("{who}")).unwrap();
}

fn leftovers(cps: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(cps)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "box" && n != ".owner-box" && n != ".lock-box")
        .collect();
    names.sort();
    names
}

#[test]
fn concurrent_captures_of_one_name_leave_one_complete_checkpoint_and_nothing_else() {
    captures_at_once("concurrent", false);
}

/// The same where a checkpoint cannot be swapped in one step (two renames, under the lock).
#[test]
fn concurrent_captures_are_safe_with_two_renames_too() {
    swap::TWO_RENAMES.store(true, Ordering::Relaxed);
    captures_at_once("two-renames", false);
    swap::TWO_RENAMES.store(false, Ordering::Relaxed);
}

/// The same with files old enough to be linked: each capture links from the checkpoint that
/// another is swapping out and removing meanwhile, and copies whatever is gone by then.
#[test]
fn concurrent_captures_that_link_from_each_other_are_safe_too() {
    captures_at_once("linking", true);
}

fn captures_at_once(tag: &str, settled: bool) {
    let base = tmp(tag);
    let cps = base.join(".checkpoints");
    let wds: Vec<PathBuf> = (0..WRITERS).map(|i| base.join(format!("wd{i}"))).collect();
    for (i, wd) in wds.iter().enumerate() {
        working_directory(wd, i);
    }
    if settled {
        super::digest::settle();
    }
    let wanted: Arc<Vec<_>> = Arc::new(wds.iter().map(|wd| describe(wd)).collect());
    capture(&wds[0], &cps, "box", Some("sb-0"), 2).unwrap();

    // A restore running all along must always read one whole capture.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (cps, base, wanted, stop) = (cps.clone(), base.clone(), wanted.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut restores = 0;
            while !stop.load(Ordering::Relaxed) || restores == 0 {
                let into = base.join(format!("restored-{restores}"));
                std::fs::create_dir(&into).unwrap();
                restore(&cps.join("box"), &into, 2).unwrap_or_else(|e| panic!("restore {restores}: {e:?}"));
                let got = describe(&into);
                assert!(wanted.contains(&got), "restore {restores} read a mixed or partial checkpoint");
                remove_tree(&into).unwrap();
                restores += 1;
            }
            restores
        })
    };
    let mut linked = 0;
    for time in 0..TIMES {
        let barrier = Arc::new(Barrier::new(WRITERS));
        let writers: Vec<_> = (0..WRITERS)
            .map(|i| {
                let (wd, cps, barrier) = (wds[i].clone(), cps.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    capture(&wd, &cps, "box", Some(&format!("sb-{i}")), 2)
                })
            })
            .collect();
        for (i, w) in writers.into_iter().enumerate() {
            linked += w.join().unwrap().unwrap_or_else(|e| panic!("time {time}, capture {i}: {e:?}")).unchanged;
        }
        assert_eq!(leftovers(&cps), Vec::<String>::new(), "time {time}: nothing left behind");
        let got = describe(&cps.join("box"));
        let winner = wanted.iter().position(|w| *w == got).expect("the checkpoint is one whole capture");
        // The record names the sandbox whose capture is in place, by that very directory.
        let (id, dev, ino) = read_owner(&owner_file(&cps, "box")).unwrap();
        let m = std::fs::symlink_metadata(cps.join("box")).unwrap();
        assert_eq!((id, dev, ino), (hex(&format!("sb-{winner}")), m.dev(), m.ino()), "time {time}");
    }
    if settled {
        assert!(linked > 0, "no file was linked");
    }
    stop.store(true, Ordering::Relaxed);
    let restores = reader.join().unwrap();
    assert!(restores > 0);
    remove_tree(&base).unwrap();
}

/// Two restores in place of different checkpoints into one working directory, from two
/// processes (a page's button and an agent's tool, say), run one after the other: the working
/// directory ends as one of the two checkpoints, never a mix of both.
#[test]
fn restores_in_place_of_one_working_directory_take_turns() {
    let base = tmp("restore-turns");
    let (wd, cps) = (base.join("wd"), base.join(".checkpoints"));
    let expected: Vec<u64> = ["one", "two"]
        .iter()
        .map(|who| {
            let _ = remove_tree(&wd);
            std::fs::create_dir_all(wd.join("sub")).unwrap();
            for i in 0..300 {
                std::fs::write(wd.join(format!("sub/f{i}")), format!("{who} {}", "x".repeat(i))).unwrap();
            }
            capture(&wd, &cps, who, None, 2).unwrap();
            let full = base.join(format!("full-{who}"));
            std::fs::create_dir(&full).unwrap();
            restore(&cps.join(who), &full, 2).unwrap();
            super::digest::digest(&full)
        })
        .collect();
    for round in 0..6 {
        let go = Arc::new(Barrier::new(2));
        let both: Vec<_> = ["one", "two"]
            .into_iter()
            .map(|who| {
                let (go, wd, cps) = (go.clone(), wd.clone(), cps.clone());
                std::thread::spawn(move || {
                    go.wait();
                    restore_in_place(&cps, who, &wd, 2).unwrap()
                })
            })
            .collect();
        for t in both {
            t.join().unwrap();
        }
        let now = super::digest::digest(&wd);
        assert!(expected.contains(&now), "round {round}: the working directory mixes both checkpoints");
    }
    remove_tree(&base).unwrap();
}
