//! A bound on the OSC strings (`ESC ] … BEL` or `… ESC \`: window titles, hyperlinks, clipboard)
//! a terminal's screen sees. The emulator's parser (`vte`) keeps an OSC string in a buffer that
//! grows without limit until its terminator, and keeps the buffer's capacity afterwards, so one
//! 64 MiB title, or an OSC that never ends, would cost that much memory for the terminal's whole
//! life. This filter sits between the output and the parser: it holds an OSC string until its
//! terminator (up to `limit` bytes) and then passes it on whole, or drops it entirely once it is
//! longer, down to its terminator; every other byte passes on unchanged and in order.
//!
//! It follows the parser's own rules for where an OSC starts and ends, so the two never disagree:
//! an ESC puts the parser in its escape state from any state, `]` there starts an OSC (controls,
//! DEL, bytes from 0x80 and more ESCs keep the escape state), and BEL, CAN, SUB or ESC end the OSC
//! (an ESC ends it whatever follows, as ST's first byte or not).

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Anywhere but right after an ESC or in an OSC: only an ESC matters.
    Ground,
    /// After an ESC (passed on): the parser is in its escape state.
    Escape,
    /// In an OSC within the limit: held, the parser still in its escape state.
    Osc,
    /// In an OSC past the limit: dropped up to its terminator, the parser still in its escape state.
    Discard,
}

pub struct OscFilter {
    limit: usize,
    state: State,
    /// The OSC under way (`]` and its string), at most `limit` bytes.
    held: Vec<u8>,
}

fn ends_osc(b: u8) -> bool {
    matches!(b, BEL | CAN | SUB | ESC)
}

