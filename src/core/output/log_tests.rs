//! The rules of `log.rs`, event by event, and its bounds under any sequence of appends.

use super::*;
use crate::core::exit::ExitInfo;

fn out(s: &str) -> EventBody {
    EventBody::Output(Stream::Stdout, Bytes::copy_from_slice(s.as_bytes()))
}

#[test]
fn sequence_numbers_start_at_one_and_reads_are_strictly_after() {
    let mut log = OutputLog::default();
    assert_eq!(log.append(out("a")), Some(1));
    assert_eq!(log.append(out("b")), Some(2));
    let r = log.read_after(1, usize::MAX);
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].seq, 2);
    assert_eq!(r.next, 2);
    assert!(!r.truncated);
}

#[test]
fn evicts_whole_events_oldest_first_and_reports_truncation() {
    let mut log = OutputLog::new(10, 100);
    for _ in 0..5 {
        log.append(out("abcd"));
    }
    assert_eq!(log.retained_bytes(), 8);
    assert_eq!(log.first_retained_seq(), 4);
    let r = log.read_after(0, usize::MAX);
    assert!(r.truncated);
    assert_eq!(r.events.first().map(|e| e.seq), Some(4));
    let r = log.read_after(3, usize::MAX);
    assert!(!r.truncated, "position 3 is just before the oldest retained event");
}

#[test]
fn count_bound_applies() {
    let mut log = OutputLog::new(usize::MAX, 3);
    for _ in 0..10 {
        log.append(out("x"));
    }
    assert_eq!(log.first_retained_seq(), 8);
}

#[test]
fn tail_is_the_end_of_one_stream_and_starts_on_a_character() {
    let mut log = OutputLog::default();
    log.append(EventBody::Output(Stream::Stderr, Bytes::from_static(b"first ")));
    log.append(out("not stderr"));
    log.append(EventBody::Output(Stream::Stderr, Bytes::from("é-last".as_bytes().to_vec())));
    assert_eq!(log.tail(Stream::Stderr, 1024), "first é-last");
    // 6 bytes back is the second byte of "é": the tail starts after it.
    assert_eq!(log.tail(Stream::Stderr, 6), "-last");
    assert_eq!(log.tail(Stream::Stderr, 8), " é-last");
    assert_eq!(log.tail(Stream::Stderr, 10), "st é-last");
    assert_eq!(log.tail(Stream::Stdout, 3), "err");
    assert_eq!(OutputLog::default().tail(Stream::Stderr, 10), "");
}

#[test]
fn nothing_after_terminal_event() {
    let mut log = OutputLog::default();
    log.append(out("x"));
    assert!(log.append(EventBody::Exited(ExitInfo::default())).is_some());
    assert!(log.append(out("late")).is_none());
    assert!(log.is_closed());
}

#[test]
fn terminal_event_survives_a_tiny_bound() {
    let mut log = OutputLog::new(0, 1);
    log.append(out("abc"));
    log.append(EventBody::Exited(ExitInfo::default()));
    let r = log.read_after(0, usize::MAX);
    assert!(matches!(r.events[0].body, EventBody::Exited(_)));
}

mod properties {
    use super::super::*;
    use proptest::prelude::*;

    fn body_of(stream: bool, len: usize, seq: u64) -> EventBody {
        // Bytes that name their sequence number, so a mixed-up event cannot pass for another.
        let data: Vec<u8> = (0..len).map(|i| (seq as usize * 31 + i) as u8).collect();
        EventBody::Output(if stream { Stream::Stdout } else { Stream::Stderr }, Bytes::from(data))
    }

    fn build(
        chunks: &[(bool, usize)],
        terminal: bool,
        max_bytes: usize,
        max_events: usize,
    ) -> (OutputLog, Vec<EventBody>) {
        let mut log = OutputLog::new(max_bytes, max_events);
        let mut appended = Vec::new();
        for (i, &(stream, len)) in chunks.iter().enumerate() {
            let body = body_of(stream, len, i as u64 + 1);
            assert_eq!(log.append(body.clone()), Some(i as u64 + 1));
            appended.push(body);
        }
        if terminal {
            let body = EventBody::Exited(ExitInfo { code: 3, ..Default::default() });
            assert!(log.append(body.clone()).is_some());
            appended.push(body);
        }
        (log, appended)
    }

