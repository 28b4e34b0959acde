//! Launching one child: the leader of a new process group, with exactly the environment given,
//! limits set before exec, and a pidfd opened at once so that the root can be signalled and
//! waited for by identity (never by a pid number that could be reused).

use crate::core::command::{os_env, Limits, SpawnSpec, StdinMode};
use crate::core::error::{errno_name, CoreError, CoreResult};
use crate::core::reaper;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::Arc;

/// A child that runs, with its pipe ends.
pub(crate) struct Launched {
    pub child: Child,
    pub pid: u32,
    /// None where the platform has no pidfd (then the root is signalled by pid until reaped).
    pub pidfd: Option<Arc<OwnedFd>>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub stdin: Option<OwnedFd>,
}

pub(crate) fn launch(spec: &SpawnSpec) -> CoreResult<Launched> {
    spec.validate()?;
    let program = spec.resolve_program()?;
    let mut cmd = std::process::Command::new(&program);
    cmd.arg0(&spec.argv[0])
        .args(&spec.argv[1..])
        .env_clear()
        .envs(os_env(&spec.env))
        .current_dir(&spec.cwd)
        .process_group(0)
        .stdin(match spec.stdin {
            StdinMode::Pipe => Stdio::piped(),
            StdinMode::Ignore => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if spec.limits != Limits::default() {
        let limits = spec.limits;
        // Limits are set in the child between fork and exec, so they hold from the program's
        // first instruction and bind everything it forks. Set with prlimit() after the spawn,
        // the child ran unlimited for about a millisecond: long enough for a shell to open
        // descriptors past `openFiles` (seen in 2 runs out of 3), and whatever it forked then was
        // never limited. A pre_exec closure costs the posix_spawn fast path (std forks and
        // execs), so only the processes that ask for limits pay for it, off the JS thread.
        // SAFETY: the closure runs in the forked child and only makes getrlimit/setrlimit
        // syscalls, which are async-signal-safe; it neither allocates nor takes a lock.
        unsafe {
            cmd.pre_exec(move || {
                set_limits(&limits);
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| spawn_error(spec, &program, e))?;
    let pid = child.id();
    let pidfd = reaper::pidfd_open(pid).map(Arc::new);
    Ok(Launched {
        pid,
        pidfd,
        stdout: child.stdout.take().expect("stdout is piped").into(),
        stderr: child.stderr.take().expect("stderr is piped").into(),
        stdin: child.stdin.take().map(Into::into),
        child,
    })
}

fn spawn_error(spec: &SpawnSpec, program: &std::path::Path, e: std::io::Error) -> CoreError {
    let errno = e.raw_os_error();
    // The cwd is checked before the spawn, but it can vanish in between: then ENOENT is the cwd's.
    if errno == Some(libc::ENOENT) && crate::core::command::validate_cwd(&spec.cwd).is_err() {
        return CoreError::InvalidCwd {
            path: spec.cwd.display().to_string(),
            reason: format!("ENOENT: no such file or directory, cwd {}", spec.cwd.display()),
        };
    }
    let code = errno.map(errno_name).unwrap_or_else(|| "EUNKNOWN".into());
    CoreError::SpawnFailed { program: program.display().to_string(), reason: format!("{code}: {e}"), errno }
}

/// Sets each given limit as both the soft and the hard limit, capped at the current hard limit
/// (an unprivileged process cannot raise it, and its current limit is then the stricter one).
/// Runs in the forked child before exec: syscalls only.
fn set_limits(limits: &Limits) {
    set_limit(libc::RLIMIT_AS, limits.address_space);
    set_limit(libc::RLIMIT_CPU, limits.cpu_seconds);
    set_limit(libc::RLIMIT_NOFILE, limits.open_files);
    set_limit(libc::RLIMIT_FSIZE, limits.file_size);
    set_limit(libc::RLIMIT_NPROC, limits.processes);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

fn set_limit(resource: Resource, value: Option<u64>) {
    let Some(v) = value else { return };
    let v = v as libc::rlim_t;
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit on the calling process with valid pointers.
    unsafe {
        let max = if libc::getrlimit(resource, &mut old) == 0 { old.rlim_max.min(v) } else { v };
        libc::setrlimit(resource, &libc::rlimit { rlim_cur: max, rlim_max: max });
    }
}
