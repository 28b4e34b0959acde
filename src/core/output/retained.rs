//! The Mastra view of a stream: the newest `limit` UTF-8 bytes of decoded text, never splitting a
//! code point (a code point larger than the limit is dropped whole), with a count of dropped bytes.
//! A ring (`VecDeque`) so that keeping the tail of a gigabyte costs O(bytes), not O(bytes × limit).

use std::collections::VecDeque;

#[derive(Debug)]
pub struct RetainedText {
    limit: Option<usize>,
    buf: VecDeque<u8>,
    dropped: u64,
}

impl RetainedText {
    /// `None` keeps everything (Mastra's `Infinity`).
    pub fn new(limit: Option<usize>) -> Self {
        Self { limit, buf: VecDeque::new(), dropped: 0 }
    }

    pub fn push(&mut self, text: &str) {
        let Some(limit) = self.limit else {
            self.buf.extend(text.as_bytes());
            return;
        };
        let bytes = text.as_bytes();
        if bytes.len() >= limit {
            // Only the tail of this chunk can survive; skip the copy of the rest.
            self.dropped += self.buf.len() as u64;
            self.buf.clear();
            let mut start = bytes.len() - limit;
            while start < bytes.len() && !text.is_char_boundary(start) {
                start += 1;
            }
            self.dropped += start as u64;
            self.buf.extend(&bytes[start..]);
            return;
        }
        self.buf.extend(bytes);
        if self.buf.len() > limit {
            let mut cut = self.buf.len() - limit;
            while cut < self.buf.len() && (self.buf[cut] & 0xC0) == 0x80 {
                cut += 1;
            }
            self.buf.drain(..cut);
            self.dropped += cut as u64;
        }
    }

    /// Counts `n` bytes as dropped without decoding them: a stream that keeps no text skips the
    /// decoding, and then its raw bytes are what was dropped.
    pub fn drop_bytes(&mut self, n: usize) {
        self.dropped += n as u64;
    }

    pub fn text(&self) -> String {
        let (a, b) = self.buf.as_slices();
        let mut v = Vec::with_capacity(self.buf.len());
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        // The ring only ever holds whole code points of valid text.
        String::from_utf8(v).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    pub fn dropped_bytes(&self) -> u64 {
        self.dropped
    }

    pub fn truncated(&self) -> bool {
        self.dropped > 0
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_newest_bytes_without_splitting() {
        let mut r = RetainedText::new(Some(5));
        r.push("ab");
        r.push("c🙂d"); // a b c F0 9F 99 82 d = 8 bytes
        assert_eq!(r.text(), "🙂d");
        assert_eq!(r.dropped_bytes(), 3);
        assert!(r.truncated());
    }

    #[test]
    fn code_point_larger_than_limit_is_dropped_whole() {
        let mut r = RetainedText::new(Some(3));
        r.push("🙂");
        assert_eq!(r.text(), "");
        assert_eq!(r.dropped_bytes(), 4);
    }

    #[test]
    fn zero_keeps_nothing_but_counts() {
        let mut r = RetainedText::new(Some(0));
        r.push("hello");
        assert_eq!(r.text(), "");
        assert_eq!(r.dropped_bytes(), 5);
    }

    #[test]
    fn unlimited_keeps_all() {
        let mut r = RetainedText::new(None);
        for _ in 0..1000 {
            r.push("xyz");
        }
        assert_eq!(r.len(), 3000);
        assert!(!r.truncated());
    }

    proptest! {
        #[test]
        fn retention_never_splits_and_counts_add_up(chunks in proptest::collection::vec(".{0,12}", 0..40), limit in 0usize..40) {
            let mut r = RetainedText::new(Some(limit));
            let mut all = String::new();
            for c in &chunks { r.push(c); all.push_str(c); }
            let kept = r.text();
            prop_assert!(kept.len() <= limit);
            prop_assert!(all.ends_with(&kept));
            prop_assert_eq!(kept.len() as u64 + r.dropped_bytes(), all.len() as u64);
            // Maximal: adding the previous code point would exceed the limit.
            let start = all.len() - kept.len();
            if start > 0 {
                let prev = all[..start].chars().next_back().unwrap();
                prop_assert!(kept.len() + prev.len_utf8() > limit);
            }
        }
    }
}
