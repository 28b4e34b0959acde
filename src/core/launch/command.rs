//! What to run and how: validation of argv, env and cwd (all checked before anything is launched),
//! and resolution of a bare program name against the *child's* PATH, done here so that std keeps
//! its `posix_spawn` fast path (it falls back to fork + exec when it has to search PATH itself for a
//! child whose env sets PATH).

use crate::core::error::{CoreError, CoreResult};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StdinMode {
    #[default]
    Pipe,
    Ignore,
}

/// Per-process resource limits, set with `setrlimit` in the child before exec, so they hold from
/// its first instruction. A process with limits is spawned by fork + exec (a `pre_exec` closure
/// leaves the posix_spawn fast path); one without keeps the fast path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    pub address_space: Option<u64>,
    pub cpu_seconds: Option<u64>,
    pub open_files: Option<u64>,
    pub file_size: Option<u64>,
    pub processes: Option<u64>,
}

/// How the tree of a process is kept together, so that it can be signalled and seen to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Containment {
    /// Its process group: a descendant that leaves the group is out of reach.
    #[default]
    ProcessGroup,
    /// A cgroup of its own (when this Node process has one to give): every descendant.
    Cgroup,
}

impl Containment {
    /// The name JS gives it (a manager's `containment` option, resolved).
    pub fn name(self) -> &'static str {
        match self {
            Containment::ProcessGroup => "process-group",
            Containment::Cgroup => "cgroup",
        }
    }
}

/// A pseudo-terminal for the child: its window size and the `TERM` it advertises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pty {
    pub cols: u16,
    pub rows: u16,
    pub term: String,
}

#[derive(Debug, Clone, Default)]
pub struct SpawnSpec {
    /// argv; `argv[0]` is the program.
    pub argv: Vec<String>,
    /// The complete environment of the child (nothing is inherited implicitly).
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub stdin: StdinMode,
    /// Lifetime in milliseconds; on expiry SIGTERM to the group, SIGKILL after `grace_ms`.
    pub timeout_ms: Option<u64>,
    pub grace_ms: u64,
    /// Bytes of decoded text kept per stream for the Mastra view; `None` keeps all.
    pub retain_bytes: Option<usize>,
    pub log_max_bytes: usize,
    pub log_max_events: usize,
    pub limits: Limits,
    /// How the tree is kept together.
    pub containment: Containment,
    /// Run on a terminal of its own: the child leads a new session whose controlling terminal is
    /// its stdin, stdout and stderr; the terminal's output is the process's stdout.
    pub pty: Option<Pty>,
    /// Keep the terminal's screen (for snapshots): a terminal emulator fed with every byte, which
    /// costs more CPU per byte than the rest of the output path, so only the Terminals API has it.
    pub screen: bool,
    /// Run again when a run ends, as the policy says (a service); `None` runs once.
    pub restart: Option<crate::core::launch::restart::RestartPolicy>,
    /// What tells that each run is ready, and still healthy; none for most.
    pub probes: crate::core::launch::probes::Probes,
    /// How `close()`, a sandbox's stop and `stop()` end it; `None`: SIGKILL at once.
    pub shutdown: Option<crate::core::launch::probes::Shutdown>,
    /// Where its log is also written, rotated by size (the manager's `logDirectory`).
    pub log_files: Option<crate::core::output::disk::LogFiles>,
}

pub const DEFAULT_GRACE_MS: u64 = 1000;
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

impl SpawnSpec {
    pub fn new(argv: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            argv,
            cwd: cwd.into(),
            grace_ms: DEFAULT_GRACE_MS,
            retain_bytes: Some(1024 * 1024),
            log_max_bytes: crate::core::output::log::DEFAULT_MAX_BYTES,
            log_max_events: crate::core::output::log::DEFAULT_MAX_EVENTS,
            ..Default::default()
        }
    }

    /// The Mastra form: `/bin/sh -c <command>` (by absolute path, for the fast spawn path), for
    /// the core's tests (launches are made by `request`).
    #[cfg(test)]
    pub fn shell(command: &str, cwd: impl Into<PathBuf>) -> Self {
        Self::new(vec!["/bin/sh".into(), "-c".into(), command.into()], cwd)
    }

    /// The checks that need no system call. Whether the working directory can be entered is
    /// found by the spawn itself (the child's `chdir`), and `spawn` names the cwd then: a check
    /// here would cost two system calls on every launch for what the launch finds anyway.
    pub fn validate(&self) -> CoreResult<()> {
        validate_argv(&self.argv)?;
        validate_env(&self.env)?;
        if self.cwd.as_os_str().as_bytes().contains(&0) {
            return Err(CoreError::InvalidCwd {
                path: self.cwd.display().to_string(),
                reason: "the path contains a NUL byte".into(),
            });
        }
        Ok(())
    }

    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The program to hand to the OS: argv[0] when it has a slash, else the first executable
    /// match on the child's PATH.
    pub fn resolve_program(&self) -> CoreResult<PathBuf> {
        let name = &self.argv[0];
        if name.contains('/') {
            return Ok(PathBuf::from(name));
        }
        let path = self.env_var("PATH").unwrap_or(DEFAULT_PATH);
        for dir in path.split(':') {
            let dir = if dir.is_empty() { Path::new(".") } else { Path::new(dir) };
            let dir = if dir.is_relative() { self.cwd.join(dir) } else { dir.to_path_buf() };
            let candidate = dir.join(name);
            if is_executable_file(&candidate) {
                return Ok(candidate);
            }
        }
        Err(CoreError::SpawnFailed {
            program: name.clone(),
            reason: format!("{name}: command not found in PATH"),
            errno: Some(libc::ENOENT),
        })
    }
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
}

