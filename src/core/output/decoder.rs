//! Incremental UTF-8 decoding of one output stream: a code point split across two pipe reads comes
//! out whole with the second read; invalid bytes become U+FFFD and never stop the stream.

use std::borrow::Cow;

#[derive(Default, Debug)]
pub struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Like `decode`, and tells whether the text is all ASCII (then it is also Latin-1). One pass:
    /// the ASCII check goes block by block, and only what follows the last all-ASCII block is
    /// validated as UTF-8.
    pub fn decode_ascii<'a>(&mut self, input: &'a [u8]) -> (Cow<'a, str>, bool) {
        const BLOCK: usize = 4096;
        if !self.pending.is_empty() {
            return (self.decode(input), false);
        }
        let mut at = 0;
        while at < input.len() {
            let end = (at + BLOCK).min(input.len());
            if !input[at..end].is_ascii() {
                break;
            }
            at = end;
        }
        if at == input.len() {
            // SAFETY: ASCII is valid UTF-8.
            return (Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(input) }), true);
        }
        match std::str::from_utf8(&input[at..]) {
            // SAFETY: an ASCII prefix (checked above) followed by valid UTF-8 that starts at a
            // character boundary (every ASCII byte ends one) is valid UTF-8.
            Ok(_) => (Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(input) }), false),
            Err(_) => (Cow::Owned(self.decode_owned(input)), false),
        }
    }

    /// Decodes `input`, keeping an incomplete trailing sequence for the next call.
    pub fn decode<'a>(&mut self, input: &'a [u8]) -> Cow<'a, str> {
        if self.pending.is_empty() {
            // Fast path: the whole chunk is valid, nothing to copy.
            if let Ok(s) = std::str::from_utf8(input) {
                return Cow::Borrowed(s);
            }
            return Cow::Owned(self.decode_owned(input));
        }
        let mut joined = std::mem::take(&mut self.pending);
        joined.extend_from_slice(input);
        Cow::Owned(self.decode_owned(&joined))
    }

    /// Flushes what is left at end of stream: an incomplete sequence becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            return String::new();
        }
        self.pending.clear();
        '\u{FFFD}'.to_string()
    }

    fn decode_owned(&mut self, mut bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len() + 3);
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    out.push_str(s);
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: from_utf8 told us this prefix is valid.
                    out.push_str(std::str::from_utf8(&bytes[..valid]).unwrap_or_default());
                    match e.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            bytes = &bytes[valid + bad..];
                        }
                        None => {
                            // Incomplete sequence at the end: wait for the rest.
                            self.pending.extend_from_slice(&bytes[valid..]);
                            return out;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_code_point_comes_out_whole() {
        let mut d = Utf8Decoder::new();
        assert_eq!(d.decode(&[0xF0, 0x9F]), "");
        assert_eq!(d.decode(&[0x99, 0x82]), "🙂");
        assert_eq!(d.finish(), "");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut d = Utf8Decoder::new();
        assert_eq!(d.decode(b"a\xFFb"), "a\u{FFFD}b");
        assert_eq!(d.decode(&[0xE2, 0x82]), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }

    #[test]
    fn decode_ascii_tells_ascii_and_decodes_as_decode() {
        let mut long = "a".repeat(10_000);
        long.push('é');
        long.push_str(&"b".repeat(5_000));
        let mut bad = long.clone().into_bytes();
        bad.push(0xFF);
        bad.extend_from_slice(b"tail");
        let cut = [b"x".repeat(9_000), vec![0xF0, 0x9F]].concat();
        for (input, ascii) in [
            (b"".to_vec(), true),
            ("x".repeat(9_000).into_bytes(), true),
            (long.into_bytes(), false),
            (bad, false),
            (cut, false),
        ] {
            let (mut a, mut b) = (Utf8Decoder::new(), Utf8Decoder::new());
            let (text, is_ascii) = a.decode_ascii(&input);
            assert_eq!(text, b.decode(&input));
            assert_eq!(is_ascii, ascii);
            // The same state after: an incomplete character waits in both.
            assert_eq!(a.decode(&[0x99, 0x82]), b.decode(&[0x99, 0x82]));
        }
        // With an incomplete character pending, the next input is decoded with it.
        let mut d = Utf8Decoder::new();
        assert_eq!(d.decode_ascii(&[0xC3]), (Cow::Borrowed(""), false));
        assert_eq!(d.decode_ascii(b"ok"), (Cow::Owned::<str>("\u{FFFD}ok".into()), false));
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        let text = "héllo wörld 🙂 ✓ 日本";
        let mut d = Utf8Decoder::new();
        let mut out = String::new();
        for b in text.as_bytes() {
            out.push_str(&d.decode(std::slice::from_ref(b)));
        }
        out.push_str(&d.finish());
        assert_eq!(out, text);
    }
}
