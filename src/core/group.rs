//! A process group led by one of our children. Signals go to the whole group (`killpg`), so they
//! reach grandchildren; "empty" means no live member is left (zombies waiting for a reaper that is
//! not us do not count: they can run no code and hold no port).

use crate::core::error::{CoreError, CoreResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup {
    pub pgid: i32,
}

/// Integer signals 1–64 are accepted, as the peer does; others are refused before anything is sent.
pub fn check_signal(signal: i64) -> CoreResult<i32> {
    if (1..=64).contains(&signal) {
        Ok(signal as i32)
    } else {
        Err(CoreError::InvalidSignal(signal))
    }
}

impl ProcessGroup {
    pub fn new(pgid: i32) -> Self {
        Self { pgid }
    }

    /// Sends `signal` to every member. Returns false when the group no longer exists.
    pub fn signal(&self, signal: i32) -> bool {
        if self.pgid <= 1 {
            return false;
        }
        // SAFETY: plain syscall; pgid > 1 so this never targets "every process".
        unsafe { libc::killpg(self.pgid, signal) == 0 }
    }

    /// True when no live process is left in the group.
    pub fn is_empty(&self) -> bool {
        // SAFETY: signal 0 only checks for existence.
        let alive = unsafe { libc::killpg(self.pgid, 0) } == 0;
        if !alive {
            return std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        }
        !self.has_live_member()
    }

    #[cfg(target_os = "linux")]
    fn has_live_member(&self) -> bool {
        // killpg(0) succeeds for a group made only of zombies (reparented to an init that has not
        // reaped them yet); look at the members' states.
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return true;
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{name}/stat")) else {
                continue;
            };
            // Fields after the command name, which is in parentheses and may hold spaces.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            let _ppid = fields.next();
            let pgrp: i32 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(-1);
            if pgrp == self.pgid && state != "Z" && state != "X" {
                return true;
            }
        }
        false
    }

    #[cfg(not(target_os = "linux"))]
    fn has_live_member(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_outside_1_to_64_are_refused() {
        assert!(check_signal(0).is_err());
        assert!(check_signal(65).is_err());
        assert!(check_signal(-9).is_err());
        assert_eq!(check_signal(9), Ok(9));
        assert_eq!(check_signal(64), Ok(64));
    }
}
