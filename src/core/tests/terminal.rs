//! A process on a terminal: its stdio, its size, its drain and its keys.

use super::*;

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
