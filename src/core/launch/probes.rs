//! The `readiness`, `liveness` and `shutdown` options of a launch: what tells that a process is
//! ready or still healthy, and how it is asked to end. The supervisor runs the probes
//! (`supervise::probe`) and applies the shutdown; every value is checked here, before anything
//! runs, and a bad one names its field (`readiness.http.port`).

use crate::core::error::{CoreError, CoreResult};
use crate::core::output::pattern::Pattern;
use crate::core::tree::group::signal_of;
use crate::core::value::Value;
use std::sync::Arc;
use std::time::Duration;

/// Number.MAX_SAFE_INTEGER: above it a JS number is no longer exact.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Defaults of a probe's timing, documented in the typings (`ProbeOptions`).
const DEFAULT_PERIOD_MS: f64 = 1000.0;
const DEFAULT_TIMEOUT_MS: f64 = 1000.0;
const DEFAULT_FAILURE_THRESHOLD: u32 = 3;
/// What a shutdown waits for before SIGKILL when `shutdown.timeoutMs` is not given.
pub const DEFAULT_SHUTDOWN_MS: u64 = 5000;

/// A pattern looked for in the output, with the text it was given as, for messages.
#[derive(Clone)]
pub struct LogTarget {
    pub shown: String,
    pub pattern: Arc<Pattern>,
}

impl std::fmt::Debug for LogTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LogTarget({:?})", self.shown)
    }
}

/// What one probe looks at.
#[derive(Debug, Clone)]
pub enum ProbeTarget {
    /// A TCP connection to the port on loopback is accepted.
    Port(u16),
    /// `GET path` on loopback answers `status`, or any status from 200 to 399.
    Http { port: u16, path: String, status: Option<u16> },
    /// The run's output (either stream) has matched.
    Log(LogTarget),
    /// The command exits 0 within the probe's timeout.
    Exec(Vec<String>),
}

/// A probe and its timing.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    pub target: ProbeTarget,
    pub period: Duration,
    pub timeout: Duration,
    /// Consecutive failures that make a ready process not ready, or a healthy one unhealthy.
    pub failure_threshold: u32,
    pub initial_delay: Duration,
}

/// The probes of a launch; both absent for most.
#[derive(Debug, Clone, Default)]
pub struct Probes {
    pub readiness: Option<ProbeSpec>,
    pub liveness: Option<ProbeSpec>,
}

impl Probes {
    pub fn any(&self) -> bool {
        self.readiness.is_some() || self.liveness.is_some()
    }
}

/// How a process is asked to end by `close()`, a sandbox's stop or `stop()`: `signal`, then
/// SIGKILL once `timeout_ms` has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shutdown {
    pub signal: i32,
    pub timeout_ms: u64,
}

fn invalid(name: &str, what: &str, v: &Value) -> CoreError {
    CoreError::invalid_option(name, format!("{name} must be {what}, got {}", v.describe()))
}

/// Refuses a key of `props` that is not in `known`, naming it under `prefix`.
fn known_keys(prefix: &str, props: &[(String, Value)], known: &[&str]) -> CoreResult<()> {
    for (k, value) in props {
        if !known.contains(&k.as_str()) && *value != Value::Undefined {
            return Err(CoreError::invalid_option(&format!("{prefix}.{k}"), format!("{prefix} has no option {k:?}")));
        }
    }
    Ok(())
}

/// Milliseconds from `min`, whole (a fraction rounds up), or `default` when absent.
fn ms(name: &str, v: &Value, default: f64, min: f64) -> CoreResult<Duration> {
    let n = match v {
        Value::Undefined => default,
        Value::Number(n) if n.is_finite() && *n >= min && *n <= MAX_SAFE => *n,
        other if min > 0.0 => return Err(invalid(name, "a positive finite number of milliseconds", other)),
        other => return Err(invalid(name, "a non-negative finite number of milliseconds", other)),
    };
    Ok(Duration::from_millis(n.ceil() as u64))
}

