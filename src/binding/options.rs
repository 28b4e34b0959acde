//! JS spawn options → core `SpawnSpec`. The JS layer has already applied each face's defaults and
//! range checks; this only refuses what cannot be represented.

use crate::core::command::{Limits, SpawnSpec, StdinMode};
use crate::core::error::{CoreError, CoreResult};
use napi_derive::napi;

/// Resource limits set in the child before exec (`setrlimit`), so they hold from its first instruction.
#[napi(object)]
#[derive(Default, Clone)]
pub struct NativeLimits {
    /// RLIMIT_AS, bytes of address space.
    pub address_space: Option<f64>,
    /// RLIMIT_CPU, seconds of CPU time.
    pub cpu_seconds: Option<f64>,
    /// RLIMIT_NOFILE, open descriptors.
    pub open_files: Option<f64>,
    /// RLIMIT_FSIZE, bytes per written file.
    pub file_size: Option<f64>,
    /// RLIMIT_NPROC, processes of the user.
    pub processes: Option<f64>,
}

/// Everything the core needs to start one process.
#[napi(object)]
pub struct NativeSpawnOptions {
    pub argv: Vec<String>,
    /// `[name, value]` pairs: the complete environment of the child.
    pub env: Vec<Vec<String>>,
    pub cwd: String,
    /// `true`: stdin is a pipe; `false`: /dev/null.
    pub stdin_pipe: bool,
    pub timeout_ms: Option<f64>,
    pub grace_ms: Option<f64>,
    /// Bytes of text kept per stream for `stdout`/`stderr`; absent = keep all.
    pub retain_bytes: Option<f64>,
    pub log_max_bytes: Option<f64>,
    pub log_max_events: Option<f64>,
    pub limits: Option<NativeLimits>,
    /// The JS realm that owns the process (see `registerRealm`).
    pub owner: u32,
}

fn count(name: &str, v: Option<f64>) -> CoreResult<Option<u64>> {
    match v {
        None => Ok(None),
        Some(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9.007_199_254_740_991e15 => Ok(Some(x as u64)),
        Some(_) => Err(CoreError::invalid_option(name, "must be a non-negative integer")),
    }
}

pub(crate) fn to_spec(o: NativeSpawnOptions) -> CoreResult<SpawnSpec> {
    let mut spec = SpawnSpec::new(o.argv, o.cwd);
    let mut env = Vec::with_capacity(o.env.len());
    for pair in o.env {
        let [k, v]: [String; 2] =
            pair.try_into().map_err(|_| CoreError::InvalidEnv("entries must be [name, value] pairs".into()))?;
        env.push((k, v));
    }
    spec.env = env;
    spec.stdin = if o.stdin_pipe { StdinMode::Pipe } else { StdinMode::Ignore };
    spec.timeout_ms = count("timeout", o.timeout_ms)?;
    if let Some(g) = count("grace", o.grace_ms)? {
        spec.grace_ms = g;
    }
    spec.retain_bytes = count("maxRetainedBytes", o.retain_bytes)?.map(|v| v.min(usize::MAX as u64) as usize);
    if let Some(b) = count("logMaxBytes", o.log_max_bytes)? {
        spec.log_max_bytes = b as usize;
    }
    if let Some(n) = count("logMaxEvents", o.log_max_events)? {
        spec.log_max_events = n.max(1) as usize;
    }
    if let Some(l) = o.limits {
        spec.limits = Limits {
            address_space: count("limits.addressSpace", l.address_space)?,
            cpu_seconds: count("limits.cpuSeconds", l.cpu_seconds)?,
            open_files: count("limits.openFiles", l.open_files)?,
            file_size: count("limits.fileSize", l.file_size)?,
            processes: count("limits.processes", l.processes)?,
        };
    }
    Ok(spec)
}