impl OscFilter {
    /// Drops an OSC string (its `]` and its text) longer than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self { limit, state: State::Ground, held: Vec::new() }
    }

    /// Hands `out` the parts of `data` the parser should see, in order. State carries over from
    /// one call to the next, so an OSC may be split anywhere between calls.
    pub fn filter(&mut self, data: &[u8], mut out: impl FnMut(&[u8])) {
        // `data[start..i]` passes on unchanged once something interrupts it (or at the end).
        let (mut start, mut i) = (0, 0);
        while i < data.len() {
            match self.state {
                State::Ground => match data[i..].iter().position(|&b| b == ESC) {
                    Some(n) => {
                        i += n + 1;
                        self.state = State::Escape;
                    }
                    None => i = data.len(),
                },
                State::Escape => {
                    let b = data[i];
                    i += 1;
                    match b {
                        b']' => {
                            out(&data[start..i - 1]);
                            start = i;
                            self.held.clear();
                            self.held.push(b']');
                            self.state = State::Osc;
                        }
                        // The parser's escape state keeps on these.
                        0x00..=0x17 | 0x19 | 0x1b..=0x1f | 0x7f..=0xff => {}
                        _ => self.state = State::Ground,
                    }
                }
                State::Osc | State::Discard => {
                    let n = data[i..].iter().position(|&b| ends_osc(b)).unwrap_or(data.len() - i);
                    if self.state == State::Osc && self.held.len() + n > self.limit {
                        self.state = State::Discard;
                        // An OSC that long is rare; give its memory back.
                        self.held = Vec::new();
                    }
                    if self.state == State::Osc {
                        self.held.extend_from_slice(&data[i..i + n]);
                    }
                    i += n;
                    start = i;
                    let Some(&end) = data.get(i) else { break };
                    i += 1;
                    start = i;
                    if self.state == State::Osc {
                        out(&self.held);
                        out(&[end]);
                        self.held.clear();
                        self.state = if end == ESC { State::Escape } else { State::Ground };
                    } else {
                        // The parser saw the ESC but not the `]`: it is still in its escape state.
                        // ESC keeps it there (as ending the OSC would have), CAN or SUB ends it as
                        // they would have; after a BEL a CAN takes it back to ground, where the
                        // OSC would have left it, and is otherwise ignored.
                        match end {
                            ESC => self.state = State::Escape,
                            BEL => {
                                out(&[CAN]);
                                self.state = State::Ground;
                            }
                            _ => {
                                out(&[end]);
                                self.state = State::Ground;
                            }
                        }
                    }
                }
            }
        }
        if start < data.len() && matches!(self.state, State::Ground | State::Escape) {
            out(&data[start..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(f: &mut OscFilter, chunks: &[&[u8]]) -> Vec<u8> {
        let mut v = Vec::new();
        for c in chunks {
            f.filter(c, |p| v.extend_from_slice(p));
        }
        v
    }

    fn once(limit: usize, data: &[u8]) -> Vec<u8> {
        run(&mut OscFilter::new(limit), &[data])
    }

    #[test]
    fn short_oscs_and_everything_else_pass_unchanged() {
        for data in [
            &b"plain text\r\n"[..],
            b"\x1b]0;title\x07after",
            b"\x1b]2;title\x1b\\after",
            b"\x1b[1;31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
            b"\x1b\n]2;kept in escape\x07",
        ] {
            assert_eq!(once(64, data), data, "{}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn a_long_osc_is_dropped_whole_with_bel_or_st() {
        let title = "t".repeat(100);
        let bel = format!("a\x1b]2;{title}\x07b");
        assert_eq!(once(64, bel.as_bytes()), b"a\x1b\x18b");
        let st = format!("a\x1b]0;{title}\x1b\\b");
        // The parser saw one ESC already; it reads the ST's `\\` as the end of that escape.
        assert_eq!(once(64, st.as_bytes()), b"a\x1b\\b");
        let can = format!("a\x1b]0;{title}\x18b");
        assert_eq!(once(64, can.as_bytes()), b"a\x1b\x18b");
        // At the limit exactly, it is kept.
        let at = format!("\x1b]{}\x07", "x".repeat(63));
        assert_eq!(once(64, at.as_bytes()), at.as_bytes());
    }

    #[test]
    fn an_esc_inside_an_osc_ends_it_and_starts_what_follows() {
        // As in the parser: the ESC ends the OSC and `[2J` is a CSI after it.
        let short = b"\x1b]2;ab\x1b[2Jx";
        assert_eq!(once(64, short), short);
        let long = format!("\x1b]2;{}\x1b[2Jx", "t".repeat(100));
        assert_eq!(once(64, long.as_bytes()), b"\x1b[2Jx");
        // A new OSC right after a dropped one is judged on its own.
        let next = format!("\x1b]2;{}\x1b]2;ok\x07", "t".repeat(100));
        assert_eq!(once(64, next.as_bytes()), b"\x1b]2;ok\x07");
    }

    #[test]
    fn split_across_chunks_anywhere() {
        let data = format!("a\x1b]2;{}\x07b\x1b]0;short\x1b\\c", "t".repeat(100));
        let whole = once(64, data.as_bytes());
        assert_eq!(whole, b"a\x1b\x18b\x1b]0;short\x1b\\c");
        for at in 0..data.len() {
            let (x, y) = data.as_bytes().split_at(at);
            assert_eq!(run(&mut OscFilter::new(64), &[x, y]), whole, "split at {at}");
        }
        let bytes: Vec<&[u8]> = data.as_bytes().chunks(1).collect();
        assert_eq!(run(&mut OscFilter::new(64), &bytes), whole);
    }

    #[test]
    fn an_endless_osc_holds_at_most_its_limit() {
        let mut f = OscFilter::new(8192);
        let mut out = 0;
        f.filter(b"before\x1b]2;", |p| out += p.len());
        let chunk = vec![b'x'; 65536];
        for _ in 0..1024 {
            f.filter(&chunk, |p| out += p.len());
            assert!(f.held.capacity() <= 8192);
        }
        assert_eq!(out, b"before\x1b".len(), "nothing of the OSC passed");
        f.filter(b"\x07after", |p| out += p.len());
        assert_eq!(out, b"before\x1b\x18after".len());
    }

    proptest! {
        #[test]
        fn chunking_never_changes_what_passes(
            data in proptest::collection::vec(prop::sample::select(b"a]2;\x1b\x07\\\x18\n[".to_vec()), 0..200),
            cuts in proptest::collection::vec(0usize..200, 0..6),
        ) {
            let whole = once(8, &data);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.sort();
            let mut chunks = Vec::new();
            let mut from = 0;
            for c in cuts.into_iter().chain([data.len()]) {
                chunks.push(&data[from..c]);
                from = c;
            }
            prop_assert_eq!(run(&mut OscFilter::new(8), &chunks), whole);
        }
    }
}
