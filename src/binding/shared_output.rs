//! A process's output in shared memory, across a persistent sandbox's socket (see
//! `core::output::shared` and `core::persistent::fdpass`): the supervisor serves the rings'
//! descriptors and offers one per process and client; a client takes it, maps it read-only and
//! reads the output from the mapping. Wherever this is unavailable (no memfd seals, the socket
//! gone, any failure), the output goes on crossing the sandbox's socket as bytes.

use crate::binding::checks::seq_arg;
use crate::binding::error::js_error;
use crate::binding::output_decoder::NativeOutputDecoder;
use crate::binding::process::{to_event, NativeChunk, NativeLogEvent};
use crate::core::output::shared_read::{Mapping, RingBroken, RingReader};
use crate::core::persistent::fdpass::{self, FdServer, Token};
use napi::Env;
use napi_derive::napi;
use std::sync::{Arc, Mutex, OnceLock};

static SERVER: OnceLock<Arc<FdServer>> = OnceLock::new();

fn hex(token: &Token) -> String {
    token.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_token(s: &str) -> napi::Result<Token> {
    let bad = || {
        napi::Error::from_reason(format!("a shared output token is 32 hex digits, not {:?}", s.get(..40).unwrap_or(s)))
    };
    if s.len() != 32 || !s.is_ascii() {
        return Err(bad());
    }
    let mut t = [0u8; 16];
    for (i, b) in t.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(t)
}

/// Serves the rings' descriptors at `path` (beside the sandbox's socket), for the life of this
/// process; a persistent sandbox's supervisor calls it once. False where shared output cannot
/// work (not Linux): its clients are then sent the output as bytes.
#[napi]
pub fn start_shared_output_server(path: String) -> napi::Result<bool> {
    if !cfg!(any(target_os = "linux", target_os = "android")) {
        return Ok(false);
    }
    if SERVER.get().is_some() {
        return Err(napi::Error::from_reason("the shared output server is already started"));
    }
    let server = FdServer::start(std::path::Path::new(&path))
        .map_err(|e| napi::Error::from_reason(format!("cannot serve shared output at {path}: {e}")))?;
    let _ = SERVER.set(server);
    Ok(true)
}

/// What a supervisor offers a client for one process's output.
#[napi(object, object_from_js = false)]
pub struct NativeShareOffer {
    /// Takes the ring's descriptor once, from the shared output server.
    pub token: String,
    /// The sequence number of the ring's first record: output before it is sent as bytes.
    pub first_seq: f64,
}

/// Offers `process`'s output in shared memory (made at the first offer); null when there is no
/// shared output server or no ring can be made, and the output goes as bytes.
pub(crate) fn offer(process: &crate::core::supervise::process::Process) -> Option<NativeShareOffer> {
    let server = SERVER.get()?;
    let (fd, first_seq) = process.output.share().ok()?;
    let token = server.offer(fd).ok()?;
    Some(NativeShareOffer { token: hex(&token), first_seq: first_seq as f64 })
}

/// A process's output ring, mapped read-only in this Node process.
#[napi]
pub struct NativeSharedOutput {
    mapping: Mutex<Option<Mapping>>,
}

/// What a read of the ring as text found.
#[napi(object, object_from_js = false)]
pub struct NativeSharedText {
    /// The text of the runs read, in order.
    pub chunks: Vec<NativeChunk>,
    /// How many bytes of output they were.
    pub bytes: f64,
    /// The position to read from next.
    pub pos: f64,
    /// Output this reader had not read was overwritten: the read goes on from the oldest kept.
    pub truncated: bool,
}

/// What a read of the ring as events found.
#[napi(object, object_from_js = false)]
pub struct NativeSharedEvents {
    /// The events read, as a log read gives them.
    pub events: Vec<NativeLogEvent>,
    /// How many bytes they held.
    pub bytes: f64,
    /// The position to read from next.
    pub pos: f64,
    /// Events this reader had not read were overwritten: the read went on from the oldest kept.
    pub truncated: bool,
}

fn broken(e: RingBroken) -> napi::Error {
    napi::Error::from_reason(format!("the shared output breaks its rules: {}", e.0))
}

impl NativeSharedOutput {
    fn with<T>(&self, f: impl FnOnce(&RingReader) -> Result<T, RingBroken>) -> napi::Result<T> {
        let m = self.mapping.lock().unwrap_or_else(|e| e.into_inner());
        let m = m.as_ref().ok_or_else(|| napi::Error::from_reason("the shared output is closed"))?;
        // The mapping stays while the lock is held (`close` takes it).
        let reader = m.reader().map_err(broken)?;
        f(&reader).map_err(broken)
    }
}

/// A position or count JS gave, by the binding's one rule, as a typed error.
fn arg(env: &Env, name: &str, v: f64) -> napi::Result<u64> {
    seq_arg(name, v).map_err(|e| js_error(env, e))
}

#[napi]
impl NativeSharedOutput {
    /// The position of the first record after sequence number `after` still in the ring.
    #[napi]
    pub fn position_after(&self, env: &Env, after: f64) -> napi::Result<f64> {
        let after = arg(env, "after", after)?;
        self.with(|r| r.position_after(after)).map(|p| p as f64)
    }

    /// Output from position `pos`, of sequence numbers up to `until`, about `maxBytes` of it,
    /// copied once from the mapping and decoded by `decoder` (the process's, which decoded what
    /// came before as bytes): the text of the runs, in pieces of at most 64 KiB, as a local
    /// process's listeners get it.
    #[napi]
    pub fn read_text(
        &self,
        env: &Env,
        pos: f64,
        until: f64,
        max_bytes: f64,
        decoder: &NativeOutputDecoder,
    ) -> napi::Result<NativeSharedText> {
        let (pos, until) = (arg(env, "pos", pos)?, arg(env, "until", until)?);
        let max = arg(env, "maxBytes", max_bytes)? as usize;
        let (data, plan) = self.with(|r| r.read_into(pos, until, max))?;
        let bytes = data.len() as f64;
        Ok(NativeSharedText {
            chunks: decoder.decode_runs(bytes::Bytes::from(data), &plan.runs),
            bytes,
            pos: plan.pos as f64,
            truncated: plan.truncated,
        })
    }

    /// Events from position `pos`, of sequence numbers up to `until`, about `maxBytes` of
    /// output, as process `processId`'s log holds them (its cursors name it): what a `logs()`
    /// stream reads from the ring, each event's bytes copied once from the mapping.
    #[napi]
    pub fn read_events(
        &self,
        env: &Env,
        pos: f64,
        until: f64,
        max_bytes: f64,
        process_id: String,
    ) -> napi::Result<NativeSharedEvents> {
        let (pos, until) = (arg(env, "pos", pos)?, arg(env, "until", until)?);
        let max = arg(env, "maxBytes", max_bytes)? as usize;
        let read = self.with(|r| r.read_events(pos, until, max))?;
        Ok(NativeSharedEvents {
            events: read.events.into_iter().map(|e| to_event(&process_id, e)).collect(),
            bytes: read.bytes as f64,
            pos: read.pos as f64,
            truncated: read.truncated,
        })
    }

    /// Unmaps the ring; reads after this throw.
    #[napi]
    pub fn close(&self) {
        self.mapping.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// Takes the descriptor and maps it: a connection to a socket of this user's and one message
/// each way, well under a millisecond, so done on the JS thread. (As an async task its result
/// sometimes waited for the JS thread until a flood was over, and with it the ring it offered.)
fn open(path: &std::path::Path, token: &Token) -> napi::Result<Mapping> {
    let fail = |e: std::io::Error| napi::Error::from_reason(format!("cannot take the shared output: {e}"));
    Mapping::of(fdpass::take_fd(path, token).map_err(fail)?).map_err(fail)
}

/// Takes the ring offered under `token` from the shared output server at `path`, and maps it
/// read-only (on this thread, within 250 ms). Throws when anything fails: the output then goes on
/// as bytes.
#[napi]
pub fn open_shared_output(path: String, token: String) -> napi::Result<NativeSharedOutput> {
    let mapping = open(std::path::Path::new(&path), &parse_token(&token)?)?;
    Ok(NativeSharedOutput { mapping: Mutex::new(Some(mapping)) })
}
