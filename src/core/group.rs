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
