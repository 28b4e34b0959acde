//! How a process ends: exit codes, signals, timeouts, the group and the tree, the owner, readiness.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_and_exit_code_are_captured() {
    let p = start(sh("echo out; echo err >&2; exit 3"));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 3);
    assert_eq!(p.retained_text(Stream::Stdout), "out\n");
    assert_eq!(p.retained_text(Stream::Stderr), "err\n");
    let read = p.output.read_now(0, usize::MAX);
    assert!(matches!(read.events.last().unwrap().body, EventBody::Exited(e) if e.code == 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_not_lost_when_the_process_exits_right_after_writing() {
    for _ in 0..20 {
        let p = start(sh("head -c 300000 /dev/zero"));
        within(Duration::from_secs(5), p.wait_finished(None)).await;
        assert_eq!(p.retained_text(Stream::Stdout).len() + p.retained_dropped(Stream::Stdout) as usize, 300000);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_escalates_to_sigkill_for_a_child_ignoring_sigterm() {
    let mut spec = sh("trap '' TERM; while :; do sleep 0.05; done");
    spec.timeout_ms = Some(100);
    spec.grace_ms = 200;
    let p = start(spec);
    let t0 = Instant::now();
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    let exit = st.done.unwrap();
    assert!(exit.timed_out());
    assert_eq!(exit.signal, Some(libc::SIGKILL));
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(!has_live_member(p.pid() as i32));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_reaches_grandchildren() {
    let p = start(sh("sleep 30 & echo $!; wait"));
    let mut rx = p.output.subscribe();
    within(Duration::from_secs(5), rx.wait_for(|s| *s >= 1)).await.unwrap();
    let grandchild: i32 = p.retained_text(Stream::Stdout).trim().parse().unwrap();
    assert!(alive(grandchild));
    assert!(p.signal(libc::SIGKILL, SignalIntent::Kill));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert!(st.done.unwrap().killed());
    assert!(!alive(grandchild));
    assert!(!p.signal(libc::SIGKILL, SignalIntent::Kill), "nothing left to signal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_stays_running_until_background_child_exits() {
    let p = start(sh("sleep 0.4 >/dev/null 2>&1 & exit 0"));
    let st = within(Duration::from_secs(5), p.wait_finished(None)).await;
    assert_eq!(st.finished.unwrap().code, 0);
    assert!(!p.state().is_done(), "the background child keeps the group alive");
    let t0 = Instant::now();
    within(Duration::from_secs(5), p.wait_done(None)).await;
    assert!(t0.elapsed() >= Duration::from_millis(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detached_grandchild_holding_the_pipes_does_not_hang_wait() {
    // setsid puts the grandchild out of our group while it keeps stdout open.
    let p = start(sh("setsid sleep 30 & echo started"));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0);
    assert_eq!(p.retained_text(Stream::Stdout), "started\n");
    let _ = std::process::Command::new("pkill").args(["-f", "^sleep 30$"]).status();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_processes_are_reaped_without_zombies() {
    let procs: Vec<_> = (0..100).map(|_| start(sh("exit 0"))).collect();
    for p in &procs {
        within(Duration::from_secs(10), p.wait_done(None)).await;
        assert!(!std::path::Path::new(&format!("/proc/{}", p.pid())).exists() || !alive(p.pid() as i32));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_bounds_the_group_after_the_root_exits() {
    // The root exits at once; the grandchild holds the pipes (first) or not (second).
    for script in ["sleep 31 & echo started", "sleep 31 >/dev/null 2>&1 & exit 0"] {
        let mut spec = sh(script);
        spec.timeout_ms = Some(200);
        let p = start(spec);
        let t0 = Instant::now();
        let st = within(Duration::from_secs(10), p.wait_done(None)).await;
        assert!(st.done.unwrap().timed_out(), "{script}: {st:?}");
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert!(!has_live_member(p.pid() as i32));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mastra_end_is_frozen_when_it_is_reached() {
    // Finished (root exited, pipes drained) before the timeout; the group ends by the timeout.
    let mut spec = sh("sleep 33 >/dev/null 2>&1 & exit 0");
    spec.timeout_ms = Some(300);
    let p = start(spec);
    let st = within(Duration::from_secs(5), p.wait_finished(None)).await;
    assert!(!st.finished.unwrap().timed_out());
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert!(!st.finished.unwrap().timed_out(), "what the Mastra face reported does not change");
    assert!(st.done.unwrap().timed_out());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_that_left_its_group_is_still_signalled() {
    // perl joins the test runner's own process group, then becomes sleep.
    let p = start(sh("exec perl -e 'setpgrp(0, getpgrp(getppid())) or die; exec \"sleep\", \"32\"'"));
    let mine = unsafe { libc::getpgrp() };
    let moved = within(Duration::from_secs(5), async {
        loop {
            if unsafe { libc::getpgid(p.pid() as i32) } == mine {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(moved);
    assert!(p.signal(libc::SIGKILL, SignalIntent::Kill), "the root is reached through its pidfd");
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    let exit = st.done.unwrap();
    assert_eq!(exit.signal, Some(libc::SIGKILL));
    assert!(exit.killed());
    assert!(!p.signal(libc::SIGKILL, SignalIntent::Kill), "nothing is left to reach");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_group_ends_when_its_last_grandchild_exits() {
    // The grandchild forks a great-grandchild and exits: the group lives on in it.
    let p = start(sh("(sleep 0.3; (sleep 0.3 >/dev/null 2>&1) & ) >/dev/null 2>&1 & exit 0"));
    let t0 = Instant::now();
    within(Duration::from_secs(10), p.wait_done(None)).await;
    assert!(t0.elapsed() >= Duration::from_millis(550), "ended after {:?}", t0.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_completed_for_a_retired_owner_is_killed_as_it_is_listed() {
    // A worker's realm that went away while one of its launches was under way.
    let owner = 7_000_000 + NEXT.fetch_add(1, Ordering::Relaxed);
    crate::core::supervise::registry::retire_owned(owner);
    let p = spawn(sh("sleep 30"), format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed)), owner).unwrap();
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().signal, Some(libc::SIGKILL));
    // Other owners are not affected.
    let q = start(sh("exit 4"));
    assert_eq!(within(Duration::from_secs(5), q.wait_done(None)).await.done.unwrap().code, 4);
}

#[cfg(target_os = "linux")]
#[test]
fn a_tree_that_outlives_its_root_ends_after_the_runtime_that_first_watched_one_is_gone() {
    // This machine gives us cgroups (the JS suites' containment tests need them too).
    crate::core::tree::cgroup::parent().expect("a writable cgroup v2 directory for the tests");
    // The first runtime may be the one that starts watching cgroups; it is gone before the
    // second waits for its tree.
    for _ in 0..2 {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let mut spec = sh("sleep 0.3 & exit 0");
            spec.containment = Containment::Cgroup;
            let p = start(spec);
            let st = within(Duration::from_secs(5), p.wait_done(None)).await;
            assert_eq!(st.done.unwrap().code, 0);
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_and_http_probes_see_a_real_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut s in listener.incoming().flatten().take(3) {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let d = Duration::from_secs(2);
    assert_eq!(probe_once(port, &Probe::Tcp, d).await, ProbeResult::Ready);
    let http = Probe::Http { path: "/".into(), min: 200, max: 399 };
    assert!(matches!(probe_once(port, &http, d).await, ProbeResult::NotReady(m) if m.contains("503")));
    let http = Probe::Http { path: "/".into(), min: 500, max: 599 };
    assert_eq!(probe_once(port, &http, d).await, ProbeResult::Ready);
}
