//! Whole-file advisory locks (`flock`). A persistent sandbox's supervisor holds one on the lock
//! file of its id for its whole life, so that an id has one supervisor at a time even when its
//! socket file is deleted; the kernel lets go of the lock when the supervisor exits or is killed.

use std::io;
use std::os::fd::RawFd;

/// Takes an exclusive (or shared) lock on the open file `fd` without waiting. `Ok(false)` when
/// another open file description holds a lock that conflicts. The lock belongs to the open file
/// description: it lasts until every descriptor of it is closed.
pub fn try_lock(fd: RawFd, exclusive: bool) -> io::Result<bool> {
    let op = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH } | libc::LOCK_NB;
    loop {
        // SAFETY: flock on a descriptor number; no memory is passed. A closed or foreign number is
        // an error (EBADF), not undefined behaviour.
        if unsafe { libc::flock(fd, op) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn temp_file(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("procvisor-lockfile-{}-{name}", std::process::id()));
        std::fs::write(&p, b"").unwrap();
        p
    }

    #[test]
    fn one_exclusive_holder_at_a_time_until_it_closes() {
        let p = temp_file("exclusive");
        let a = std::fs::File::open(&p).unwrap();
        let b = std::fs::File::open(&p).unwrap();
        assert!(try_lock(a.as_raw_fd(), true).unwrap());
        assert!(!try_lock(b.as_raw_fd(), true).unwrap());
        assert!(!try_lock(b.as_raw_fd(), false).unwrap(), "a shared lock conflicts with the exclusive one");
        drop(a);
        assert!(try_lock(b.as_raw_fd(), true).unwrap(), "closing the holder let go");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn shared_locks_coexist_and_keep_out_an_exclusive_one() {
        let p = temp_file("shared");
        let a = std::fs::File::open(&p).unwrap();
        let b = std::fs::File::open(&p).unwrap();
        let c = std::fs::File::open(&p).unwrap();
        assert!(try_lock(a.as_raw_fd(), false).unwrap());
        assert!(try_lock(b.as_raw_fd(), false).unwrap());
        assert!(!try_lock(c.as_raw_fd(), true).unwrap());
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_descriptor_that_is_not_open_is_an_error() {
        assert_eq!(try_lock(-1, true).unwrap_err().raw_os_error(), Some(libc::EBADF));
    }
}
