//! A process group led by one of our children. Signals go to the whole group (`killpg`), so they
//! reach grandchildren. Whether any member is left is `liveness`'s question.

use crate::core::error::{CoreError, CoreResult};
use crate::core::value::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup {
    pub pgid: i32,
}

/// The one rule for signals: integers 1–64 are accepted; anything else is refused before
/// anything is sent.
pub fn signal_of(v: &Value) -> CoreResult<i32> {
    match v {
        Value::Number(n) => check_signal(*n),
        other => Err(CoreError::InvalidSignal(other.describe())),
    }
}

/// `signal_of` for a number, taken as JS has it, so that 9.5 or NaN is refused, not rounded.
pub fn check_signal(signal: f64) -> CoreResult<i32> {
    if signal.fract() == 0.0 && (1.0..=64.0).contains(&signal) {
        Ok(signal as i32)
    } else {
        Err(CoreError::InvalidSignal(crate::core::value::number(signal)))
    }
}

impl ProcessGroup {
    pub fn new(pgid: i32) -> Self {
        Self { pgid }
    }

    /// Sends `signal` to every member. Returns false when the group has no member left.
    pub fn signal(&self, signal: i32) -> bool {
        if self.pgid <= 1 {
            return false;
        }
        // SAFETY: plain syscall; pgid > 1 so this never targets "every process".
        unsafe { libc::killpg(self.pgid, signal) == 0 }
    }

    /// True while some process (a zombie counts) still has this group id.
    pub fn exists(&self) -> bool {
        // Signal 0 only checks. EPERM means a member exists that we may not signal.
        self.signal(0) || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
}

/// Sends `signal` to every live process of the session `sid` outside its leader's process group
/// (the group itself is signalled with `killpg`). True when it reached one.
#[cfg(target_os = "linux")]
pub fn signal_session(sid: i32, signal: i32) -> bool {
    if sid <= 1 {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else { return false };
    let mut reached = false;
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // After the command's closing parenthesis: state, ppid, pgrp, session.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let f: Vec<&str> = rest.split_whitespace().take(4).collect();
        if f.len() == 4 && f[3].parse() == Ok(sid) && f[2].parse() != Ok(sid) && f[0] != "Z" {
            // SAFETY: plain syscall on a pid > 1.
            reached |= unsafe { libc::kill(pid, signal) } == 0;
        }
    }
    reached
}

#[cfg(not(target_os = "linux"))]
pub fn signal_session(_sid: i32, _signal: i32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_outside_1_to_64_are_refused() {
        assert!(check_signal(0.0).is_err());
        assert!(check_signal(65.0).is_err());
        assert!(check_signal(-9.0).is_err());
        assert!(check_signal(9.5).is_err());
        assert!(check_signal(f64::NAN).is_err());
        assert_eq!(check_signal(9.0), Ok(9));
        assert_eq!(check_signal(64.0), Ok(64));
    }
}
