//! The kernel's send buffer of a Unix socket. A persistent sandbox's supervisor streams output to
//! its clients over one; with the default buffer (about 200 KiB here) a flood crosses in steps of
//! that size, each step waking the supervisor to write and the client to read.

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
    }
}
