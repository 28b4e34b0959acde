//! The root process by identity: waiting for its exit without a thread per child and without a
//! SIGCHLD handler (Node's libuv owns SIGCHLD), and signalling it even when it has left its
//! process group. On Linux a pidfd names the process itself, so neither can reach another process
//! that reused the pid; elsewhere, a blocking wait on the blocking pool and `kill(pid)`.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;

/// Waits for the root to exit and reaps it. `pidfd` (when the platform has one) makes the wait a
/// readiness event on the runtime's reactor; without one a blocking wait runs on the blocking pool.
pub async fn wait(pid: u32, pidfd: Option<Arc<OwnedFd>>) -> io::Result<ExitStatus> {
    if let Some(fd) = pidfd {
        // SAFETY: `fd` (an Arc) keeps the pidfd open for as long as it is registered.
        if let Ok(afd) = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        {
            // The registration reports a pidfd that is already readable (a root that exited before
            // it), so the first `waitpid` can wait for readiness: no empty poll per launch.
            loop {
                let mut guard = afd.readable().await?;
                if let Some(st) = try_wait(pid)? {
                    return Ok(st);
                }
                guard.clear_ready();
            }
        }
    }
    tokio::task::spawn_blocking(move || loop {
        let mut status = 0;
        // SAFETY: waits for our own child.
        let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        if r == pid as libc::pid_t {
            return Ok(ExitStatus::from_raw(status));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    })
    .await
    .unwrap_or_else(|e| Err(io::Error::other(e)))
}

/// Reaps `pid` if it has exited.
fn try_wait(pid: u32) -> io::Result<Option<ExitStatus>> {
    let mut status = 0;
    // SAFETY: waits for our own child without blocking.
    match unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) } {
        0 => Ok(None),
        r if r == pid as libc::pid_t => Ok(Some(ExitStatus::from_raw(status))),
        _ => Err(io::Error::last_os_error()),
    }
}

/// A pidfd for `pid`, or None where there is none (not Linux, a kernel before 5.3, no such pid).
#[cfg(target_os = "linux")]
pub fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // Flags must be 0 (or PIDFD_NONBLOCK): the kernel refuses anything else with EINVAL, and a
    // pidfd is always close-on-exec anyway. (Passing O_CLOEXEC here made every call fail, so every
    // child was waited for by a blocked thread of the blocking pool.)
    // SAFETY: pidfd_open returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0 as libc::c_uint) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd is a fresh descriptor we own.
    Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(not(target_os = "linux"))]
pub fn pidfd_open(_pid: u32) -> Option<OwnedFd> {
    None
}

/// Sends `signal` to the process behind `pidfd`. False once it has been reaped (ESRCH), never a
/// signal to another process.
#[cfg(target_os = "linux")]
pub fn pidfd_signal(pidfd: &OwnedFd, signal: i32) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: plain syscall on a descriptor we own; a null siginfo means "as kill() would".
    unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), signal, std::ptr::null::<libc::siginfo_t>(), 0)
            == 0
    }
}

#[cfg(not(target_os = "linux"))]
pub fn pidfd_signal(_pidfd: &OwnedFd, _signal: i32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_pidfd_can_be_opened_for_our_child_and_signals_it() {
        // Without a pidfd every live child costs a blocked thread of the blocking pool.
        let mut child = std::process::Command::new("/bin/sleep").arg("5").spawn().expect("spawn sleep");
        let fd = super::pidfd_open(child.id());
        assert!(fd.is_some(), "pidfd_open failed: {}", std::io::Error::last_os_error());
        let fd = fd.unwrap();
        assert!(super::pidfd_signal(&fd, libc::SIGKILL));
        let st = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), Some(libc::SIGKILL));
        assert!(!super::pidfd_signal(&fd, libc::SIGKILL), "a reaped process is not signalled");
    }
}
