//! A process group led by one of our children. Signals go to the whole group (`killpg`), so they
//! reach grandchildren. Whether any member is left is `liveness`'s question.

use crate::core::error::{CoreError, CoreResult};
use crate::core::value::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup {
    pub pgid: i32,
}

/// The one rule for signals: integers 1–64, and the names of this platform's signals ('SIGTERM',
/// or 'TERM' without the prefix; upper case, as Node spells them) are accepted; anything else is
/// refused before anything is sent.
pub fn signal_of(v: &Value) -> CoreResult<i32> {
    match v {
        Value::Number(n) => check_signal(*n),
        Value::String(name) => signal_by_name(name).ok_or_else(|| CoreError::InvalidSignal(v.describe())),
        other => Err(CoreError::InvalidSignal(other.describe())),
    }
}

/// The signals that have a name here, with their numbers on this platform (they differ between
/// Linux and macOS: SIGUSR1 is 10 on one and 30 on the other).
const SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", libc::SIGHUP),
    ("SIGINT", libc::SIGINT),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGILL", libc::SIGILL),
    ("SIGTRAP", libc::SIGTRAP),
    ("SIGABRT", libc::SIGABRT),
    ("SIGIOT", libc::SIGIOT),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGKILL", libc::SIGKILL),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
    ("SIGTERM", libc::SIGTERM),
    ("SIGCHLD", libc::SIGCHLD),
    ("SIGCONT", libc::SIGCONT),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGTSTP", libc::SIGTSTP),
    ("SIGTTIN", libc::SIGTTIN),
    ("SIGTTOU", libc::SIGTTOU),
    ("SIGURG", libc::SIGURG),
    ("SIGXCPU", libc::SIGXCPU),
    ("SIGXFSZ", libc::SIGXFSZ),
    ("SIGVTALRM", libc::SIGVTALRM),
    ("SIGPROF", libc::SIGPROF),
    ("SIGWINCH", libc::SIGWINCH),
    ("SIGIO", libc::SIGIO),
    ("SIGSYS", libc::SIGSYS),
    #[cfg(target_os = "linux")]
    ("SIGPOLL", libc::SIGPOLL),
    #[cfg(target_os = "linux")]
    ("SIGPWR", libc::SIGPWR),
    #[cfg(target_os = "linux")]
    ("SIGSTKFLT", libc::SIGSTKFLT),
    #[cfg(target_os = "macos")]
    ("SIGINFO", libc::SIGINFO),
    #[cfg(target_os = "macos")]
    ("SIGEMT", libc::SIGEMT),
];

/// The number of a signal name, with or without its SIG prefix.
pub fn signal_by_name(name: &str) -> Option<i32> {
    let short = name.strip_prefix("SIG").unwrap_or(name);
    SIGNALS.iter().find(|(n, _)| &n[3..] == short).map(|&(_, num)| num)
}

/// The name of a signal number ('SIGKILL'), for messages; None for one without a name here.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    // SIGIOT shares SIGABRT's number (and SIGPOLL SIGIO's): the first name is the usual one.
    SIGNALS.iter().find(|&&(_, num)| num == signal).map(|&(n, _)| n)
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

    #[test]
    fn signal_names_with_or_without_the_prefix_are_their_numbers() {
        let name = |s: &str| signal_of(&Value::String(s.into()));
        assert_eq!(name("SIGTERM"), Ok(libc::SIGTERM));
        assert_eq!(name("TERM"), Ok(libc::SIGTERM));
        assert_eq!(name("SIGKILL"), Ok(9));
        assert_eq!(name("USR1"), Ok(libc::SIGUSR1));
        for bad in ["SIGFOO", "sigterm", "term", "SIG", "", "9", " SIGTERM", "SIGSIGTERM"] {
            assert_eq!(name(bad), Err(CoreError::InvalidSignal(format!("{bad:?}"))), "{bad:?}");
        }
        assert_eq!(signal_name(libc::SIGABRT), Some("SIGABRT"));
        assert_eq!(signal_name(9), Some("SIGKILL"));
        assert_eq!(signal_name(64), None);
    }
}
