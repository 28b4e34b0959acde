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

    /// No incomplete character is waiting for the next input.
    pub fn is_clear(&self) -> bool {
        self.pending.is_empty()
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
