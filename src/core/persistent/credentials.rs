//! Who is at the other end of a Unix socket, as the kernel tells it. A persistent sandbox's
//! supervisor serves only its own user: the socket's directory already keeps others out, and the
//! credentials of whoever connects are checked as well, so a directory opened up by mistake lets nobody in.

use std::io;
use std::os::fd::RawFd;

/// The credentials of the process at the other end of a connected Unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCredentials {
    /// The pid at the other end, where the platform reports it (Linux).
    pub pid: Option<i32>,
    pub uid: u32,
    pub gid: u32,
}

/// `SO_PEERCRED` of the socket `fd` (Linux).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer_credentials(fd: RawFd) -> io::Result<PeerCredentials> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for the call; the kernel writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(PeerCredentials { pid: Some(cred.pid), uid: cred.uid, gid: cred.gid })
}

/// `getpeereid` of the socket `fd` (macOS and the BSDs, which report no pid this way).
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
pub fn peer_credentials(fd: RawFd) -> io::Result<PeerCredentials> {
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: plain out-parameters.
    if unsafe { libc::getpeereid(fd, &mut uid, &mut gid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(PeerCredentials { pid: None, uid, gid })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_socket_pair_peer_is_this_process() {
        let (a, _b) = UnixStream::pair().unwrap();
        let cred = peer_credentials(a.as_raw_fd()).unwrap();
        // SAFETY: plain queries.
        assert_eq!((cred.uid, cred.gid), unsafe { (libc::geteuid(), libc::getegid()) });
        #[cfg(target_os = "linux")]
        assert_eq!(cred.pid, Some(std::process::id() as i32));
    }

    #[test]
    fn a_descriptor_that_is_no_socket_is_an_error() {
        let f = std::fs::File::open("/dev/null").unwrap();
        assert!(peer_credentials(f.as_raw_fd()).is_err());
    }
}
