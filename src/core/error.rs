//! The one error type of the core. Every variant maps to a stable, public `code` string
//! (see `CoreError::code`), which the binding turns into a typed JS error.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CoreError {
    #[error("invalid command: {0}")]
    InvalidCommand(String),
    #[error("invalid working directory {path:?}: {reason}")]
    InvalidCwd { path: String, reason: String },
    #[error("invalid environment: {0}")]
    InvalidEnv(String),
    #[error("failed to spawn {program:?}: {reason}")]
    SpawnFailed { program: String, reason: String, errno: Option<i32> },
    #[error(
        "signal must be an integer from 1 to 64 or a signal name ('SIGTERM' or 'TERM'), got {0}; nothing was sent"
    )]
    InvalidSignal(String),
    #[error("invalid option {name}: {reason}")]
    InvalidOption { name: String, reason: String },
    #[error("invalid process cursor: {0}")]
    InvalidCursor(String),
    #[error("Process {pid} has already exited with code {code}")]
    AlreadyExited { pid: u32, code: i32 },
    #[error("stdin of process {0} is not available (spawned with stdinMode 'ignore')")]
    StdinIgnored(u32),
    #[error("stdin of process {0} is closed")]
    StdinClosed(u32),
    #[error("failed to write to stdin of process {pid}: {reason}")]
    StdinWrite { pid: u32, reason: String },
    #[error("process {0} has no terminal (start it with the pty option)")]
    NoTerminal(u32),
    /// A checkpoint could not be captured, restored or removed; `path` is the file it failed on.
    #[error("{what} failed: {reason}, {syscall} '{path}'")]
    SnapshotFailed { what: String, path: String, syscall: String, reason: String, errno: Option<i32> },
}

impl CoreError {
    /// The stable code a program can branch on. Never change one: users match on them.
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::InvalidCommand(_) => "INVALID_PROCESS_COMMAND",
            CoreError::InvalidCwd { .. } => "INVALID_PROCESS_CWD",
            CoreError::InvalidEnv(_) => "INVALID_PROCESS_ENVIRONMENT",
            CoreError::SpawnFailed { .. } => "PROCESS_SPAWN_FAILED",
            CoreError::InvalidSignal(_) => "INVALID_PROCESS_SIGNAL",
            CoreError::InvalidOption { .. } => "INVALID_PROCESS_OPTION",
            CoreError::InvalidCursor(_) => "INVALID_PROCESS_CURSOR",
            CoreError::AlreadyExited { .. } => "PROCESS_ALREADY_EXITED",
            CoreError::StdinIgnored(_) => "PROCESS_STDIN_UNAVAILABLE",
            CoreError::StdinClosed(_) => "PROCESS_STDIN_CLOSED",
            CoreError::StdinWrite { .. } => "PROCESS_STDIN_WRITE_FAILED",
            CoreError::NoTerminal(_) => "PROCESS_NO_TERMINAL",
            CoreError::SnapshotFailed { .. } => "SANDBOX_SNAPSHOT_FAILED",
        }
    }

    /// The OS error behind a failed spawn or checkpoint, by its symbolic name (`E2BIG`, `ENOENT`, …).
    pub fn os_code(&self) -> Option<String> {
        match self {
            CoreError::SpawnFailed { errno: Some(e), .. } => Some(errno_name(*e)),
            CoreError::SnapshotFailed { errno: Some(e), .. } => Some(errno_name(*e)),
            _ => None,
        }
    }

    pub fn invalid_option(name: &str, reason: impl Into<String>) -> Self {
        CoreError::InvalidOption { name: name.to_string(), reason: reason.into() }
    }
}

/// The symbolic name of an errno value, for every errno the platform defines: a spawn can fail
/// in more ways than the common few (E2BIG for a long argument list, ETXTBSY, ELOOP, …), and a
/// user should never have to decode a number.
pub fn errno_name(errno: i32) -> String {
    // Errno's Debug form is its symbolic name.
    match nix::errno::Errno::from_raw(errno) {
        nix::errno::Errno::UnknownErrno => "EUNKNOWN".into(),
        e => format!("{e:?}"),
    }
}

pub type CoreResult<T> = Result<T, CoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_values_are_named() {
        assert_eq!(errno_name(libc::E2BIG), "E2BIG");
        assert_eq!(errno_name(libc::ETXTBSY), "ETXTBSY");
        assert_eq!(errno_name(libc::ENOENT), "ENOENT");
        assert_eq!(errno_name(100_000), "EUNKNOWN");
    }
}
