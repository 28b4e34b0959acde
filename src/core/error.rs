//! The one error type of the core, and the one list of procvisor's typed errors (`ERROR_KINDS`):
//! every code, raised here or only in JS, with the name of its JS class. The binding hands the
//! list to the JS layer, which builds its classes from it, so a code cannot exist in one place
//! and be missing or spelled otherwise in another.

use thiserror::Error;

/// What a JS error class extends: procvisor's `ProcessError` (an `Error`), or a built-in class
/// whose meaning it shares and that callers already catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsBase {
    ProcessError,
    RangeError,
    TypeError,
}

impl JsBase {
    pub fn name(self) -> &'static str {
        match self {
            JsBase::ProcessError => "ProcessError",
            JsBase::RangeError => "RangeError",
            JsBase::TypeError => "TypeError",
        }
    }
}

/// One typed error: its stable code (never changed, programs branch on it) and its JS class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorKind {
    pub code: &'static str,
    pub name: &'static str,
    pub base: JsBase,
}

// The code is the constant's own name, so the two cannot differ.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $code:ident => $name:literal, $base:ident;)*) => {
        /// Every typed error, by its code.
        pub mod kind {
            use super::{ErrorKind, JsBase};
            $($(#[$doc])* pub const $code: ErrorKind = ErrorKind { code: stringify!($code), name: $name, base: JsBase::$base };)*
        }
        /// Every typed error, in the order the JS layer exports their classes.
        pub const ERROR_KINDS: &[ErrorKind] = &[$(kind::$code),*];
    };
}

error_kinds! {
    // The Processes API's classes.
    STALE_PROCESS_HANDLE => "StaleProcessHandleError", ProcessError;
    PROCESS_NOT_FOUND => "ProcessNotFoundError", ProcessError;
    PROCESS_WAIT_TIMEOUT => "ProcessWaitTimeoutError", ProcessError;
    PROCESS_ABORTED => "ProcessAbortedError", ProcessError;
    PROCESS_READY_TIMEOUT => "ProcessReadyTimeoutError", ProcessError;
    PROCESS_EXITED_BEFORE_READY => "ProcessExitedBeforeReadyError", ProcessError;
    PROCESS_EXITED_BEFORE_LOG => "ProcessExitedBeforeLogError", ProcessError;
    INVALID_PROCESS_CWD => "InvalidProcessCwdError", ProcessError;
    INVALID_PROCESS_ENVIRONMENT => "InvalidProcessEnvironmentError", ProcessError;
    INVALID_PROCESS_CURSOR => "InvalidProcessCursorError", ProcessError;
    PROCESS_SPAWN_FAILED => "ProcessSpawnFailedError", ProcessError;
    // Commands, signals, a closed manager, stdin and the byte reader.
    INVALID_PROCESS_COMMAND => "InvalidProcessCommandError", ProcessError;
    INVALID_PROCESS_SIGNAL => "InvalidProcessSignalError", ProcessError;
    PROCESS_MANAGER_CLOSED => "ProcessManagerClosedError", ProcessError;
    PROCESS_ALREADY_EXITED => "ProcessAlreadyExitedError", ProcessError;
    PROCESS_STDIN_UNAVAILABLE => "ProcessStdinUnavailableError", ProcessError;
    PROCESS_STDIN_CLOSED => "ProcessStdinClosedError", ProcessError;
    PROCESS_STDIN_WRITE_FAILED => "ProcessStdinWriteError", ProcessError;
    /// A write refused because the input written before it is still unread past the bound
    /// (raised in JS, where stdin writes are queued in call order).
    PROCESS_STDIN_BACKLOG_FULL => "ProcessStdinBacklogError", ProcessError;
    PROCESS_OUTPUT_TRUNCATED => "ProcessOutputTruncatedError", ProcessError;
    /// A checkpoint that could not be captured, restored or removed (it names the path).
    SANDBOX_SNAPSHOT_FAILED => "SandboxSnapshotError", ProcessError;
    PROCESS_NO_TERMINAL => "ProcessNoTerminalError", ProcessError;
    // Persistent sandboxes, raised only in JS: the supervisor went away; the other side speaks
    // another protocol; a socket or its directory that is not this user's alone, or a
    // connection of another user.
    SANDBOX_SUPERVISOR_LOST => "SandboxSupervisorLostError", ProcessError;
    SANDBOX_PROTOCOL_MISMATCH => "SandboxProtocolError", ProcessError;
    SANDBOX_ACCESS_DENIED => "SandboxAccessError", ProcessError;
    /// A RangeError, as Mastra throws for a bad `maxRetainedBytes`.
    INVALID_PROCESS_OPTION => "InvalidProcessOptionError", RangeError;
}

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
    /// The kind of this error, and so its stable code and JS class.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CoreError::InvalidCommand(_) => kind::INVALID_PROCESS_COMMAND,
            CoreError::InvalidCwd { .. } => kind::INVALID_PROCESS_CWD,
            CoreError::InvalidEnv(_) => kind::INVALID_PROCESS_ENVIRONMENT,
            CoreError::SpawnFailed { .. } => kind::PROCESS_SPAWN_FAILED,
            CoreError::InvalidSignal(_) => kind::INVALID_PROCESS_SIGNAL,
            CoreError::InvalidOption { .. } => kind::INVALID_PROCESS_OPTION,
            CoreError::InvalidCursor(_) => kind::INVALID_PROCESS_CURSOR,
            CoreError::AlreadyExited { .. } => kind::PROCESS_ALREADY_EXITED,
            CoreError::StdinIgnored(_) => kind::PROCESS_STDIN_UNAVAILABLE,
            CoreError::StdinClosed(_) => kind::PROCESS_STDIN_CLOSED,
            CoreError::StdinWrite { .. } => kind::PROCESS_STDIN_WRITE_FAILED,
            CoreError::NoTerminal(_) => kind::PROCESS_NO_TERMINAL,
            CoreError::SnapshotFailed { .. } => kind::SANDBOX_SNAPSHOT_FAILED,
        }
    }

    /// The stable code a program can branch on. Never change one: users match on them.
    pub fn code(&self) -> &'static str {
        self.kind().code
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
    fn every_code_and_class_name_is_listed_once() {
        let mut codes: Vec<_> = ERROR_KINDS.iter().map(|k| k.code).collect();
        let mut names: Vec<_> = ERROR_KINDS.iter().map(|k| k.name).collect();
        codes.sort_unstable();
        codes.dedup();
        names.sort_unstable();
        names.dedup();
        assert_eq!(codes.len(), ERROR_KINDS.len(), "a code is listed twice");
        assert_eq!(names.len(), ERROR_KINDS.len(), "a class name is listed twice");
        for k in ERROR_KINDS {
            assert!(k.code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{}", k.code);
            assert!(k.name.ends_with("Error") && k.name.starts_with(|c: char| c.is_ascii_uppercase()), "{}", k.name);
        }
    }

    #[test]
    fn errno_values_are_named() {
        assert_eq!(errno_name(libc::E2BIG), "E2BIG");
        assert_eq!(errno_name(libc::ETXTBSY), "ETXTBSY");
        assert_eq!(errno_name(libc::ENOENT), "ENOENT");
        assert_eq!(errno_name(100_000), "EUNKNOWN");
    }
}
