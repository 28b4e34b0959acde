//! The `restart` option of a launch: which ends of a run bring the next one, how many, and how
//! long to wait before each. The supervisor applies it (`supervise::supervisor`); every value is
//! checked here, before anything runs.

use crate::core::error::{CoreError, CoreResult};
use crate::core::exit::ExitInfo;
use crate::core::value::Value;
use std::time::Duration;

/// Number.MAX_SAFE_INTEGER: above it a JS number is no longer exact.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RestartPolicy {
    /// Restart after every end of a run, exit 0 included ('always'), or only after a failure
    /// ('on-failure': a non-zero code or a signal).
    pub always: bool,
    pub max_restarts: u32,
    pub initial_ms: f64,
    pub max_ms: f64,
    pub factor: f64,
    /// A run that lasted this long starts the count again.
    pub reset_after_ms: f64,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            always: false,
            max_restarts: 5,
            initial_ms: 100.0,
            max_ms: 30_000.0,
            factor: 2.0,
            reset_after_ms: 60_000.0,
        }
    }
}

impl RestartPolicy {
    /// Whether a run that ended with `exit`, on its own, calls for another.
    pub fn wants(&self, exit: &ExitInfo) -> bool {
        self.always || exit.code != 0 || exit.signal.is_some()
    }

    /// The wait before restart number `n` (1, 2, …): min(initial × factor^(n-1), max).
    pub fn gap(&self, n: u32) -> Duration {
        let ms = self.initial_ms * self.factor.powi(n.saturating_sub(1).min(1024) as i32);
        let ms = if ms.is_finite() { ms.min(self.max_ms) } else { self.max_ms };
        Duration::from_micros((ms * 1000.0).ceil() as u64)
    }
}

fn invalid(name: &str, what: &str, v: &Value) -> CoreError {
    CoreError::invalid_option(name, format!("{name} must be {what}, got {}", v.describe()))
}

/// A number of milliseconds from 0 to Number.MAX_SAFE_INTEGER, or `default` when absent.
fn ms(name: &str, v: &Value, default: f64) -> CoreResult<f64> {
    match v {
        Value::Undefined => Ok(default),
        Value::Number(n) if n.is_finite() && (0.0..=MAX_SAFE).contains(n) => Ok(*n),
        other => Err(invalid(name, "a non-negative finite number of milliseconds", other)),
    }
}

