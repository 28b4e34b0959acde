//! What a launch starts and how: errors, environment, limits, the cgroup, the launcher.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_errors_are_typed() {
    let err = spawn(SpawnSpec::new(vec!["/no/such/program".into()], "/tmp"), "e1".into(), 0).unwrap_err();
    assert_eq!(err.code(), "PROCESS_SPAWN_FAILED");
    let err = spawn(SpawnSpec::new(vec!["sh".into()], "/no/such/dir"), "e2".into(), 0).unwrap_err();
    assert_eq!(err.code(), "INVALID_PROCESS_CWD");
    let err = spawn(SpawnSpec::new(vec![], "/tmp"), "e3".into(), 0).unwrap_err();
    assert_eq!(err.code(), "INVALID_PROCESS_COMMAND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_is_exactly_what_was_given() {
    let mut spec = SpawnSpec::new(vec!["/usr/bin/env".into()], "/tmp");
    spec.env = vec![("ONLY".into(), "this".into())];
    let p = start(spec);
    within(Duration::from_secs(5), p.wait_finished(None)).await;
    assert_eq!(p.retained_text(Stream::Stdout), "ONLY=this\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold_from_the_first_instruction() {
    // The shell's first act is to open descriptors 3 to 9; `open_files: 8` allows 0–7 only.
    // Limits set after the spawn let this through about two times in three.
    for _ in 0..20 {
        let mut spec = sh("for i in 3 4 5 6 7 8 9; do eval \"exec $i</dev/null\" || exit 3; done; echo escaped");
        spec.limits.open_files = Some(8);
        let p = start(spec);
        let st = within(Duration::from_secs(5), p.wait_done(None)).await;
        assert_ne!(st.done.unwrap().code, 0);
        assert_eq!(p.retained_text(Stream::Stdout), "");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_above_the_hard_limit_is_capped_not_refused() {
    let mut spec = sh("ulimit -n; ulimit -Hn");
    spec.limits.open_files = Some(u64::MAX - 1);
    let p = start(spec);
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0);
    let out = p.retained_text(Stream::Stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], lines[1], "soft = hard");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_list_too_long_is_named() {
    let spec = SpawnSpec::new(vec!["/bin/echo".into(), "x".repeat(300_000)], "/tmp");
    let err = spawn(spec, "e2big".into(), 0).unwrap_err();
    assert_eq!(err.code(), "PROCESS_SPAWN_FAILED");
    assert_eq!(err.os_code().as_deref(), Some("E2BIG"));
    assert!(err.to_string().contains("E2BIG"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_a_process_stands_the_launcher_by() {
    let l = crate::core::launch::launcher::global().expect("a launcher thread");
    // Other tests' processes may be live at the same moment (then no stand-by is asked for), so
    // try ends until the others are done; without the supervisor's stand-by the launcher could
    // never be claimed.
    let mut seen = false;
    let give_up = Instant::now() + Duration::from_secs(60);
    while Instant::now() < give_up {
        let p = start(sh("exit 0"));
        within(Duration::from_secs(5), p.wait_done(None)).await;
        let until = Instant::now() + Duration::from_millis(5);
        while Instant::now() < until && !seen {
            seen = l.claim();
        }
        if seen {
            break;
        }
    }
    assert!(
        seen,
        "no end stood the launcher by (window {} µs, parked {}, live {})",
        l.window_us(),
        l.parked(),
        crate::core::supervise::registry::live_count()
    );
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_cannot_be_born_in_its_cgroup_joins_it_before_it_runs() {
    // This machine gives us cgroups (the JS suites' containment tests need them too); without
    // them there is nothing to place.
    crate::core::tree::cgroup::parent().expect("a writable cgroup v2 directory for the tests");
    let mut spec = sh("cat /proc/self/cgroup");
    spec.containment = Containment::Cgroup;
    let refuse = &crate::core::launch::spawn::imp::REFUSE_CLONE_INTO_CGROUP;
    refuse.with(|r| r.set(true));
    let p = start(spec);
    refuse.with(|r| r.set(false));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0);
    let dir = p.cgroup_dir().expect("a contained process has a cgroup");
    let leaf = dir.file_name().unwrap().to_str().unwrap().to_string();
    let text = p.retained_text(Stream::Stdout);
    let line = text.lines().find(|l| l.starts_with("0::")).expect("a cgroup v2 line");
    assert!(line.ends_with(&format!("/{leaf}")), "the child ran in {line}, not in {}", dir.display());
}
