//! Decoded text as the output hands it to the listeners, sharing the log's bytes.

use crate::core::output::decoder::Utf8Decoder;
use crate::core::output::log::Stream;
use bytes::Bytes;

/// Decoded output for the listeners, one stream at a time, in order.
pub struct TextChunk {
    pub stream: Stream,
    pub text: Text,
}

/// Text as UTF-8 bytes, valid by construction. Output that was valid as read shares the log's
/// bytes: a flood of text then reaches the binding without a copy (two copies and two fresh
/// allocations per read were most of what a fast listener cost the JS thread).
#[derive(Clone)]
pub struct Text {
    bytes: Bytes,
    /// Known to be ASCII: then it is also Latin-1, which V8 copies without decoding.
    ascii: bool,
}

impl Text {
    /// `b` must be valid UTF-8 (checked by the caller's decoder).
    pub(super) fn shared(b: &Bytes) -> Text {
        debug_assert!(std::str::from_utf8(b).is_ok());
        Text { bytes: b.clone(), ascii: false }
    }

    /// `b` must be ASCII (checked by the caller).
    pub(super) fn ascii(b: &Bytes) -> Text {
        debug_assert!(b.is_ascii());
        Text { bytes: b.clone(), ascii: true }
    }

    /// `data` decoded by `decoder`, which keeps an incomplete trailing character for its next
    /// call. Valid as read, the text shares `data`'s bytes; ASCII, the common case of logs, is
    /// known from the same pass that validates, and spares V8 its own decoding pass (a Latin-1
    /// string is a plain copy).
    pub fn decode(decoder: &mut Utf8Decoder, data: &Bytes) -> Text {
        match decoder.decode_ascii(data) {
            (std::borrow::Cow::Borrowed(_), true) => Text::ascii(data),
            (std::borrow::Cow::Borrowed(_), false) => Text::shared(data),
            (std::borrow::Cow::Owned(s), _) => Text::from(s),
        }
    }

    pub fn as_str(&self) -> &str {
        // SAFETY: a `Text` is only made from valid UTF-8 (`shared` after validation, `ascii`
        // after its check, or a String) and only sliced at character boundaries (`slice`).
        unsafe { std::str::from_utf8_unchecked(&self.bytes) }
    }

    /// Whether every byte is known to be ASCII (false when unknown).
    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The text between two character boundaries, sharing the bytes.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Text {
        let s = self.as_str();
        assert!(s.is_char_boundary(range.start) && s.is_char_boundary(range.end), "slice inside a character");
        Text { bytes: self.bytes.slice(range), ascii: self.ascii }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { bytes: Bytes::from(s), ascii: false }
    }
}
