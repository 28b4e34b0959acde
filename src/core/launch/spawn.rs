//! Launching one child: the leader of a new process group, with exactly the environment given,
//! limits set and (with containment) its cgroup joined before the program's first instruction,
//! and a pidfd from the clone itself, so that the root is signalled and waited for by identity.
//!
//! On Linux the child is made by `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)`, as glibc's
//! `posix_spawn` makes it: no copy of the Node process's page tables, however large its heap.
//! Between the clone and `execve` the child only makes system calls on values prepared before the
//! clone: reset signal handling, `setpgid`, join its cgroup, `chdir`, place its pipes, set limits,
//! exec. So whatever it does cannot race the placement: it has not started yet. Elsewhere (macOS)
//! std's `Command` spawns it, with limits in a `pre_exec`.
//!
//! A child on a terminal leads a new session instead (`setsid`, so it still leads its process
//! group), and the slave side of a pseudo-terminal opened here, sized before the spawn, becomes
//! its controlling terminal and its stdin, stdout and stderr. The master is our end: read, it is
//! the output; written, it is the keyboard.

use crate::core::error::{errno_name, CoreError, CoreResult};
use crate::core::launch::command::{Limits, SpawnSpec, StdinMode};
use crate::core::launch::pty::open_pty;
use crate::core::tree::cgroup::Cgroup;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

#[cfg(target_os = "linux")]
pub(crate) mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux as imp;
#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
use other as imp;

/// A child that runs, with its pipe ends.
pub(crate) struct Launched {
    pub pid: u32,
    /// None where the platform has no pidfd (then the root is waited for by pid).
    pub pidfd: Option<Arc<OwnedFd>>,
    /// The pipe of stdout, or the terminal's master for a child on a terminal.
    pub stdout: OwnedFd,
    /// None for a child on a terminal: its stderr is the terminal too.
    pub stderr: Option<OwnedFd>,
    pub stdin: Option<OwnedFd>,
    /// The terminal's master, for window-size changes and the foreground group.
    pub terminal: Option<OwnedFd>,
}

/// Where the child goes before it runs: its own cgroup (Linux's; elsewhere there is none to go
/// to). It is born in it (`clone3(CLONE_INTO_CGROUP)` on the cgroup's directory); where the
/// kernel cannot do that, it writes itself into the cgroup's `cgroup.procs` before it execs.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct Placement<'a> {
    pub cgroup: Option<&'a Cgroup>,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints.
    #[cfg(target_os = "linux")]
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // No pipe2 on macOS: close-on-exec is set just after. (std's spawn there also marks its own
    // descriptors this way; a fork from another thread in between would inherit the pair.)
    // SAFETY: as above, then fcntl on the two fresh descriptors.
    #[cfg(not(target_os = "linux"))]
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for fd in fds {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    // SAFETY: both are fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `/dev/null` for reading, opened once: every child without a stdin pipe gets it as fd 0 (an
/// open and a close less per launch; reading it has no state to share).
fn dev_null() -> std::io::Result<&'static OwnedFd> {
    static NULL: std::sync::OnceLock<OwnedFd> = std::sync::OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd);
    }
    let fd: OwnedFd = std::fs::File::open("/dev/null")?.into();
    Ok(NULL.get_or_init(|| fd))
}

pub(crate) fn launch(spec: &SpawnSpec, placement: Placement<'_>) -> CoreResult<Launched> {
    spec.validate()?;
    // A missing program in an unusable cwd is reported as the cwd: it is the first thing to fix.
    let program = spec.resolve_program().map_err(|e| cwd_error(spec).unwrap_or(e))?;
    let fail = |e: std::io::Error| spawn_error(spec, &program, e);
    if let Some(size) = &spec.pty {
        let (master, slave) = open_pty(size).map_err(fail)?;
        let (pid, pidfd) = imp::spawn(spec, &program, [&slave, &slave, &slave], true, placement).map_err(fail)?;
        // Our copy of the slave goes now: the master reads EIO (its end of file) once the
        // session's last holder has closed it.
        drop(slave);
        let stdin = match spec.stdin {
            StdinMode::Pipe => Some(master.try_clone().map_err(fail)?),
            StdinMode::Ignore => None,
        };
        let terminal = Some(master.try_clone().map_err(fail)?);
        return Ok(Launched { pid, pidfd: pidfd.map(Arc::new), stdout: master, stderr: None, stdin, terminal });
    }
    let (out_r, out_w) = pipe().map_err(fail)?;
    let (err_r, err_w) = pipe().map_err(fail)?;
    let (in_r, in_w) = match spec.stdin {
        StdinMode::Pipe => {
            let (r, w) = pipe().map_err(fail)?;
            (Some(r), Some(w))
        }
        StdinMode::Ignore => (None, None),
    };
    let stdin = match &in_r {
        Some(r) => r,
        None => dev_null().map_err(fail)?,
    };
    let (pid, pidfd) = imp::spawn(spec, &program, [stdin, &out_w, &err_w], false, placement).map_err(fail)?;
    Ok(Launched { pid, pidfd: pidfd.map(Arc::new), stdout: out_r, stderr: Some(err_r), stdin: in_w, terminal: None })
}

/// The working directory's own error, when it cannot be entered.
fn cwd_error(spec: &SpawnSpec) -> Option<CoreError> {
    crate::core::launch::command::validate_cwd(&spec.cwd).err()
}

fn spawn_error(spec: &SpawnSpec, program: &std::path::Path, e: std::io::Error) -> CoreError {
    let errno = e.raw_os_error();
    // The cwd is not checked before the spawn (the child's chdir is the check): when the spawn
    // failed and the cwd cannot be entered, the cwd is what failed, whatever the errno.
    if errno.is_some() {
        if let Some(cwd) = cwd_error(spec) {
            return cwd;
        }
    }
    let code = errno.map(errno_name).unwrap_or_else(|| "EUNKNOWN".into());
    CoreError::SpawnFailed { program: program.display().to_string(), reason: format!("{code}: {e}"), errno }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

/// Sets each given limit as both the soft and the hard limit, capped at the current hard limit
/// (an unprivileged process cannot raise it, and its current limit is then the stricter one).
/// Runs in the child before exec: system calls only.
fn set_limits(limits: &Limits) {
    for (resource, value) in [
        (libc::RLIMIT_AS, limits.address_space),
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_FSIZE, limits.file_size),
        (libc::RLIMIT_NPROC, limits.processes),
    ] {
        set_limit(resource as Resource, value);
    }
}

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
