//! The text of a process's output on the client's side of a persistent sandbox, decoded as a
//! local process's is (`core::output::text`): from the bytes its supervisor sends, and from the
//! ring it maps (`NativeSharedOutput.readText`), with one decoder per stream across both, so that
//! a character split where one ends and the other begins comes out whole.

use crate::binding::process::{chunks_to_js, NativeChunk};
use crate::core::output::decoder::Utf8Decoder;
use crate::core::output::log::Stream;
use crate::core::output::text::{Text, TextChunk};
use bytes::Bytes;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use std::sync::Mutex;

/// The UTF-8 decoders of one process's stdout and stderr.
#[napi]
pub struct NativeOutputDecoder {
    decoders: Mutex<[Utf8Decoder; 2]>,
}

impl NativeOutputDecoder {
    /// Decodes each run (`stream`, `len`) of `data` in turn, sharing `data`'s bytes.
    pub(crate) fn decode_runs(&self, data: Bytes, runs: &[(u32, usize)]) -> Vec<NativeChunk> {
        let mut d = self.decoders.lock().unwrap_or_else(|e| e.into_inner());
        let mut chunks = Vec::with_capacity(runs.len());
        let mut at = 0;
        for &(stream, len) in runs {
            let stream = if stream == 0 { Stream::Stdout } else { Stream::Stderr };
            let text = Text::decode(&mut d[stream.index()], &data.slice(at..at + len));
            at += len;
            if !text.as_str().is_empty() {
                chunks.push(TextChunk { stream, text });
            }
        }
        chunks_to_js(chunks)
    }
}

#[napi]
impl NativeOutputDecoder {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NativeOutputDecoder { decoders: Mutex::new([Utf8Decoder::new(), Utf8Decoder::new()]) }
    }

    /// The text of `data`, bytes of `stream` (0 = stdout, 1 = stderr) that follow those decoded
    /// before, in pieces of at most 64 KiB; an incomplete character at the end waits for the next.
    #[napi]
    pub fn write(&self, stream: u32, data: Buffer) -> napi::Result<Vec<NativeChunk>> {
        if stream > 1 {
            return Err(napi::Error::from_reason(format!("a stream is 0 (stdout) or 1 (stderr), not {stream}")));
        }
        let len = data.len();
        Ok(self.decode_runs(Bytes::copy_from_slice(&data), &[(stream, len)]))
    }

    /// The end of both streams: an incomplete character left is U+FFFD, as in a local process's
    /// output.
    #[napi]
    pub fn end(&self) -> Vec<NativeChunk> {
        let mut d = self.decoders.lock().unwrap_or_else(|e| e.into_inner());
        let mut chunks = Vec::new();
        for stream in [Stream::Stdout, Stream::Stderr] {
            let rest = d[stream.index()].finish();
            if !rest.is_empty() {
                chunks.push(TextChunk { stream, text: Text::from(rest) });
            }
        }
        chunks_to_js(chunks)
    }
}
