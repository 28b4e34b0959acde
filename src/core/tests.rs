//! Core behaviours against real processes (`sh`, `sleep`, `cat`).

use crate::core::launch::command::{SpawnSpec, StdinMode};
use crate::core::output::cursor;
use crate::core::output::log::{EventBody, Stream};
use crate::core::supervise::process::Process;
use crate::core::supervise::readiness::{probe_once, Probe, ProbeResult};
use crate::core::supervise::supervisor::spawn;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static NEXT: AtomicU64 = AtomicU64::new(1);

fn sh(script: &str) -> SpawnSpec {
    let mut s = SpawnSpec::shell(script, "/tmp");
    s.env = vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())];
    s
}

fn start(spec: SpawnSpec) -> Arc<Process> {
    spawn(spec, format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed)), 0).expect("spawn")
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); look at its state.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

/// A live (not zombie) process with this group id. Zombies do not count: reparented ones wait
/// for an init that may reap them late.
fn has_live_member(pgid: i32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let Ok(s) = std::fs::read_to_string(e.path().join("stat")) else { return false };
        let Some(rest) = s.rfind(')').map(|i| &s[i + 1..]) else { return false };
        let f: Vec<&str> = rest.split_whitespace().collect();
        f.len() > 2 && f[2].parse() == Ok(pgid) && f[0] != "Z" && f[0] != "X"
    })
}

