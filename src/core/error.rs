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
    #[error("invalid signal {0}: signals are integers from 1 to 64")]
    InvalidSignal(i64),
    #[error("invalid option {name}: {reason}")]
    InvalidOption { name: String, reason: String },
    #[error("invalid process cursor: {0}")]
    InvalidCursor(String),
    #[error("process {0} not found")]
    NotFound(String),
    #[error("Process {pid} has already exited with code {code}")]
    AlreadyExited { pid: u32, code: i32 },
    #[error("stdin of process {0} is not available (spawned with stdinMode 'ignore')")]
    StdinIgnored(u32),
    #[error("stdin of process {0} is closed")]
    StdinClosed(u32),
    #[error("failed to write to stdin of process {pid}: {reason}")]
    StdinWrite { pid: u32, reason: String },
    #[error("the process manager is closed")]
    ManagerClosed,
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
            CoreError::NotFound(_) => "PROCESS_NOT_FOUND",
            CoreError::AlreadyExited { .. } => "PROCESS_ALREADY_EXITED",
            CoreError::StdinIgnored(_) => "PROCESS_STDIN_UNAVAILABLE",
            CoreError::StdinClosed(_) => "PROCESS_STDIN_CLOSED",
            CoreError::StdinWrite { .. } => "PROCESS_STDIN_WRITE_FAILED",
            CoreError::ManagerClosed => "PROCESS_MANAGER_CLOSED",
        }
    }

    pub fn invalid_option(name: &str, reason: impl Into<String>) -> Self {
        CoreError::InvalidOption { name: name.to_string(), reason: reason.into() }
    }
}

pub type CoreResult<T> = Result<T, CoreError>;