fn port(name: &str, v: &Value) -> CoreResult<u16> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && (1.0..=65535.0).contains(n) => Ok(*n as u16),
        other => Err(invalid(name, "an integer from 1 to 65535", other)),
    }
}

/// A log pattern as a string: `/source/flags` is a regular expression (flags among `dgimsuvy`),
/// any other string is text to find. Either is matched in linear time.
pub fn log_pattern(name: &str, v: &Value) -> CoreResult<LogTarget> {
    let Value::String(s) = v else {
        return Err(invalid(name, "a non-empty string (text, or /source/flags for a regular expression)", v));
    };
    if s.is_empty() {
        return Err(invalid(name, "a non-empty string (text, or /source/flags for a regular expression)", v));
    }
    let regex = s
        .strip_prefix('/')
        .and_then(|rest| rest.rfind('/').map(|at| (&rest[..at], &rest[at + 1..])))
        .filter(|(source, flags)| !source.is_empty() && flags.chars().all(|c| "dgimsuvy".contains(c)));
    let compiled = match regex {
        Some((source, flags)) => Pattern::new(source, flags),
        None => Pattern::new(&regex::escape(s), ""),
    };
    let pattern = compiled.map_err(|e| match e {
        CoreError::InvalidOption { reason, .. } => CoreError::invalid_option(name, format!("{name}: {reason}")),
        other => other,
    })?;
    Ok(LogTarget { shown: s.clone(), pattern: Arc::new(pattern) })
}

fn exec_argv(name: &str, v: &Value) -> CoreResult<Vec<String>> {
    let what = "an argv array of strings whose first is non-empty, without NUL bytes";
    let Value::Array(items) = v else { return Err(invalid(name, what, v)) };
    let argv: Vec<String> = items
        .iter()
        .map(|item| match item {
            Value::String(s) if !s.contains('\0') => Some(s.clone()),
            _ => None,
        })
        .collect::<Option<_>>()
        .filter(|a: &Vec<String>| a.first().is_some_and(|first| !first.is_empty()))
        .ok_or_else(|| invalid(name, what, v))?;
    Ok(argv)
}

fn http(name: &str, v: &Value) -> CoreResult<ProbeTarget> {
    let Value::Object(props) = v else { return Err(invalid(name, "an object { port, path, status }", v)) };
    known_keys(name, props, &["port", "path", "status"])?;
    let port = port(&format!("{name}.port"), v.get("port"))?;
    let path = match v.get("path") {
        Value::Undefined => "/".to_string(),
        Value::String(p) if p.starts_with('/') && !p.chars().any(|c| c.is_whitespace() || c.is_control()) => p.clone(),
        other => {
            return Err(invalid(&format!("{name}.path"), "a path that starts with '/' and holds no whitespace", other))
        }
    };
    let status = match v.get("status") {
        Value::Undefined => None,
        Value::Number(n) if n.fract() == 0.0 && (100.0..=999.0).contains(n) => Some(*n as u16),
        other => return Err(invalid(&format!("{name}.status"), "an HTTP status from 100 to 999", other)),
    };
    Ok(ProbeTarget::Http { port, path, status })
}

const TARGETS: [&str; 4] = ["port", "http", "log", "exec"];

