//! A process's output in shared memory, across a persistent sandbox's socket (see
//! `core::output::shared` and `core::persistent::fdpass`): the supervisor serves the rings'
//! descriptors and offers one per process and client; a client takes it, maps it read-only and
//! reads the output from the mapping. Wherever this is unavailable (no memfd seals, the socket
//! gone, any failure), the output goes on crossing the sandbox's socket as bytes.

use crate::binding::checks::seq_arg;
use crate::binding::error::js_error;
use crate::binding::output_decoder::NativeOutputDecoder;
use crate::binding::process::NativeChunk;
use crate::core::output::shared_read::{Mapping, RingBroken, RingReader};
use crate::core::persistent::fdpass::{self, FdServer, Token};
use napi::bindgen_prelude::{ToNapiValue, TypeName, ValueType};
use napi::{sys, Env};
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

/// A Buffer made and filled here (see `NativeSharedOutput::read`), handed to JS as it is.
pub struct FilledBuffer(sys::napi_value);

impl TypeName for FilledBuffer {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for FilledBuffer {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// A Buffer of `len` bytes made by napi for a read to copy into.
struct NewBuffer {
    value: sys::napi_value,
    data: *mut u8,
    len: usize,
}

impl NewBuffer {
    fn make(env: &Env, len: usize) -> Result<NewBuffer, RingBroken> {
        let mut value = std::ptr::null_mut();
        let mut data: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: napi allocates `len` bytes at `data`; the read writes all of them.
        let status = unsafe { sys::napi_create_buffer(env.raw(), len, &mut data, &mut value) };
        if status != sys::Status::napi_ok {
            return Err(RingBroken(format!("no Buffer of {len} bytes could be made")));
        }
        Ok(NewBuffer { value, data: data.cast(), len })
    }
}

impl AsMut<[u8]> for NewBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: the Buffer's memory, `len` bytes, alive while its value is (this call's scope).
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

/// What a read of the ring found.
#[napi(object, object_from_js = false)]
pub struct NativeSharedRead {
    /// The bytes of every run, one after the other.
    #[napi(ts_type = "Buffer")]
    pub data: FilledBuffer,
    /// The runs, as pairs: the stream (0 = stdout, 1 = stderr), then its number of bytes.
    pub runs: Vec<u32>,
    /// The position to read from next.
    pub pos: f64,
    /// Output this reader had not read was overwritten: the read goes on from the oldest kept.
    pub truncated: bool,
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
    /// copied once, from the mapping straight into the Buffer JS gets.
    #[napi]
    pub fn read(&self, env: &Env, pos: f64, until: f64, max_bytes: f64) -> napi::Result<NativeSharedRead> {
        let (pos, until) = (arg(env, "pos", pos)?, arg(env, "until", until)?);
        let max = arg(env, "maxBytes", max_bytes)? as usize;
        let (data, plan) = self.with(|r| r.read_into(pos, until, max, |n| NewBuffer::make(env, n)))?;
        Ok(NativeSharedRead {
            data: FilledBuffer(data.value),
            runs: plan.runs.iter().flat_map(|&(stream, len)| [stream, len as u32]).collect(),
            pos: plan.pos as f64,
            truncated: plan.truncated,
        })
    }

    /// As `read`, decoded by `decoder` (the process's, which decoded what came before as bytes):
    /// the text of the runs, in pieces of at most 64 KiB, as a local process's listeners get it.
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
        let (data, plan) = self.with(|r| r.read_into(pos, until, max, |n| Ok(vec![0u8; n])))?;
        let bytes = data.len() as f64;
        Ok(NativeSharedText {
            chunks: decoder.decode_runs(bytes::Bytes::from(data), &plan.runs),
            bytes,
            pos: plan.pos as f64,
            truncated: plan.truncated,
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
