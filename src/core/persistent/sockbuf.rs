//! A client's Unix socket as the supervisor tunes it. Its send buffer: a persistent sandbox's
//! supervisor streams output to its clients over one; with the default buffer (about 200 KiB
//! here) a flood crosses in steps of that size, each step waking the supervisor to write and the
//! client to read. And a second descriptor of it, which the supervisor reads into a buffer of its
//! own (Node's server hands out sockets that allocate a Buffer per read).

use std::io;
use std::os::fd::RawFd;

/// Asks for a send buffer of `bytes` on the socket `fd` (the kernel caps it at `wmem_max`) and
/// returns what the kernel then reports (Linux reports twice what it grants, for its bookkeeping).
pub fn set_send_buffer(fd: RawFd, bytes: usize) -> io::Result<usize> {
    let want: libc::c_int = bytes.min(libc::c_int::MAX as usize) as libc::c_int;
    // SAFETY: `want` is valid for the call and its size is given.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&want as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut got: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `got` and `len` are valid for the call; the kernel writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, (&mut got as *mut libc::c_int).cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(got.max(0) as usize)
}

/// A new descriptor of the open socket `fd`, closed on exec (`F_DUPFD_CLOEXEC`): the caller owns it.
pub fn duplicate(fd: RawFd) -> io::Result<RawFd> {
    // SAFETY: fcntl on an integer descriptor; a bad one is an error, not undefined behaviour.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(dup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_larger_send_buffer_is_granted_up_to_the_cap() {
        let (a, _b) = UnixStream::pair().unwrap();
        let small = set_send_buffer(a.as_raw_fd(), 8 * 1024).unwrap();
        let large = set_send_buffer(a.as_raw_fd(), 1024 * 1024).unwrap();
        assert!(large >= small, "{large} < {small}");
    }

    #[test]
    fn a_descriptor_that_is_no_socket_is_an_error() {
        assert!(set_send_buffer(-1, 1024).is_err());
        assert!(duplicate(-1).is_err());
    }

    #[test]
    fn a_duplicate_outlives_the_original_and_is_closed_on_exec() {
        use std::io::{Read, Write};
        use std::os::fd::FromRawFd;
        let (a, mut b) = UnixStream::pair().unwrap();
        let dup = duplicate(a.as_raw_fd()).unwrap();
        drop(a);
        // SAFETY: `dup` is a new descriptor that nothing else owns.
        let mut again = unsafe { UnixStream::from_raw_fd(dup) };
        // SAFETY: F_GETFD on a descriptor this test owns.
        let flags = unsafe { libc::fcntl(dup, libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        again.write_all(b"hello").unwrap();
        let mut got = [0u8; 5];
        b.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello");
    }
}