pub fn validate_argv(argv: &[String]) -> CoreResult<()> {
    let Some(first) = argv.first() else {
        return Err(CoreError::InvalidCommand("the command is empty".into()));
    };
    if first.is_empty() {
        return Err(CoreError::InvalidCommand("command[0] must be a non-empty string".into()));
    }
    if let Some(i) = argv.iter().position(|a| a.contains('\0')) {
        return Err(CoreError::InvalidCommand(format!("argument {i} contains a NUL byte")));
    }
    Ok(())
}

pub fn validate_env(env: &[(String, String)]) -> CoreResult<()> {
    for (k, v) in env {
        if k.is_empty() {
            return Err(CoreError::InvalidEnv("an environment variable name is empty".into()));
        }
        if k.contains('=') {
            return Err(CoreError::InvalidEnv(format!("the name {k:?} contains '='")));
        }
        if k.contains('\0') {
            return Err(CoreError::InvalidEnv(format!("the name {k:?} contains a NUL byte")));
        }
        if v.contains('\0') {
            return Err(CoreError::InvalidEnv(format!("the value of {k} contains a NUL byte")));
        }
    }
    Ok(())
}

pub fn validate_cwd(cwd: &Path) -> CoreResult<()> {
    let err = |reason: String| CoreError::InvalidCwd { path: cwd.display().to_string(), reason };
    if cwd.as_os_str().as_bytes().contains(&0) {
        return Err(err("the path contains a NUL byte".into()));
    }
    match std::fs::metadata(cwd) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(err(format!("ENOENT: no such file or directory, cwd {}", cwd.display())))
        }
        Err(e) => Err(err(e.to_string())),
        Ok(m) if !m.is_dir() => Err(err("ENOTDIR: not a directory".into())),
        Ok(_) => {
            let c = std::ffi::CString::new(cwd.as_os_str().as_bytes()).map_err(|e| err(e.to_string()))?;
            // SAFETY: `c` is a valid NUL-terminated path.
            if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
                return Err(err("EACCES: the directory cannot be entered".into()));
            }
            Ok(())
        }
    }
}

pub fn os_env(env: &[(String, String)]) -> Vec<(OsString, OsString)> {
    env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_empty_and_nul_commands() {
        assert!(validate_argv(&[]).is_err());
        assert!(validate_argv(&["".into()]).is_err());
        assert!(validate_argv(&["echo".into(), "a\0b".into()]).is_err());
        assert!(validate_argv(&["echo".into(), "".into()]).is_ok(), "empty arguments are kept");
    }

    #[test]
    fn refuses_bad_env_names_and_values() {
        let e = |k: &str, v: &str| validate_env(&[(k.into(), v.into())]);
        assert_eq!(e("", "x").unwrap_err().code(), "INVALID_PROCESS_ENVIRONMENT");
        assert!(e("A=B", "x").is_err());
        assert!(e("A", "x\0").is_err());
        assert!(e("A", "").is_ok());
    }

    #[test]
    fn cwd_must_be_an_existing_directory() {
        assert!(validate_cwd(Path::new("/definitely/not/here")).unwrap_err().to_string().contains("ENOENT"));
        assert!(validate_cwd(Path::new("/bin/sh")).unwrap_err().to_string().contains("ENOTDIR"));
        assert!(validate_cwd(Path::new("/tmp")).is_ok());
    }

    #[test]
    fn resolves_bare_names_on_the_childs_path() {
        let mut s = SpawnSpec::new(vec!["sh".into()], "/");
        s.env = vec![("PATH".into(), "/nonexistent:/bin".into())];
        assert_eq!(s.resolve_program().unwrap(), PathBuf::from("/bin/sh"));
        s.env = vec![("PATH".into(), "/nonexistent".into())];
        assert_eq!(s.resolve_program().unwrap_err().code(), "PROCESS_SPAWN_FAILED");
    }
}