    fn weight(b: &EventBody) -> u64 {
        match b {
            EventBody::Output(_, d) => d.len() as u64,
            _ => 0,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn dropped_and_kept_bytes_add_up_and_the_bounds_hold(
            chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 0..60),
            terminal in any::<bool>(),
            max_bytes in 0usize..300,
            max_events in 0usize..30,
        ) {
            let (log, appended) = build(&chunks, terminal, max_bytes, max_events);
            let total: u64 = appended.iter().map(weight).sum();
            prop_assert_eq!(log.retained_bytes() as u64 + log.evicted_bytes(), total);
            prop_assert_eq!(log.last_seq(), appended.len() as u64);
            let all = log.read_after(log.first_retained_seq().saturating_sub(1), usize::MAX);
            let kept: u64 = all.events.iter().map(|e| weight(&e.body)).sum();
            prop_assert_eq!(kept, log.retained_bytes() as u64);
            if !appended.is_empty() {
                // The newest event always stays (a terminal event is never lost); beyond it the bounds hold.
                prop_assert_eq!(all.events.last().map(|e| e.seq), Some(log.last_seq()));
                prop_assert!(all.events.len() <= max_events.max(1));
                prop_assert!(all.events.len() == 1 || log.retained_bytes() <= max_bytes);
            }
            prop_assert_eq!(log.evicted_any(), log.first_retained_seq() > 1);
            prop_assert_eq!(log.is_closed(), terminal);
            // Whatever is kept is what was appended, under its own sequence number.
            for e in &all.events {
                prop_assert_eq!(&e.body, &appended[e.seq as usize - 1]);
            }
        }

        #[test]
        fn reads_from_any_position_are_contiguous_ordered_and_truncated_exactly_when_evicted(
            chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 0..60),
            terminal in any::<bool>(),
            max_bytes in 0usize..300,
            max_events in 0usize..30,
            read_bytes in 0usize..200,
        ) {
            let (log, _) = build(&chunks, terminal, max_bytes, max_events);
            let first = log.first_retained_seq();
            for pos in 0..=log.last_seq() {
                let r = log.read_after(pos, read_bytes);
                prop_assert_eq!(r.truncated, pos + 1 < first, "position {} with oldest {}", pos, first);
                let start = if r.truncated { first } else { pos + 1 };
                if start <= log.last_seq() {
                    prop_assert!(!r.events.is_empty(), "at least one event when there is one");
                }
                for (i, e) in r.events.iter().enumerate() {
                    prop_assert_eq!(e.seq, start + i as u64);
                }
                let taken: usize = r.events.iter().skip(1).map(|e| weight(&e.body) as usize).sum();
                prop_assert!(r.events.len() <= 1 || taken + weight(&r.events[0].body) as usize <= read_bytes);
                prop_assert_eq!(r.next, r.events.last().map(|e| e.seq).unwrap_or(if r.truncated { first - 1 } else { pos }));
            }
        }

        #[test]
        fn reading_in_small_steps_sees_every_retained_event_once(
            chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 1..60),
            max_bytes in 0usize..300,
            max_events in 1usize..30,
            read_bytes in 0usize..100,
        ) {
            let (log, _) = build(&chunks, true, max_bytes, max_events);
            let mut pos = 0;
            let mut seen = Vec::new();
            let mut truncations = 0;
            loop {
                let r = log.read_after(pos, read_bytes);
                truncations += r.truncated as u32;
                if r.events.is_empty() {
                    break;
                }
                seen.extend(r.events.iter().map(|e| e.seq));
                pos = r.next;
            }
            prop_assert!(truncations <= 1);
            let expected: Vec<u64> = (log.first_retained_seq()..=log.last_seq()).collect();
            prop_assert_eq!(seen, expected);
        }

        #[test]
        fn nothing_is_appended_after_the_terminal_event(
            chunks in proptest::collection::vec((any::<bool>(), 0usize..64), 0..20),
            late in proptest::collection::vec(0usize..64, 1..5),
        ) {
            let (mut log, _) = build(&chunks, true, 100, 10);
            let (last, retained, evicted) = (log.last_seq(), log.retained_bytes(), log.evicted_bytes());
            for len in late {
                prop_assert_eq!(log.append(body_of(true, len, 0)), None);
                prop_assert_eq!(log.append(EventBody::Exited(ExitInfo::default())), None);
            }
            prop_assert_eq!((log.last_seq(), log.retained_bytes(), log.evicted_bytes()), (last, retained, evicted));
        }
    }
}
