//! What a launch means. Every rule about the values of a launch lives here, once for both faces:
//! the command (a shell string for the Mastra surface, an argv array for the Processes API), the
//! environment layers, the working directory, the durations, retention, stdin and limits; the
//! rule for each single value is in `options`. The JS layer hands over the values as the user
//! gave them and checks only what Rust cannot see (functions, AbortSignals).

use crate::core::error::{CoreError, CoreResult};
use crate::core::launch::command::{Containment, SpawnSpec, StdinMode};
use crate::core::launch::options::{argv, cwd, duration, env, env_object, limits, pty, resolve, retained, whole_ms};
use crate::core::launch::probes;
use crate::core::value::{Value, MAX_DEPTH, MAX_VALUES};
use std::path::{Path, PathBuf};

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

/// One launch request as the JS layer builds it: the call's own `command` and `options` as the
/// user gave them, over the manager's side of the launch.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub command: Value,
    pub options: Value,
    /// The environment layers under the call's own `options.env` (later layers win, `undefined`
    /// drops a name).
    pub env: Vec<Value>,
    /// The manager's working directory, which the call's `cwd` resolves against.
    pub cwd: String,
    /// The manager's containment: `'cgroup'`, else process groups.
    pub containment: Option<String>,
    /// The manager's resolved log options (`disk::resolved`), if it writes logs to disk.
    pub log_files: Value,
}

/// The meaning of one launch request.
pub fn parse(face: Face, req: &Request) -> CoreResult<Launch> {
    too_deep(face, req)?;
    let command = &req.command;
    let options = &req.options;
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
    let mut spec = SpawnSpec::new(argv, cwd(Path::new(&req.cwd), o.get("cwd"))?);
    let mut layers: Vec<&Value> = req.env.iter().collect();
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
    spec.restart = match (face, o.get("restart")) {
        (Face::Terminal, Value::Undefined) => None,
        (Face::Terminal, _) => {
            return Err(CoreError::invalid_option(
                "restart",
                "createTerminal has no restart: a terminal is interactive, not a service",
            ))
        }
        (_, v) => crate::core::launch::restart::parse(v)?,
    };
    if face == Face::Terminal {
        for name in ["readiness", "liveness", "shutdown"] {
            if !o.get(name).is_absent() {
                return Err(CoreError::invalid_option(
                    name,
                    format!("createTerminal has no {name}: a terminal is interactive, not a service"),
                ));
            }
        }
    }
    spec.probes.readiness = probes::probe("readiness", o.get("readiness"))?;
    spec.probes.liveness = probes::probe("liveness", o.get("liveness"))?;
    spec.shutdown = probes::shutdown(o.get("shutdown"))?;
    spec.containment = match req.containment.as_deref() {
        Some("cgroup") => Containment::Cgroup,
        _ => Containment::ProcessGroup,
    };
    spec.log_files = crate::core::output::disk::resolved(&req.log_files)?;
    spec.validate()?;
    Ok(Launch { spec, timeout: timeout.filter(|t| *t > 0.0) })
}

/// Refuses a request with a part past `MAX_DEPTH` (see `Value::TooDeep`), named by the option (or
/// field) that holds it.
fn too_deep(face: Face, req: &Request) -> CoreResult<()> {
    let fields = [("command", &req.command), ("options", &req.options), ("logFiles", &req.log_files)];
    let found =
        fields.into_iter().chain(req.env.iter().map(|l| ("env", l))).find_map(|(f, v)| Some((f, v.too_deep_at()?)));
    let Some((field, path)) = found else { return Ok(()) };
    let (name, label) = match (field, path.first()) {
        ("options", Some(name)) => (name.as_str(), format!("{} options.{name}", face.call())),
        ("env", _) => ("env", "the manager's env".to_string()),
        _ => (field, format!("{} {field}", face.call())),
    };
    Err(CoreError::invalid_option(
        name,
        format!(
            "{label} is nested too deep: more than {MAX_DEPTH} levels of objects and arrays, \
             an object that contains itself, or more than {MAX_VALUES} values"
        ),
    ))
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
    match v.get("workingDirectory") {
        Value::Undefined => from_node_cwd(".", "workingDirectory", cwd),
        Value::String(s) => from_node_cwd(s, "workingDirectory", cwd),
        other => {
            Err(CoreError::InvalidCwd { path: other.describe(), reason: "workingDirectory must be a string".into() })
        }
    }
}

/// `given` made absolute against Node's working directory (`cwd`, asked only for a relative
/// path). When that directory is gone (deleted under the process) the error says to give an
/// absolute `option` instead: every path option of procvisor resolves by this one rule.
pub fn from_node_cwd(given: &str, option: &str, cwd: impl FnOnce() -> std::io::Result<PathBuf>) -> CoreResult<PathBuf> {
    if Path::new(given).is_absolute() {
        return Ok(resolve(Path::new("/"), given));
    }
    let base = cwd().map_err(|e| CoreError::InvalidCwd {
        path: given.into(),
        reason: format!(
            "it resolves against the working directory of this Node process, which is not available ({}); \
             give an absolute {option}",
            e.raw_os_error().map(crate::core::error::errno_name).unwrap_or_else(|| e.to_string())
        ),
    })?;
    Ok(resolve(&base, given))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
