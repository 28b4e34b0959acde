//! The stdin of a process: ordered writes, EOF, and refusals once it is closed or the root is gone.

use super::*;

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
