//! The rule for each value of a launch's options, read as JS gave it: the command's argv, the
//! environment layers, the working directory, durations, retention, the terminal and limits.
//! `request` reads a whole launch with them.

use crate::core::error::{CoreError, CoreResult};
use crate::core::launch::command::{Limits, Pty};
use crate::core::value::Value;
use std::path::{Component, Path, PathBuf};

/// Mastra's default retention per stream.
const DEFAULT_RETAINED: usize = 1024 * 1024;
/// Number.MAX_SAFE_INTEGER: above it a JS number is no longer exact.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A non-empty argv of strings whose first entry is non-empty.
pub(super) fn argv(name: &str, v: &Value) -> CoreResult<Vec<String>> {
    let Value::Array(items) = v else {
        return Err(CoreError::InvalidCommand(format!(
            "{name} must be an argv array of strings, got {}",
            v.describe()
        )));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) if i > 0 || !s.is_empty() => out.push(s.clone()),
            Value::String(_) => return Err(CoreError::InvalidCommand(format!("{name}[0] must be a non-empty string"))),
            other => {
                return Err(CoreError::InvalidCommand(format!(
                    "{name}[{i}] must be a string, got {}",
                    other.describe()
                )))
            }
        }
    }
    if out.is_empty() {
        return Err(CoreError::InvalidCommand(format!("{name}[0] must be a non-empty string")));
    }
    Ok(out)
}

/// An environment object: names to strings, `undefined` dropping the name.
pub fn env_object(v: &Value) -> CoreResult<()> {
    match v {
        Value::Undefined | Value::Null | Value::Object(_) => Ok(()),
        other => Err(CoreError::InvalidEnv(format!("env must be an object of strings, got {}", other.describe()))),
    }
}

/// Merges environment layers: later layers win, `undefined` drops a name.
pub(super) fn env(layers: &[&Value]) -> CoreResult<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for layer in layers {
        env_object(layer)?;
        let Value::Object(props) = layer else { continue };
        for (k, v) in props {
            out.retain(|(name, _)| name != k);
            match v {
                Value::Undefined => {}
                Value::String(s) => out.push((k.clone(), s.clone())),
                other => {
                    return Err(CoreError::InvalidEnv(format!(
                        "the value of {k} must be a string, got {}",
                        other.describe()
                    )))
                }
            }
        }
    }
    Ok(out)
}

/// The working directory: `cwd` resolved against `base`, as `path.resolve` would.
pub(super) fn cwd(base: &Path, v: &Value) -> CoreResult<PathBuf> {
    match v {
        Value::Undefined | Value::Null => Ok(base.to_path_buf()),
        Value::String(s) => Ok(resolve(base, s)),
        other => Err(CoreError::InvalidCwd { path: other.describe(), reason: "cwd must be a string".into() }),
    }
}

/// `path.resolve(base, p)`: absolute, with `.` and `..` taken out lexically.
pub fn resolve(base: &Path, p: &str) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in base.join(p).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            _ => {}
        }
    }
    out
}

/// A duration in milliseconds: absent, or a non-negative finite number.
pub fn duration(name: &str, v: &Value) -> CoreResult<Option<f64>> {
    match v {
        Value::Undefined | Value::Null => Ok(None),
        Value::Number(n) if n.is_finite() && *n >= 0.0 => Ok(Some(*n)),
        other => Err(CoreError::invalid_option(
            name,
            format!("{name} must be a non-negative finite number of milliseconds, got {}", other.describe()),
        )),
    }
}

/// Whole milliseconds: a fraction rounds up (1.5 is not refused as "not an integer"), and a value
/// past Number.MAX_SAFE_INTEGER (about 285,000 years) cannot expire in practice, so it is capped.
pub(super) fn whole_ms(ms: f64) -> u64 {
    ms.ceil().min(MAX_SAFE) as u64
}

/// Mastra's `maxRetainedBytes`: a non-negative integer or Infinity (None: keep all).
pub(super) fn retained(v: &Value) -> CoreResult<Option<usize>> {
    match v {
        Value::Undefined => Ok(Some(DEFAULT_RETAINED)),
        Value::Number(n) if *n == f64::INFINITY || (n.fract() == 0.0 && *n > MAX_SAFE) => Ok(None),
        Value::Number(n) if n.fract() == 0.0 && *n >= 0.0 => Ok(Some(*n as usize)),
        other => Err(CoreError::invalid_option(
            "maxRetainedBytes",
            format!("maxRetainedBytes must be a non-negative integer or Infinity, got {}", other.describe()),
        )),
    }
}

