//! A flooding pipe lent to the consumer's thread and given back, losing nothing.

use super::*;

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
async fn a_pipe_given_back_while_the_reader_lags_is_read_on_only_once_it_catches_up() {
    use std::os::fd::AsRawFd;
    // A log of two events: the lag rule lets the producer one read past the reader, and one
    // more read evicts an event that the reader has not taken.
    let mut spec = sh("head -c 33554432 /dev/zero");
    spec.log_max_events = 2;
    let id = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let p = crate::core::supervise::supervisor::spawn_with_pump(spec, id, 0, None, true).unwrap();
    p.output.set_reader_wake(Some(Box::new(|| {})));
    p.output.allow_lending();
    let (mut at, mut got) = (0, 0);
    let take = |at: &mut u64, got: &mut usize| {
        let read = p.output.reader_take(*at, usize::MAX);
        assert!(!read.truncated, "the log evicted output the reader had not taken");
        for e in read.events {
            if let EventBody::Output(_, b) = e.body {
                *got += b.len();
            }
        }
        *at = read.next;
        p.output.set_reader_position(Some(*at));
    };
    within(Duration::from_secs(30), async {
        // The reader keeps up until the flooding pipe is offered; then it pauses.
        let (loan, fd) = loop {
            take(&mut at, &mut got);
            if let Some((loan, fd)) = p.output.loans().into_iter().find_map(|l| l.take().map(|fd| (l, fd))) {
                break (loan, fd);
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        };
        // The borrower reads as the event loop does: a read, then the lag rule, until it lags.
        let mut buf = crate::core::output::block::ReadBuf::block();
        while !p.output.consumers_lag() {
            let b = buf.bytes_mut();
            // SAFETY: a read into a buffer we own, on a descriptor we hold.
            let n = unsafe { libc::read(fd.as_raw_fd(), b.as_mut_ptr().cast(), b.len()) };
            if n > 0 {
                p.output.push_read(loan.stream, &mut buf, n as usize);
            }
        }
        // It gives the pipe back lagging, as the event loop does when the runtime asks for it or
        // when its consumer goes away. The reader still lags: what the runtime reads now must
        // wait for it. Given the time to read (it needs microseconds), a runtime that does not
        // wait has appended by then.
        let mut seq = p.output.subscribe();
        seq.borrow_and_update();
        loan.give_back(fd);
        let _ = tokio::time::timeout(Duration::from_millis(500), seq.changed()).await;
        loop {
            let finished = p.state().is_finished();
            take(&mut at, &mut got);
            if finished && at == p.last_seq() {
                break;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    })
    .await;
    assert_eq!(got, 33_554_432);
}
