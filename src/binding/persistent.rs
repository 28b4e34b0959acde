//! What a persistent sandbox's supervisor (`lib/persistent/`) asks of the kernel and the core:
//! who is at the other end of its socket, a lock on the lock file of its id, and a launcher tuned
//! for launches that come over the socket.

use crate::core::launch::launcher;
use crate::core::persistent::{credentials, lockfile, sockbuf};
use napi_derive::napi;

/// The credentials of the process at the other end of a connected Unix socket.
#[napi(object, object_from_js = false)]
pub struct NativePeerCredentials {
    /// Its pid where the platform reports it (Linux), else absent.
    pub pid: Option<i32>,
    pub uid: u32,
    pub gid: u32,
}

/// The kernel's word on who is at the other end of the Unix socket `fd` (`SO_PEERCRED`, or
/// `getpeereid` on macOS). A persistent sandbox's supervisor refuses every uid but its own.
#[napi]
pub fn peer_credentials(fd: i32) -> napi::Result<NativePeerCredentials> {
    let c = credentials::peer_credentials(fd)
        .map_err(|e| napi::Error::from_reason(format!("cannot read the credentials of socket {fd}: {e}")))?;
    Ok(NativePeerCredentials { pid: c.pid, uid: c.uid, gid: c.gid })
}

/// Takes a lock on the open file `fd` without waiting (`flock`; exclusive, or shared): false when
/// another open file holds one that conflicts. A persistent sandbox's supervisor holds an
/// exclusive one on the lock file of its id for its whole life; the kernel lets go when it ends.
#[napi]
pub fn try_lock_file(fd: i32, exclusive: bool) -> napi::Result<bool> {
    lockfile::try_lock(fd, exclusive)
        .map_err(|e| napi::Error::from_reason(format!("cannot lock file descriptor {fd}: {e}")))
}

/// Asks for a send buffer of `bytes` on the socket `fd` (capped by the kernel's `wmem_max`) and
/// returns the size the kernel then reports. A persistent sandbox's supervisor widens its
/// clients' sockets so that a flood crosses in fewer, larger steps.
#[napi]
pub fn set_socket_send_buffer(fd: i32, bytes: u32) -> napi::Result<u32> {
    sockbuf::set_send_buffer(fd, bytes as usize)
        .map(|n| n.min(u32::MAX as usize) as u32)
        .map_err(|e| napi::Error::from_reason(format!("cannot set the send buffer of socket {fd}: {e}")))
}

/// A second descriptor of the socket `fd`, closed on exec, for a `net.Socket` of its own: the
/// supervisor reads each client into one buffer of its own (a socket of Node's server allocates
/// a Buffer per read, garbage that only V8's next collection frees, 64 MiB of it at times).
#[napi]
pub fn duplicate_socket(fd: i32) -> napi::Result<i32> {
    sockbuf::duplicate(fd).map_err(|e| napi::Error::from_reason(format!("cannot duplicate socket {fd}: {e}")))
}

/// Whether this process's launcher stays awake for a moment after a process ends, ready for a
/// launch that follows at once (on by default). A persistent sandbox's supervisor turns it off:
/// its next launch comes over the socket, later than the stand-by lasts, and the stand-by's
/// naps took a CPU from the threads carrying it.
#[napi]
pub fn set_launch_stand_by(enabled: bool) {
    launcher::set_stand_by(enabled);
}

/// Whether this process's launches run on the JS thread that asks for them while none of its
/// processes is live (off by default). A persistent sandbox's supervisor
/// turns it on: its JS thread serves the socket and no caller waits on it, and a launch made
/// there costs two wake-ups between threads less.
#[napi]
pub fn set_inline_launches(enabled: bool) {
    launcher::set_inline(enabled);
}
