//! What a launch means. Every rule about the values of a launch lives here, once for both faces:
//! the command (a shell string for the Mastra surface, an argv array for the Processes API), the
//! environment layers, the working directory, the durations, retention, stdin and limits. The
//! JS layer hands over the values as the user gave them and checks only what Rust cannot see
//! (functions, AbortSignals).

use crate::core::error::{CoreError, CoreResult};
use crate::core::launch::command::{Containment, Limits, Pty, SpawnSpec, StdinMode};
use crate::core::value::Value;
use std::path::{Component, Path, PathBuf};

/// Mastra's default retention per stream.
const DEFAULT_RETAINED: usize = 1024 * 1024;
/// Number.MAX_SAFE_INTEGER: above it a JS number is no longer exact.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Which face launches: their defaults differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// `spawn(command, options)`: `/bin/sh -c`, stdin a pipe, 1 MiB of text retained.
    Shell,
    /// `exec(argv, options)`: no shell, no stdin, no text retained (the log has the bytes).
    Argv,
    /// `createTerminal(options)`: `options.command` an argv (default `/bin/sh`), always on a
    /// terminal sized by `options.cols` / `rows` / `term`, stdin the keyboard, no text retained.
    Terminal,
}

impl Face {
    /// The face the JS layer names 'shell', 'argv' or 'terminal'.
    pub fn from_name(name: &str) -> Option<Face> {
        match name {
            "shell" => Some(Face::Shell),
            "argv" => Some(Face::Argv),
            "terminal" => Some(Face::Terminal),
            _ => None,
        }
    }

    /// The call that launches with this face, as messages name it.
    fn call(self) -> &'static str {
        match self {
            Face::Shell => "spawn",
            Face::Argv => "exec",
            Face::Terminal => "createTerminal",
        }
    }
}

/// A launch, understood.
#[derive(Debug)]
pub struct Launch {
    pub spec: SpawnSpec,
    /// The `timeout` as given (milliseconds), for messages that quote it.
    pub timeout: Option<f64>,
}

/// The meaning of one launch request:
/// `{ command, options, env: [layers…], cwd }`, where `cwd` is the manager's working directory
/// and `env` the layers under the call's own `options.env` (later layers win, `undefined` drops).
pub fn parse(face: Face, req: &Value) -> CoreResult<Launch> {
    let command = req.get("command");
    let options = req.get("options");
    let o = match options {
        Value::Undefined | Value::Null => &Value::Object(Vec::new()),
        Value::Object(_) => options,
        other => {
            return Err(CoreError::invalid_option(
                "options",
                format!("{} options must be an object, got {}", face.call(), other.describe()),
            ));
        }
    };
    let argv = match face {
        Face::Shell => {
            let Value::String(c) = command else {
                return Err(CoreError::InvalidCommand(format!(
                    "command must be a non-empty string, got {}",
                    command.describe()
                )));
            };
            if c.is_empty() {
                return Err(CoreError::InvalidCommand("command must be a non-empty string, got \"\"".into()));
            }
            match o.get("argv") {
                Value::Undefined => vec!["/bin/sh".into(), "-c".into(), c.clone()],
                v => argv("argv", v)?,
            }
        }
        Face::Argv => argv("command", command)?,
        Face::Terminal => match o.get("command") {
            Value::Undefined => vec!["/bin/sh".into()],
            v => argv("command", v)?,
        },
    };
    let base = match req.get("cwd") {
        Value::String(s) => PathBuf::from(s),
        other => return Err(CoreError::InvalidCwd { path: other.describe(), reason: "not a path".into() }),
    };
    let mut spec = SpawnSpec::new(argv, cwd(&base, o.get("cwd"))?);
    let mut layers: Vec<&Value> = match req.get("env") {
        Value::Array(l) => l.iter().collect(),
        _ => Vec::new(),
    };
    layers.push(o.get("env"));
    spec.env = env(&layers)?;
    let timeout = duration("timeout", o.get("timeout"))?;
    spec.timeout_ms = timeout.filter(|t| *t > 0.0).map(whole_ms);
    if let Some(g) = duration("gracePeriod", o.get("gracePeriod"))? {
        spec.grace_ms = whole_ms(g);
    }
    spec.limits = limits(o.get("limits"))?;
    match face {
        Face::Shell => {
            spec.retain_bytes = retained(o.get("maxRetainedBytes"))?;
            spec.stdin = match o.get("stdinMode") {
                Value::Undefined => StdinMode::Pipe,
                Value::String(s) if s == "pipe" => StdinMode::Pipe,
                Value::String(s) if s == "ignore" => StdinMode::Ignore,
                v => {
                    return Err(CoreError::invalid_option(
                        "stdinMode",
                        format!("stdinMode must be 'pipe' or 'ignore', got {}", v.describe()),
                    ))
                }
            };
        }
        Face::Argv => {
            spec.retain_bytes = Some(0);
            spec.stdin = StdinMode::Ignore;
        }
        Face::Terminal => {
            spec.retain_bytes = Some(0);
            spec.stdin = StdinMode::Pipe;
            spec.screen = true;
        }
    }
    spec.pty = match face {
        Face::Terminal => pty("", o)?,
        _ => pty("pty.", o.get("pty"))?,
    };
    if let (true, Some(p)) = (spec.screen, &spec.pty) {
        crate::core::terminal::screen::check_size(p.cols, p.rows)?;
    }
    if let Some(p) = &spec.pty {
        // The manager's or the call's own TERM wins: they know the program better.
        if spec.env_var("TERM").is_none() {
            spec.env.push(("TERM".into(), p.term.clone()));
        }
    }
    spec.containment = match req.get("containment") {
        Value::String(c) if c == "cgroup" => Containment::Cgroup,
        _ => Containment::ProcessGroup,
    };
    spec.validate()?;
    Ok(Launch { spec, timeout: timeout.filter(|t| *t > 0.0) })
}