/// `pty`: `true` or `{ cols = 80, rows = 24, term = 'xterm-256color' }`; absent or `false` for none.
/// `prefix` names the sizes as the caller wrote them (`pty.cols`, or `cols` for createTerminal).
pub(super) fn pty(prefix: &str, v: &Value) -> CoreResult<Option<Pty>> {
    let o = match v {
        Value::Undefined | Value::Null | Value::Bool(false) => return Ok(None),
        Value::Bool(true) => &Value::Object(Vec::new()),
        Value::Object(_) => v,
        other => {
            return Err(CoreError::invalid_option(
                "pty",
                format!("pty must be true or an object {{ cols, rows, term }}, got {}", other.describe()),
            ))
        }
    };
    let cols = dimension(&format!("{prefix}cols"), o.get("cols"), 80)?;
    let rows = dimension(&format!("{prefix}rows"), o.get("rows"), 24)?;
    let term = match o.get("term") {
        Value::Undefined => "xterm-256color".to_string(),
        // A plain name: it becomes an environment value and a terminfo lookup, never a path.
        Value::String(s)
            if !s.is_empty()
                && s.len() <= 64
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b)) =>
        {
            s.clone()
        }
        other => {
            return Err(CoreError::invalid_option(
                &format!("{prefix}term"),
                format!(
                    "{prefix}term must be a terminal name of letters, digits and . _ + -, got {}",
                    other.describe()
                ),
            ))
        }
    };
    Ok(Some(Pty { cols, rows, term }))
}

/// A window dimension: an integer from 1 to 65535 (`default` when absent).
fn dimension(name: &str, v: &Value, default: u16) -> CoreResult<u16> {
    match v {
        Value::Undefined => Ok(default),
        Value::Number(n) if n.fract() == 0.0 && (1.0..=65535.0).contains(n) => Ok(*n as u16),
        other => Err(CoreError::invalid_option(
            name,
            format!("{name} must be an integer from 1 to 65535, got {}", other.describe()),
        )),
    }
}

/// The arguments of `resize(cols, rows)`.
pub fn window_size(cols: &Value, rows: &Value) -> CoreResult<(u16, u16)> {
    let present = |name: &str, v: &Value| match v {
        Value::Undefined => {
            Err(CoreError::invalid_option(name, format!("{name} must be an integer from 1 to 65535, got undefined")))
        }
        _ => Ok(()),
    };
    present("cols", cols)?;
    present("rows", rows)?;
    Ok((dimension("cols", cols, 80)?, dimension("rows", rows, 24)?))
}

pub(super) fn limits(v: &Value) -> CoreResult<Limits> {
    let props = match v {
        Value::Undefined => return Ok(Limits::default()),
        Value::Object(props) => props,
        other => {
            return Err(CoreError::invalid_option(
                "limits",
                format!("limits must be an object, got {}", other.describe()),
            ))
        }
    };
    let mut l = Limits::default();
    for (k, value) in props {
        let slot = match k.as_str() {
            "addressSpace" => &mut l.address_space,
            "cpuSeconds" => &mut l.cpu_seconds,
            "openFiles" => &mut l.open_files,
            "fileSize" => &mut l.file_size,
            "processes" => &mut l.processes,
            _ if *value == Value::Undefined => continue,
            _ => return Err(CoreError::invalid_option("limits", format!("unknown limit {k:?}"))),
        };
        *slot = match value {
            Value::Undefined => None,
            // Leave a limit out for "unlimited"; above 2^53 - 1 the number is no longer exact.
            Value::Number(n) if n.fract() == 0.0 && *n >= 0.0 && *n <= MAX_SAFE => Some(*n as u64),
            other => {
                return Err(CoreError::invalid_option(
                    "limits",
                    format!(
                        "limits.{k} must be an integer from 0 to Number.MAX_SAFE_INTEGER, got {}",
                        other.describe()
                    ),
                ))
            }
        };
    }
    Ok(l)
}