/// `readiness` or `liveness` (`name`): absent for none, or one target (`port`, `http`, `log`,
/// `exec`) with `periodMs`, `timeoutMs`, `failureThreshold` and `initialDelayMs`.
pub fn probe(name: &str, v: &Value) -> CoreResult<Option<ProbeSpec>> {
    let props = match v {
        Value::Undefined | Value::Null => return Ok(None),
        Value::Object(props) => props,
        other => return Err(invalid(name, "an object with one of port, http, log or exec", other)),
    };
    known_keys(
        name,
        props,
        &[&TARGETS[..], &["periodMs", "timeoutMs", "failureThreshold", "initialDelayMs"]].concat(),
    )?;
    let given: Vec<&str> = TARGETS.into_iter().filter(|t| !v.get(t).is_absent()).collect();
    let target = match given[..] {
        [] => {
            return Err(CoreError::invalid_option(
                name,
                format!("{name} needs a target: one of port, http, log or exec"),
            ))
        }
        [one] => {
            let field = format!("{name}.{one}");
            match one {
                "port" => ProbeTarget::Port(port(&field, v.get(one))?),
                "http" => http(&field, v.get(one))?,
                "log" => ProbeTarget::Log(log_pattern(&field, v.get(one))?),
                _ => ProbeTarget::Exec(exec_argv(&field, v.get(one))?),
            }
        }
        _ => {
            return Err(CoreError::invalid_option(
                name,
                format!("{name} takes one target, got {}", given.join(" and ")),
            ))
        }
    };
    let failure_threshold = match v.get("failureThreshold") {
        Value::Undefined => DEFAULT_FAILURE_THRESHOLD,
        Value::Number(n) if n.fract() == 0.0 && (1.0..=u32::MAX as f64).contains(n) => *n as u32,
        other => return Err(invalid(&format!("{name}.failureThreshold"), "an integer from 1 to 4294967295", other)),
    };
    Ok(Some(ProbeSpec {
        target,
        period: ms(&format!("{name}.periodMs"), v.get("periodMs"), DEFAULT_PERIOD_MS, 1.0)?,
        timeout: ms(&format!("{name}.timeoutMs"), v.get("timeoutMs"), DEFAULT_TIMEOUT_MS, 1.0)?,
        failure_threshold,
        initial_delay: ms(&format!("{name}.initialDelayMs"), v.get("initialDelayMs"), 0.0, 0.0)?,
    }))
}

