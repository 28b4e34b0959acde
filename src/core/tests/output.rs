//! Reading the output: the log in order, truncation, cursors, and one decoding for listeners.

use super::*;

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
