//! The spawn elsewhere (macOS): std's `Command`, with the child's own process group (or a new
//! terminal) and its limits set in a `pre_exec`.

use super::{set_limits, Placement};
use crate::core::launch::command::{os_env, Limits, SpawnSpec};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;

pub(super) fn spawn(
    spec: &SpawnSpec,
    program: &Path,
    fds: [&OwnedFd; 3],
    session: bool,
    _placement: Placement<'_>,
) -> std::io::Result<(u32, Option<OwnedFd>)> {
    let stdio = |fd: &OwnedFd| -> std::io::Result<Stdio> { Ok(Stdio::from(fd.try_clone()?)) };
    let mut cmd = std::process::Command::new(program);
    cmd.arg0(&spec.argv[0])
        .args(&spec.argv[1..])
        .env_clear()
        .envs(os_env(&spec.env))
        .current_dir(&spec.cwd)
        .stdin(stdio(fds[0])?)
        .stdout(stdio(fds[1])?)
        .stderr(stdio(fds[2])?);
    if session {
        // SAFETY: the closure runs in the forked child and only makes system calls.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        cmd.process_group(0);
    }
    if spec.limits != Limits::default() {
        let limits = spec.limits;
        // SAFETY: the closure runs in the forked child and only makes system calls.
        unsafe {
            cmd.pre_exec(move || {
                set_limits(&limits);
                Ok(())
            });
        }
    }
    let child = cmd.spawn()?;
    // Waited for by pid (the reaper); std's handle is not needed.
    let pid = child.id();
    std::mem::forget(child);
    Ok((pid, None))
}
