//! A manager's log options (`logDirectory`, `logMaxBytes`, `logKeep`) as the disk log takes
//! them: checked, resolved against the working directory, the directory made and tried.

use crate::core::error::{CoreError, CoreResult};
use crate::core::value::Value;
use std::fs::File;
use std::path::{Path, PathBuf};

pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
pub const DEFAULT_KEEP: usize = 5;
/// Files smaller than this would rotate at nearly every chunk of a flood.
const MIN_FILE_BYTES: u64 = 4096;
const MAX_KEEP: usize = 10_000;

/// Where and how a manager's processes log to disk (the manager's `logDirectory`, `logMaxBytes`
/// and `logKeep`), checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFiles {
    pub directory: PathBuf,
    pub max_bytes: u64,
    pub keep: usize,
}

/// The manager's log options from its options object, resolved against `base` (its working
/// directory): `None` without `logDirectory`. The directory is created if missing and must
/// take a new file, so that a bad one fails here rather than after processes ran.
pub fn options(v: &Value, base: &Path) -> CoreResult<Option<LogFiles>> {
    let dir = match v.get("logDirectory") {
        Value::Undefined => {
            for name in ["logMaxBytes", "logKeep"] {
                if !v.get(name).is_absent() {
                    return Err(CoreError::invalid_option(name, format!("{name} needs logDirectory")));
                }
            }
            return Ok(None);
        }
        Value::String(s) if !s.is_empty() && !s.contains('\0') => base.join(s),
        other => {
            return Err(CoreError::invalid_option(
                "logDirectory",
                format!("logDirectory must be a non-empty path, got {}", other.describe()),
            ))
        }
    };
    let max_bytes =
        whole("logMaxBytes", v.get("logMaxBytes"), MIN_FILE_BYTES, u64::MAX as f64)?.unwrap_or(DEFAULT_MAX_FILE_BYTES);
    let keep = whole("logKeep", v.get("logKeep"), 1, MAX_KEEP as f64)?.map(|k| k as usize).unwrap_or(DEFAULT_KEEP);
    let refuse = |why: String| CoreError::invalid_option("logDirectory", format!("{}: {why}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(|e| refuse(io_reason(&e)))?;
    if !std::fs::metadata(&dir).map_err(|e| refuse(io_reason(&e)))?.is_dir() {
        return Err(refuse("not a directory".into()));
    }
    // Asked by trying: permission bits say nothing for root or a read-only mount.
    let probe = dir.join(format!(".procvisor-probe-{}", std::process::id()));
    File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .map_err(|e| refuse(format!("cannot create a file in it ({})", io_reason(&e))))?;
    let _ = std::fs::remove_file(&probe);
    Ok(Some(LogFiles { directory: dir, max_bytes, keep }))
}

/// The log options a launch request carries (`logFiles`: what `options` resolved, as the
/// manager keeps them), read without touching the disk.
pub fn resolved(v: &Value) -> CoreResult<Option<LogFiles>> {
    let bad = || CoreError::invalid_option("logFiles", "must be the manager's resolved log options");
    match v {
        Value::Undefined | Value::Null => Ok(None),
        Value::Object(_) => {
            let Value::String(dir) = v.get("directory") else { return Err(bad()) };
            let max_bytes =
                whole("logMaxBytes", v.get("maxBytes"), MIN_FILE_BYTES, u64::MAX as f64)?.ok_or_else(bad)?;
            let keep = whole("logKeep", v.get("keep"), 1, MAX_KEEP as f64)?.ok_or_else(bad)?;
            Ok(Some(LogFiles { directory: PathBuf::from(dir), max_bytes, keep: keep as usize }))
        }
        _ => Err(bad()),
    }
}

fn whole(name: &str, v: &Value, min: u64, max: f64) -> CoreResult<Option<u64>> {
    match v {
        Value::Undefined => Ok(None),
        Value::Number(n) if n.fract() == 0.0 && *n >= min as f64 && *n <= max => Ok(Some(*n as u64)),
        other => Err(CoreError::invalid_option(
            name,
            format!("{name} must be an integer from {min} to {max}, got {}", other.describe()),
        )),
    }
}

fn io_reason(e: &std::io::Error) -> String {
    e.raw_os_error().map(crate::core::error::errno_name).unwrap_or_else(|| e.to_string())
}
