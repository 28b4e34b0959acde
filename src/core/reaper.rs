//! Waiting for the root to exit without a thread per child and without a SIGCHLD handler (Node's
//! libuv owns SIGCHLD): on Linux a pidfd becomes readable when the child exits, then we reap it
//! with `waitpid`. Elsewhere, or when no pidfd can be had, a blocking wait on the blocking pool.

use std::io;
use std::process::{Child, ExitStatus};

pub async fn wait(mut child: Child) -> io::Result<ExitStatus> {
    #[cfg(target_os = "linux")]
    if let Some(fd) = pidfd_open(child.id()) {
        // SAFETY: we own the pidfd; it lives inside `afd` for as long as it is registered.
        if let Ok(afd) = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        {
            loop {
                if let Some(st) = child.try_wait()? {
                    return Ok(st);
                }
                let mut guard = afd.readable().await?;
                guard.clear_ready();
            }
        }
    }
    tokio::task::spawn_blocking(move || child.wait()).await.unwrap_or_else(|e| Err(io::Error::other(e)))
}

#[cfg(target_os = "linux")]
fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // Flags must be 0 (or PIDFD_NONBLOCK): the kernel refuses anything else with EINVAL, and a
    // pidfd is always close-on-exec anyway. (Passing O_CLOEXEC here made every call fail, so every
    // child was waited for by a blocked thread of the blocking pool: 1,000 live children meant
    // about 512 threads and 300 MB of RSS, and children beyond the pool's 512 threads were reaped
    // late.)
    // SAFETY: pidfd_open returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0 as libc::c_uint) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd is a fresh descriptor we own.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_pidfd_can_be_opened_for_our_child() {
        // Without a pidfd every live child costs a blocked thread of the blocking pool.
        let mut child = std::process::Command::new("/bin/sleep").arg("5").spawn().expect("spawn sleep");
        let fd = super::pidfd_open(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(fd.is_some(), "pidfd_open failed: {}", std::io::Error::last_os_error());
    }
}
