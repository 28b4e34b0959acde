//! Values that the JS layer has checked by the core's rules before it acts on them (a signal, a
//! duration, a manager's options), and the numeric arguments of the native methods.

use super::error::js_error;
// Any JS value the user gave (a signal, a manager's options): the core names a bad one as JS would.
use super::value::value_of;
use crate::core::error::{CoreError, CoreResult};
use crate::core::launch::{options, request};
use crate::core::tree::group;
use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;
use std::time::Duration;

/// A sequence number, byte count or duration given as a JS number: a non-negative integer.
pub(crate) fn seq_arg(name: &str, v: f64) -> CoreResult<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
        Ok(v as u64)
    } else {
        Err(CoreError::invalid_option(name, "must be a non-negative integer"))
    }
}

/// A signal as JS gave it (any value): checked by the core's one rule, with the value named in
/// the error.
pub(crate) fn signal_arg(env: &Env, v: Unknown) -> napi::Result<i32> {
    group::signal_of(&value_of(&v)?).map_err(|e| js_error(env, e))
}

/// Checks a signal (any JS value: a number or a name) by the core's rule without sending it;
/// returns its number. The faces call it before anything else, so a bad signal is refused even
/// for a process that has exited.
#[napi(ts_args_type = "signal: unknown")]
pub fn check_signal(env: &Env, signal: Unknown) -> napi::Result<i32> {
    signal_arg(env, signal)
}

/// The name of a signal number on this platform ('SIGKILL'), or null, for messages.
#[napi]
pub fn signal_name(signal: i32) -> Option<&'static str> {
    group::signal_name(signal)
}

/// A wait's limit in milliseconds, whole, for the native waits.
pub(crate) fn limit(ms: Option<f64>) -> CoreResult<Option<Duration>> {
    ms.map(|v| seq_arg("limit", v.max(0.0).floor()).map(Duration::from_millis)).transpose()
}

/// Checks `ProcessManager` options by the core's rules; returns the working directory, resolved.
#[napi]
pub fn manager_working_directory(env: &Env, options: Unknown<'_>) -> napi::Result<String> {
    request::manager(&value_of(&options)?, std::env::current_dir)
        .map(|p| p.display().to_string())
        .map_err(|e| js_error(env, e))
}

/// `path` made absolute against Node's working directory, or InvalidProcessCwdError naming
/// `option` when that directory is gone: the JS layer's paths resolve by the core's rule.
#[napi]
pub fn absolute_path(env: &Env, path: String, option: String) -> napi::Result<String> {
    request::from_node_cwd(&path, &option, std::env::current_dir)
        .map(|p| p.display().to_string())
        .map_err(|e| js_error(env, e))
}

/// A manager's resolved log options: where its processes' logs are written and how they rotate.
#[napi(object)]
pub struct NativeLogFiles {
    pub directory: String,
    pub max_bytes: f64,
    pub keep: u32,
}

/// Checks a manager's `logDirectory`, `logMaxBytes` and `logKeep` by the core's rules (creating
/// the directory if missing); returns them resolved, or null without `logDirectory`.
#[napi]
pub fn resolve_log_files(env: &Env, options: Unknown<'_>) -> napi::Result<Option<NativeLogFiles>> {
    let v = value_of(&options)?;
    request::manager(&v, std::env::current_dir)
        .and_then(|base| crate::core::output::disk::options(&v, &base))
        .map(|files| {
            files.map(|f| NativeLogFiles {
                directory: f.directory.display().to_string(),
                max_bytes: f.max_bytes as f64,
                keep: f.keep as u32,
            })
        })
        .map_err(|e| js_error(env, e))
}

/// How a manager contains its processes, from its `containment` option (`'auto'`, `'cgroup'`,
/// `'process-group'`): `'cgroup'` or `'process-group'`. `'cgroup'` when this Node process has no
/// cgroup to give is an InvalidProcessOptionError that says why.
#[napi]
pub fn resolve_containment(env: &Env, mode: Unknown<'_>) -> napi::Result<String> {
    let cgroups = crate::core::tree::cgroup::parent().map(|_| ());
    request::containment(&value_of(&mode)?, cgroups).map(|c| c.name().to_string()).map_err(|e| js_error(env, e))
}

/// Checks a duration in milliseconds by the core's rule (absent, or a non-negative finite
/// number); returns it, or `undefined` when absent.
#[napi]
pub fn check_duration(env: &Env, name: String, value: Unknown<'_>) -> napi::Result<Option<f64>> {
    options::duration(&name, &value_of(&value)?).map_err(|e| js_error(env, e))
}