/// `restart`: absent for none, or `{ policy, maxRestarts?, backoffMs?: { initial?, max?, factor? },
/// resetAfterMs? }`.
pub fn parse(v: &Value) -> CoreResult<Option<RestartPolicy>> {
    let props = match v {
        Value::Undefined | Value::Null => return Ok(None),
        Value::Object(props) => props,
        other => return Err(invalid("restart", "an object { policy, maxRestarts, backoffMs, resetAfterMs }", other)),
    };
    for (k, value) in props {
        if !matches!(k.as_str(), "policy" | "maxRestarts" | "backoffMs" | "resetAfterMs") && *value != Value::Undefined
        {
            return Err(CoreError::invalid_option(&format!("restart.{k}"), format!("restart has no option {k:?}")));
        }
    }
    let mut p = RestartPolicy::default();
    p.always = match v.get("policy") {
        Value::String(s) if s == "always" => true,
        Value::String(s) if s == "on-failure" => false,
        other => return Err(invalid("restart.policy", "'on-failure' or 'always'", other)),
    };
    p.max_restarts = match v.get("maxRestarts") {
        Value::Undefined => p.max_restarts,
        Value::Number(n) if n.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(n) => *n as u32,
        other => return Err(invalid("restart.maxRestarts", "an integer from 0 to 4294967295", other)),
    };
    p.reset_after_ms = ms("restart.resetAfterMs", v.get("resetAfterMs"), p.reset_after_ms)?;
    let backoff = v.get("backoffMs");
    match backoff {
        Value::Undefined => {}
        Value::Object(props) => {
            for (k, value) in props {
                if !matches!(k.as_str(), "initial" | "max" | "factor") && *value != Value::Undefined {
                    return Err(CoreError::invalid_option(
                        &format!("restart.backoffMs.{k}"),
                        format!("restart.backoffMs has no option {k:?}"),
                    ));
                }
            }
            p.initial_ms = ms("restart.backoffMs.initial", backoff.get("initial"), p.initial_ms)?;
            p.max_ms = ms("restart.backoffMs.max", backoff.get("max"), p.max_ms.max(p.initial_ms))?;
            p.factor = match backoff.get("factor") {
                Value::Undefined => p.factor,
                Value::Number(n) if n.is_finite() && *n >= 1.0 => *n,
                other => return Err(invalid("restart.backoffMs.factor", "a finite number of at least 1", other)),
            };
            if p.max_ms < p.initial_ms {
                return Err(CoreError::invalid_option(
                    "restart.backoffMs.max",
                    format!(
                        "restart.backoffMs.max ({}) is below restart.backoffMs.initial ({})",
                        p.max_ms, p.initial_ms
                    ),
                ));
            }
        }
        other => return Err(invalid("restart.backoffMs", "an object { initial, max, factor }", other)),
    }
    Ok(Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    fn field_of(e: CoreError) -> String {
        match e {
            CoreError::InvalidOption { name, .. } => name,
            other => panic!("not an option error: {other:?}"),
        }
    }

    #[test]
    fn defaults_and_gaps() {
        let p = parse(&obj(&[("policy", Value::String("always".into()))])).unwrap().unwrap();
        assert!(p.always);
        assert_eq!(p.max_restarts, 5);
        assert_eq!(p.gap(1), Duration::from_millis(100));
        assert_eq!(p.gap(2), Duration::from_millis(200));
        assert_eq!(p.gap(10), Duration::from_millis(30_000));
        assert_eq!(p.gap(u32::MAX), Duration::from_millis(30_000));
        assert_eq!(parse(&Value::Undefined).unwrap(), None);
    }

    #[test]
    fn bad_values_name_their_field() {
        let policy = ("policy", Value::String("on-failure".into()));
        let cases = [
            (Value::Number(3.0), "restart"),
            (obj(&[("policy", Value::String("sometimes".into()))]), "restart.policy"),
            (obj(&[]), "restart.policy"),
            (obj(&[policy.clone(), ("maxRestarts", Value::Number(-1.0))]), "restart.maxRestarts"),
            (obj(&[policy.clone(), ("maxRestarts", Value::Number(1.5))]), "restart.maxRestarts"),
            (obj(&[policy.clone(), ("resetAfterMs", Value::Number(-1.0))]), "restart.resetAfterMs"),
            (obj(&[policy.clone(), ("backoffMs", Value::Number(5.0))]), "restart.backoffMs"),
            (obj(&[policy.clone(), ("backoffMs", obj(&[("factor", Value::Number(0.5))]))]), "restart.backoffMs.factor"),
            (
                obj(&[policy.clone(), ("backoffMs", obj(&[("initial", Value::Number(-5.0))]))]),
                "restart.backoffMs.initial",
            ),
            (
                obj(&[
                    policy.clone(),
                    ("backoffMs", obj(&[("initial", Value::Number(50.0)), ("max", Value::Number(10.0))])),
                ]),
                "restart.backoffMs.max",
            ),
            (obj(&[policy.clone(), ("maxRestart", Value::Number(2.0))]), "restart.maxRestart"),
        ];
        for (v, field) in cases {
            assert_eq!(field_of(parse(&v).unwrap_err()), field, "{v:?}");
        }
    }

    #[test]
    fn on_failure_wants_failures_only() {
        let p = RestartPolicy::default();
        assert!(!p.wants(&ExitInfo { code: 0, signal: None, stop: None }));
        assert!(p.wants(&ExitInfo { code: 1, signal: None, stop: None }));
        assert!(p.wants(&ExitInfo { code: 137, signal: Some(9), stop: None }));
        assert!(RestartPolicy { always: true, ..p }.wants(&ExitInfo::default()));
    }
}