/// How a manager contains its processes: `'auto'` (a cgroup when this Node process has one to
/// give, else process groups), `'cgroup'` (an error when there is none, saying why) or
/// `'process-group'`.
pub fn containment(v: &Value, cgroups: Result<(), String>) -> CoreResult<Containment> {
    let auto = if cgroups.is_ok() { Containment::Cgroup } else { Containment::ProcessGroup };
    match v {
        Value::Undefined => Ok(auto),
        Value::String(s) if s == "auto" => Ok(auto),
        Value::String(s) if s == "process-group" => Ok(Containment::ProcessGroup),
        Value::String(s) if s == "cgroup" => match cgroups {
            Ok(()) => Ok(Containment::Cgroup),
            Err(why) => {
                Err(CoreError::invalid_option("containment", format!("containment 'cgroup' is not available: {why}")))
            }
        },
        other => Err(CoreError::invalid_option(
            "containment",
            format!("containment must be 'auto', 'cgroup' or 'process-group', got {}", other.describe()),
        )),
    }
}

/// The options of a `ProcessManager`: `{ env?, workingDirectory? }`. Returns the working
/// directory, resolved against `cwd` (the Node process's). The env's values are checked at each
/// launch, where they are merged. `cwd` is asked only when needed: an absolute
/// `workingDirectory` works when Node's own working directory is gone (deleted under it).
pub fn manager(v: &Value, cwd: impl FnOnce() -> std::io::Result<PathBuf>) -> CoreResult<PathBuf> {
    match v {
        Value::Undefined | Value::Null | Value::Object(_) => {}
        other => {
            return Err(CoreError::invalid_option(
                "options",
                format!("ProcessManager options must be an object, got {}", other.describe()),
            ))
        }
    }
    env_object(v.get("env"))?;
    let node_cwd = |given: &str| {
        cwd().map_err(|e| CoreError::InvalidCwd {
            path: given.into(),
            reason: format!(
                "it resolves against the working directory of this Node process, which is not available ({}); \
                 give an absolute workingDirectory",
                e.raw_os_error().map(crate::core::error::errno_name).unwrap_or_else(|| e.to_string())
            ),
        })
    };
    match v.get("workingDirectory") {
        Value::Undefined => node_cwd("."),
        Value::String(s) if Path::new(s).is_absolute() => Ok(resolve(Path::new("/"), s)),
        Value::String(s) => Ok(resolve(&node_cwd(s)?, s)),
        other => {
            Err(CoreError::InvalidCwd { path: other.describe(), reason: "workingDirectory must be a string".into() })
        }
    }
}

/// A non-empty argv of strings whose first entry is non-empty.
fn argv(name: &str, v: &Value) -> CoreResult<Vec<String>> {
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
fn env(layers: &[&Value]) -> CoreResult<Vec<(String, String)>> {
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
fn cwd(base: &Path, v: &Value) -> CoreResult<PathBuf> {
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
fn whole_ms(ms: f64) -> u64 {
    ms.ceil().min(MAX_SAFE) as u64
}

/// Mastra's `maxRetainedBytes`: a non-negative integer or Infinity (None: keep all).
fn retained(v: &Value) -> CoreResult<Option<usize>> {
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
fn pty(prefix: &str, v: &Value) -> CoreResult<Option<Pty>> {
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

fn limits(v: &Value) -> CoreResult<Limits> {
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

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