/// `shutdown`: absent for none (a kill is SIGKILL at once), or `{ signal?, timeoutMs? }`:
/// SIGTERM and 5 s unless given.
pub fn shutdown(v: &Value) -> CoreResult<Option<Shutdown>> {
    let props = match v {
        Value::Undefined | Value::Null => return Ok(None),
        Value::Object(props) => props,
        other => return Err(invalid("shutdown", "an object { signal, timeoutMs }", other)),
    };
    known_keys("shutdown", props, &["signal", "timeoutMs"])?;
    let signal = match v.get("signal") {
        Value::Undefined => libc::SIGTERM,
        given => signal_of(given).map_err(|_| {
            invalid("shutdown.signal", "an integer from 1 to 64 or a signal name ('SIGTERM' or 'TERM')", given)
        })?,
    };
    let timeout = ms("shutdown.timeoutMs", v.get("timeoutMs"), DEFAULT_SHUTDOWN_MS as f64, 0.0)?;
    Ok(Some(Shutdown { signal, timeout_ms: timeout.as_millis() as u64 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    fn field_of(e: CoreError) -> String {
        match e {
            CoreError::InvalidOption { name, .. } => name,
            other => panic!("not an option error: {other:?}"),
        }
    }

    #[test]
    fn defaults_and_each_target() {
        let p = probe("readiness", &obj(&[("port", Value::Number(3000.0))])).unwrap().unwrap();
        assert!(matches!(p.target, ProbeTarget::Port(3000)));
        assert_eq!((p.period, p.timeout, p.failure_threshold), (Duration::from_secs(1), Duration::from_secs(1), 3));
        assert_eq!(p.initial_delay, Duration::ZERO);
        let h = obj(&[("port", Value::Number(80.0)), ("path", s("/health")), ("status", Value::Number(204.0))]);
        let p = probe("liveness", &obj(&[("http", h), ("periodMs", Value::Number(2.5))])).unwrap().unwrap();
        assert!(matches!(p.target, ProbeTarget::Http { port: 80, ref path, status: Some(204) } if path == "/health"));
        assert_eq!(p.period, Duration::from_millis(3));
        let p = probe("readiness", &obj(&[("exec", Value::Array(vec![s("true")]))])).unwrap().unwrap();
        assert!(matches!(p.target, ProbeTarget::Exec(ref a) if a == &["true"]));
        assert!(probe("readiness", &Value::Undefined).unwrap().is_none());
    }

    #[test]
    fn a_log_pattern_is_text_or_a_regular_expression() {
        let found = |pattern: &str, text: &str| log_pattern("log", &s(pattern)).unwrap().pattern.find(text).is_some();
        assert!(found("a.b (c)", "x a.b (c) y"));
        assert!(!found("a.b", "axb"), "text is not a regular expression");
        assert!(found("/listening on \\d+/", "listening on 3000"));
        assert!(found("/READY/i", "ready"));
        assert!(found("/api/health", "GET /api/health"), "a path is text: 'health' is no set of flags");
        assert_eq!(field_of(log_pattern("readiness.log", &s("/(a)\\1/")).unwrap_err()), "readiness.log");
        assert!(log_pattern("log", &s("/(a)\\1/")).unwrap_err().to_string().contains("linear time"));
    }

    #[test]
    fn bad_values_name_their_field() {
        let port = ("port", Value::Number(1.0));
        let cases = [
            (Value::Number(3.0), "readiness"),
            (obj(&[]), "readiness"),
            (obj(&[("periodMs", Value::Number(10.0))]), "readiness"),
            (obj(&[port.clone(), ("log", s("x"))]), "readiness"),
            (obj(&[port.clone(), ("every", Value::Number(1.0))]), "readiness.every"),
            (obj(&[("port", Value::Number(0.0))]), "readiness.port"),
            (obj(&[("port", Value::Number(70000.0))]), "readiness.port"),
            (obj(&[("port", s("80"))]), "readiness.port"),
            (obj(&[("http", obj(&[]))]), "readiness.http.port"),
            (obj(&[("http", obj(&[port.clone(), ("path", s("health"))]))]), "readiness.http.path"),
            (obj(&[("http", obj(&[port.clone(), ("status", Value::Number(99.0))]))]), "readiness.http.status"),
            (obj(&[("http", obj(&[port.clone(), ("method", s("POST"))]))]), "readiness.http.method"),
            (obj(&[("log", s(""))]), "readiness.log"),
            (obj(&[("exec", Value::Array(vec![]))]), "readiness.exec"),
            (obj(&[("exec", s("curl localhost"))]), "readiness.exec"),
            (obj(&[port.clone(), ("periodMs", Value::Number(-1.0))]), "readiness.periodMs"),
            (obj(&[port.clone(), ("periodMs", Value::Number(0.0))]), "readiness.periodMs"),
            (obj(&[port.clone(), ("timeoutMs", Value::Number(f64::NAN))]), "readiness.timeoutMs"),
            (obj(&[port.clone(), ("failureThreshold", Value::Number(0.0))]), "readiness.failureThreshold"),
            (obj(&[port.clone(), ("initialDelayMs", Value::Number(-5.0))]), "readiness.initialDelayMs"),
        ];
        for (v, field) in cases {
            assert_eq!(field_of(probe("readiness", &v).unwrap_err()), field, "{v:?}");
        }
    }

    #[test]
    fn shutdown_defaults_and_refusals() {
        assert_eq!(shutdown(&Value::Undefined).unwrap(), None);
        assert_eq!(
            shutdown(&obj(&[])).unwrap(),
            Some(Shutdown { signal: libc::SIGTERM, timeout_ms: DEFAULT_SHUTDOWN_MS })
        );
        let sd = shutdown(&obj(&[("signal", s("SIGINT")), ("timeoutMs", Value::Number(0.0))])).unwrap();
        assert_eq!(sd, Some(Shutdown { signal: libc::SIGINT, timeout_ms: 0 }));
        for (v, field) in [
            (Value::Bool(true), "shutdown"),
            (obj(&[("signal", s("SIGNOPE"))]), "shutdown.signal"),
            (obj(&[("timeoutMs", Value::Number(-1.0))]), "shutdown.timeoutMs"),
            (obj(&[("grace", Value::Number(1.0))]), "shutdown.grace"),
        ] {
            assert_eq!(field_of(shutdown(&v).unwrap_err()), field, "{v:?}");
        }
    }
}