async fn within<T>(d: Duration, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(d, f).await.expect("timed out")
}

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
    assert!(exit.timed_out);
    assert_eq!(exit.signal, Some(libc::SIGKILL));
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(!has_live_member(p.pid as i32));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_reaches_grandchildren() {
    let p = start(sh("sleep 30 & echo $!; wait"));
    let mut rx = p.output.subscribe();
    within(Duration::from_secs(5), rx.wait_for(|s| *s >= 1)).await.unwrap();
    let grandchild: i32 = p.retained_text(Stream::Stdout).trim().parse().unwrap();
    assert!(alive(grandchild));
    assert!(p.signal(libc::SIGKILL, true));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert!(st.done.unwrap().killed);
    assert!(!alive(grandchild));
    assert!(!p.signal(libc::SIGKILL, true), "nothing left to signal");
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

/// `script` under `sh`, with a stdin pipe.
fn with_stdin(script: &str) -> Arc<Process> {
    let mut spec = sh(script);
    spec.stdin = StdinMode::Pipe;
    start(spec)
}

/// Closes `p`'s stdin twice (idempotent), waits for the end, checks its stdout, and that a
/// write after the exit is refused as such.
async fn close_and_expect(p: &Process, stdout: &str) {
    p.close_stdin().await.unwrap();
    p.close_stdin().await.unwrap();
    within(Duration::from_secs(5), p.wait_finished(None)).await;
    assert_eq!(p.retained_text(Stream::Stdout), stdout);
    let err = p.write_stdin(b"late".to_vec().into()).await.unwrap_err();
    assert_eq!(err.code(), "PROCESS_ALREADY_EXITED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_writes_are_ordered_and_close_sends_eof() {
    let p = with_stdin("cat");
    for i in 0..50 {
        p.write_stdin(format!("{i},").into_bytes().into()).await.unwrap();
    }
    let expected: String = (0..50).map(|i| format!("{i},")).collect();
    close_and_expect(&p, &expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdin_never_written_to_closes_and_then_refuses_writes() {
    // The writer starts at the first write: a close before any is the pipe's own close.
    close_and_expect(&with_stdin("cat; echo eof"), "eof\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdin_closed_while_running_refuses_the_next_write() {
    let p = with_stdin("cat; sleep 5");
    p.write_stdin(b"one\n".to_vec().into()).await.unwrap();
    p.close_stdin().await.unwrap();
    let err = p.write_stdin(b"two".to_vec().into()).await.unwrap_err();
    assert_eq!(err.code(), "PROCESS_STDIN_CLOSED");
    within(Duration::from_secs(5), async {
        while p.retained_text(Stream::Stdout) != "one\n" {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    p.send(libc::SIGKILL);
    within(Duration::from_secs(5), p.wait_finished(None)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignored_stdin_sees_eof_and_refuses_writes() {
    let mut spec = sh("cat; echo eof");
    spec.stdin = StdinMode::Ignore;
    let p = start(spec);
    assert_eq!(p.write_stdin(b"x".to_vec().into()).await.unwrap_err().code(), "PROCESS_STDIN_UNAVAILABLE");
    within(Duration::from_secs(5), p.wait_finished(None)).await;
    assert_eq!(p.retained_text(Stream::Stdout), "eof\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_then_follow_sees_every_byte_once_in_order() {
    let p = start(sh("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done"));
    let mut after = 0;
    let mut out = Vec::new();
    loop {
        let read = within(Duration::from_secs(5), p.read_log(after, 4096, Some(Duration::from_secs(5)))).await;
        assert!(!read.truncated);
        if read.events.is_empty() {
            break;
        }
        for e in &read.events {
            assert_eq!(e.seq, after + 1, "no gap, no duplicate");
            after = e.seq;
            if let EventBody::Output(Stream::Stdout, b) = &e.body {
                out.extend_from_slice(b);
            }
        }
    }
    let expected: String = (0..2000).map(|i| format!("line{i}\n")).collect();
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_falls_behind_is_told_truncated() {
    let mut spec = sh("head -c 200000 /dev/zero");
    spec.log_max_bytes = 16 * 1024;
    let p = start(spec);
    within(Duration::from_secs(5), p.wait_done(None)).await;
    let read = p.output.read_now(0, usize::MAX);
    assert!(read.truncated);
    assert!(p.output.evicted_any());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_round_trip_against_the_live_log() {
    let p = start(sh("echo a; echo b"));
    within(Duration::from_secs(5), p.wait_done(None)).await;
    let last = p.last_seq();
    let c = cursor::encode(&p.id, 1);
    assert_eq!(cursor::decode(&c, &p.id, last), Ok(1));
    assert!(cursor::decode(&c, "other", last).is_err());
}

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
async fn many_processes_are_reaped_without_zombies() {
    let procs: Vec<_> = (0..100).map(|_| start(sh("exit 0"))).collect();
    for p in &procs {
        within(Duration::from_secs(10), p.wait_done(None)).await;
        assert!(!std::path::Path::new(&format!("/proc/{}", p.pid)).exists() || !alive(p.pid as i32));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_is_closed_once_the_root_exits() {
    // A background child keeps a copy of stdin (fd 3) and reads it to EOF after the root exits.
    // EOF only comes when our write end is closed: it must be, at the root's exit, not when the
    // last handle is dropped (we hold `p` for the whole test).
    let p = start(sh("exec 3<&0; { cat <&3 >/dev/null; echo eof; } & exit 0"));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0);
    assert_eq!(p.retained_text(Stream::Stdout), "eof\n");
    assert!(p.write_stdin(bytes::Bytes::from_static(b"x")).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_position_just_read_is_never_past_the_end() {
    // Readers validate their next position against `last_seq()`; it must already cover every
    // event a read has handed out, even while the writer is appending.
    for _ in 0..20 {
        let p = start(sh("i=0; while [ $i -lt 300 ]; do echo $i; i=$((i+1)); done"));
        let mut after = 0;
        loop {
            let read = p.output.read_now(after, usize::MAX);
            assert!(read.next <= p.last_seq(), "read up to {} but last_seq() is {}", read.next, p.last_seq());
            after = read.next;
            if p.state().is_done() && after == p.last_seq() {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
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
async fn a_timeout_bounds_the_group_after_the_root_exits() {
    // The root exits at once; the grandchild holds the pipes (first) or not (second).
    for script in ["sleep 31 & echo started", "sleep 31 >/dev/null 2>&1 & exit 0"] {
        let mut spec = sh(script);
        spec.timeout_ms = Some(200);
        let p = start(spec);
        let t0 = Instant::now();
        let st = within(Duration::from_secs(10), p.wait_done(None)).await;
        assert!(st.done.unwrap().timed_out, "{script}: {st:?}");
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert!(!has_live_member(p.pid as i32));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mastra_end_is_frozen_when_it_is_reached() {
    // Finished (root exited, pipes drained) before the timeout; the group ends by the timeout.
    let mut spec = sh("sleep 33 >/dev/null 2>&1 & exit 0");
    spec.timeout_ms = Some(300);
    let p = start(spec);
    let st = within(Duration::from_secs(5), p.wait_finished(None)).await;
    assert!(!st.finished.unwrap().timed_out);
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert!(!st.finished.unwrap().timed_out, "what the Mastra face reported does not change");
    assert!(st.done.unwrap().timed_out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_that_left_its_group_is_still_signalled() {
    // perl joins the test runner's own process group, then becomes sleep.
    let p = start(sh("exec perl -e 'setpgrp(0, getpgrp(getppid())) or die; exec \"sleep\", \"32\"'"));
    let mine = unsafe { libc::getpgrp() };
    let moved = within(Duration::from_secs(5), async {
        loop {
            if unsafe { libc::getpgid(p.pid as i32) } == mine {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(moved);
    assert!(p.signal(libc::SIGKILL, true), "the root is reached through its pidfd");
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    let exit = st.done.unwrap();
    assert_eq!(exit.signal, Some(libc::SIGKILL));
    assert!(exit.killed);
    assert!(!p.signal(libc::SIGKILL, true), "nothing is left to reach");
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
async fn the_group_ends_when_its_last_grandchild_exits() {
    // The grandchild forks a great-grandchild and exits: the group lives on in it.
    let p = start(sh("(sleep 0.3; (sleep 0.3 >/dev/null 2>&1) & ) >/dev/null 2>&1 & exit 0"));
    let t0 = Instant::now();
    within(Duration::from_secs(10), p.wait_done(None)).await;
    assert!(t0.elapsed() >= Duration::from_millis(550), "ended after {:?}", t0.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_and_retained_text_share_one_decoding() {
    use std::sync::atomic::AtomicUsize;
    let woken = Arc::new(AtomicUsize::new(0));
    let w = woken.clone();
    let p = crate::core::supervise::supervisor::spawn_with_pump(
        sh("printf '\\360\\237'; sleep 0.05; printf '\\231\\202 done\\n'"),
        "pump".into(),
        0,
        Some(Box::new(move || {
            w.fetch_add(1, Ordering::Relaxed);
        })),
        false,
    )
    .unwrap();
    within(Duration::from_secs(5), p.wait_finished(None)).await;
    let (chunks, truncated) = p.output.pump_drain(true);
    assert!(!truncated);
    let text: String = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(text, "🙂 done\n");
    assert_eq!(p.retained_text(Stream::Stdout), text, "the retained text is the listeners' text");
    assert!(woken.load(Ordering::Relaxed) >= 1);
}

fn on_terminal(script: &str, cols: u16, rows: u16) -> SpawnSpec {
    let mut s = sh(script);
    s.pty = Some(crate::core::launch::command::Pty { cols, rows, term: "xterm".into() });
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_is_the_childs_stdio_and_its_size_is_set_before_it_runs() {
    let p = start(on_terminal("[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && stty size; echo err >&2", 100, 30));
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0);
    assert_eq!(p.retained_text(Stream::Stdout), "30 100\r\nerr\r\n");
    assert_eq!(p.retained_text(Stream::Stderr), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_is_drained_to_its_end_after_the_exit() {
    for _ in 0..5 {
        let p = start(on_terminal("stty raw -echo; head -c 200000 /dev/zero | tr '\\0' y", 80, 24));
        within(Duration::from_secs(10), p.wait_finished(None)).await;
        let text = p.retained_text(Stream::Stdout);
        assert_eq!(text.len(), 200_000);
        assert!(text.bytes().all(|b| b == b'y'));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_reach_the_program_and_eof_ends_its_input() {
    let p = start(on_terminal("read line; echo \"got:$line\"; cat; echo eof", 80, 24));
    p.write_stdin(bytes::Bytes::from_static(b"hello\n")).await.unwrap();
    p.close_stdin().await.unwrap();
    within(Duration::from_secs(10), p.wait_done(None)).await;
    let text = p.retained_text(Stream::Stdout);
    assert!(text.contains("got:hello\r\n"), "{text:?}");
    assert!(text.ends_with("eof\r\n"), "{text:?}");
    assert_eq!(p.resize(80, 24).unwrap_err().code(), "PROCESS_ALREADY_EXITED");
    let plain = start(sh("true"));
    assert_eq!(plain.resize(80, 24).unwrap_err().code(), "PROCESS_NO_TERMINAL");
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

/// A borrower of lent pipes, as the event loop's side is: it takes what is offered and reads it
/// into the log (up to `budget` bytes per loan, then gives the pipe back), gives it back when the
/// runtime asks, and drains the pump meanwhile. Returns the listener text and the bytes it read.
async fn borrow_until_finished(p: &Arc<Process>, budget: usize, take: bool) -> (String, usize) {
    borrow_as(p, budget, take, false).await
}

/// The same borrower, consuming stdout as a byte-stream reader (`by_reader`) instead of the pump.
async fn borrow_as(p: &Arc<Process>, budget: usize, take: bool, by_reader: bool) -> (String, usize) {
    use std::os::fd::AsRawFd;
    let mut text = String::new();
    let mut borrowed = 0;
    let mut lent: Vec<(Arc<crate::core::output::loan::Loan>, std::os::fd::OwnedFd, usize)> = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut at = 0;
    loop {
        let finished = p.state().is_finished();
        if by_reader {
            let read = p.output.reader_take(at, usize::MAX);
            assert!(!read.truncated, "the reader fell behind");
            for e in read.events {
                if let EventBody::Output(Stream::Stdout, b) = e.body {
                    text.push_str(std::str::from_utf8(&b).unwrap());
                }
            }
            at = read.next;
            p.output.set_reader_position(Some(at));
        } else {
            let (chunks, _) = p.output.pump_drain(finished);
            text.extend(chunks.iter().map(|c| c.text.as_str()));
        }
        if finished {
            assert!(lent.is_empty(), "finished while a pipe was lent");
            if by_reader {
                p.output.set_reader_position(None);
            }
            return (text, borrowed);
        }
        if take {
            for loan in p.output.loans() {
                if let Some(fd) = loan.take() {
                    lent.push((loan, fd, 0));
                }
            }
        }
        let mut still = Vec::new();
        for (loan, fd, got) in lent.drain(..) {
            if loan.reclaim_requested() || got >= budget {
                loan.give_back(fd);
                continue;
            }
            if p.output.consumers_lag() {
                still.push((loan, fd, got));
                continue;
            }
            // SAFETY: a read into a buffer we own, on a descriptor we hold.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            match n {
                0 => {
                    drop(fd);
                    loan.end();
                }
                n if n > 0 => {
                    p.output.push(loan.stream, &buf[..n as usize]);
                    borrowed += n as usize;
                    still.push((loan, fd, got + n as usize));
                }
                _ => still.push((loan, fd, got)),
            }
        }
        lent = still;
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

fn pumped(spec: SpawnSpec) -> Arc<Process> {
    let id = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let p = crate::core::supervise::supervisor::spawn_with_pump(spec, id, 0, Some(Box::new(|| {})), false).unwrap();
    p.output.allow_lending();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lent_pipe_read_by_the_borrower_then_given_back_loses_nothing() {
    // Lines, so that order is checked too: the borrower reads 2 MiB, then the runtime the rest.
    let p = pumped(sh("seq 1 1500000; echo end"));
    let (text, borrowed) = within(Duration::from_secs(30), borrow_until_finished(&p, 2 << 20, true)).await;
    let expected: String = (1..=1_500_000).map(|i| format!("{i}\n")).chain(["end\n".to_string()]).collect();
    assert!(borrowed > 0, "the flood was never lent");
    assert!(borrowed < expected.len(), "the pipe was never given back");
    assert_eq!(text.len(), expected.len());
    assert!(text == expected, "listener text differs");
    assert_eq!(p.state().finished.unwrap().code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_borrower_that_reads_to_the_end_ends_the_stream() {
    let p = pumped(sh("head -c 8388608 /dev/zero | tr '\\0' x; echo"));
    let (text, borrowed) = within(Duration::from_secs(30), borrow_until_finished(&p, usize::MAX, true)).await;
    assert!(borrowed > 0, "the flood was never lent");
    assert_eq!(text.len(), 8_388_609);
    assert!(text[..8_388_608].bytes().all(|b| b == b'x'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offer_nobody_takes_is_withdrawn_and_the_runtime_reads_on() {
    let p = pumped(sh("head -c 4194304 /dev/zero | tr '\\0' y"));
    let (text, borrowed) = within(Duration::from_secs(30), borrow_until_finished(&p, usize::MAX, false)).await;
    assert_eq!(borrowed, 0);
    assert_eq!(text.len(), 4_194_304);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lent_pipe_held_open_outside_the_group_is_taken_back_when_the_group_ends() {
    // The detached sleep keeps the pipe open: the borrower never reads its end of file, so the
    // process can only finish because the runtime takes the pipe back.
    let p = pumped(sh("setsid sleep 21 & head -c 4194304 /dev/zero | tr '\\0' z"));
    let (text, borrowed) = within(Duration::from_secs(15), borrow_until_finished(&p, usize::MAX, true)).await;
    assert!(borrowed > 0, "the flood was never lent");
    assert_eq!(text.len(), 4_194_304);
    let _ = std::process::Command::new("pkill").args(["-f", "^sleep 21$"]).status();
}

#[test]
fn a_reader_is_woken_once_until_it_takes_and_always_for_a_reclaim() {
    let out = crate::core::output::process_output::Output::new(1 << 20, 10_000, Some(0), None);
    let calls = Arc::new(AtomicU64::new(0));
    let count = calls.clone();
    out.set_reader_position(Some(0));
    out.set_reader_wake(Some(Box::new(move || {
        count.fetch_add(1, Ordering::SeqCst);
    })));
    let woken = || calls.load(Ordering::SeqCst);
    out.push(Stream::Stdout, b"a");
    out.push(Stream::Stdout, b"b");
    assert_eq!(woken(), 1, "one wake-up until the reader takes");
    assert_eq!(out.reader_take(0, 1 << 20).events.len(), 2);
    out.wake_reader();
    out.wake_reader();
    assert_eq!(woken(), 2, "the take answered the first wake-up");
    out.wake_for_reclaim();
    assert_eq!(woken(), 3, "a reclaim wakes a reader that has not taken");
    out.set_reader_wake(None);
    out.push(Stream::Stdout, b"c");
    assert_eq!(woken(), 3, "a removed wake-up is not called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_alone_borrows_a_flooding_pipe_and_loses_nothing() {
    // Held at the first byte for the reader, as a Mastra handle's reader is; no listener pump.
    let id = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let p = crate::core::supervise::supervisor::spawn_with_pump(sh("seq 1 1500000"), id, 0, None, true).unwrap();
    p.output.set_reader_wake(Some(Box::new(|| {})));
    p.output.allow_lending();
    let (text, borrowed) = within(Duration::from_secs(30), borrow_as(&p, 2 << 20, true, true)).await;
    let expected: String = (1..=1_500_000).map(|i| format!("{i}\n")).collect();
    assert!(borrowed > 0, "the flood was never lent to the reader");
    assert!(borrowed < expected.len(), "the pipe was never given back");
    assert!(text == expected, "reader bytes differ");
    assert_eq!(p.state().finished.unwrap().code, 0);
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
    spec.contain = true;
    let refuse = &crate::core::launch::spawn::imp::REFUSE_CLONE_INTO_CGROUP;
    refuse.with(|r| r.set(true));
    let p = start(spec);
    refuse.with(|r| r.set(false));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0);
    let dir = p.cgroup_dir.clone().expect("a contained process has a cgroup");
    let leaf = dir.file_name().unwrap().to_str().unwrap().to_string();
    let text = p.retained_text(Stream::Stdout);
    let line = text.lines().find(|l| l.starts_with("0::")).expect("a cgroup v2 line");
    assert!(line.ends_with(&format!("/{leaf}")), "the child ran in {line}, not in {}", dir.display());
}

#[cfg(target_os = "linux")]
#[test]
fn a_tree_that_outlives_its_root_ends_after_the_runtime_that_first_watched_one_is_gone() {
    // This machine gives us cgroups (see above).
    crate::core::tree::cgroup::parent().expect("a writable cgroup v2 directory for the tests");
    // The first runtime may be the one that starts watching cgroups; it is gone before the
    // second waits for its tree.
    for _ in 0..2 {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let mut spec = sh("sleep 0.3 & exit 0");
            spec.contain = true;
            let p = start(spec);
            let st = within(Duration::from_secs(5), p.wait_done(None)).await;
            assert_eq!(st.done.unwrap().code, 0);
        });
    }
}
