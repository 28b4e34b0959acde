//! Readiness probes of a port, for `waitForPort`.

use super::checks::seq_arg;
use super::error::invalid;
use super::settle::promise;
use crate::core::supervise::readiness::{probe_once, Probe, ProbeResult};
use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use std::time::Duration;

/// One readiness probe attempt.
#[napi(object)]
pub struct NativeProbe {
    pub ready: bool,
    pub reason: Option<String>,
}

/// One readiness probe of `127.0.0.1:port` / `[::1]:port`: TCP connect, or an HTTP GET whose
/// status must be within `[min, max]`.
#[napi(ts_return_type = "Promise<NativeProbe>")]
pub fn probe_port<'env>(
    env: &'env Env,
    port: u32,
    http_path: Option<String>,
    min: Option<u32>,
    max: Option<u32>,
    limit_ms: f64,
) -> napi::Result<PromiseRaw<'env, NativeProbe>> {
    if port == 0 || port > 65535 {
        return Err(invalid(env, "port", "must be an integer from 1 to 65535"));
    }
    let probe = match http_path {
        None => Probe::Tcp,
        Some(path) => Probe::Http { path, min: min.unwrap_or(200) as u16, max: max.unwrap_or(399) as u16 },
    };
    let limit = seq_arg("limit", limit_ms.max(1.0).floor()).map(Duration::from_millis);
    promise(env, async move { Ok(probe_once(port as u16, &probe, limit?).await) }, |r| match r {
        ProbeResult::Ready => NativeProbe { ready: true, reason: None },
        ProbeResult::NotReady(r) => NativeProbe { ready: false, reason: Some(r) },
    })
}
