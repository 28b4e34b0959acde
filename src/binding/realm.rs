//! A realm is one JS environment (the main thread or a worker) that loaded the addon. Its processes
//! are killed when it goes away: from `process.on('exit')` through `killRealm`, and from the env
//! cleanup hook, which also runs when a worker is `terminate()`d.

use super::error::ErrorArgs;
use super::settle::Settler;
use crate::core::{registry, watchdog};
use napi::bindgen_prelude::{Function, FunctionRef, Unknown};
use napi::Env;
use napi_derive::napi;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_REALM: AtomicU32 = AtomicU32::new(1);

/// What the addon keeps per JS environment.
pub(crate) struct Realm {
    /// `(code, message, osCode, errno) => Error`: builds the typed error of a failed call.
    pub error_factory: FunctionRef<ErrorArgs, Unknown<'static>>,
    /// Settles this realm's promises (see `settle`).
    pub settler: std::sync::Arc<Settler>,
    /// Promises of this realm not yet settled: while there is one, the settler keeps Node alive.
    pub pending: u32,
}

/// Registers the calling JS environment and returns its realm id. `errorFactory` builds the
/// typed JS error for a failed native call from its code and message. Starts the watchdog
/// process that kills our processes should Node die without running any hook (SIGKILL).
#[napi(
    ts_args_type = "errorFactory: (code: string, message: string, osCode: string | null, errno: number | null) => Error"
)]
pub fn register_realm(env: Env, error_factory: Function<ErrorArgs, Unknown<'static>>) -> napi::Result<u32> {
    let id = NEXT_REALM.fetch_add(1, Ordering::Relaxed);
    watchdog::start();
    let realm = Realm { error_factory: error_factory.create_ref()?, settler: Settler::new(&env)?, pending: 0 };
    env.set_instance_data(realm, (), |_| {})?;
    env.add_env_cleanup_hook(id, |id| {
        registry::retire_owned(id as u64);
        // Before the loop goes away: the runtime reads the lent pipes to their end.
        super::loop_reader::release_all();
    })?;
    Ok(id)
}

/// SIGKILL to every live process of a realm. Synchronous, for `process.on('exit')`. Returns how
/// many processes were reached.
#[napi]
pub fn kill_realm(realm: u32) -> u32 {
    registry::kill_owned(realm as u64) as u32
}

/// How many processes are alive (not yet done) in this OS process, all realms together.
#[napi]
pub fn live_process_count() -> u32 {
    registry::live_count() as u32
}

/// How many reads this JS thread's event loop has made of pipes lent to it: a stream that
/// floods a listener is read there (a diagnostic, for tests and benchmarks).
#[napi]
pub fn loop_read_count() -> f64 {
    super::loop_reader::read_count() as f64
}

/// How many launches the launcher thread has made, in this OS process: a launch right after an
/// end is made there when it stands by (a diagnostic, for tests and benchmarks).
#[napi]
pub fn launcher_launch_count() -> f64 {
    crate::core::launcher::launches() as f64
}

/// Removes the emptied cgroups kept for later launches; `close()` calls it so that a closed
/// manager leaves no cgroup behind.
#[napi]
pub fn trim_cgroups() {
    crate::core::cgroup::trim_pool();
}

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
    let c = crate::core::peer::peer_credentials(fd)
        .map_err(|e| napi::Error::from_reason(format!("cannot read the credentials of socket {fd}: {e}")))?;
    Ok(NativePeerCredentials { pid: c.pid, uid: c.uid, gid: c.gid })
}

/// Asks for a send buffer of `bytes` on the socket `fd` (capped by the kernel's `wmem_max`) and
/// returns the size the kernel then reports. A persistent sandbox's supervisor widens its
/// clients' sockets so that a flood crosses in fewer, larger steps.
#[napi]
pub fn set_socket_send_buffer(fd: i32, bytes: u32) -> napi::Result<u32> {
    crate::core::sockbuf::set_send_buffer(fd, bytes as usize)
        .map(|n| n.min(u32::MAX as usize) as u32)
        .map_err(|e| napi::Error::from_reason(format!("cannot set the send buffer of socket {fd}: {e}")))
}

/// Takes a lock on the open file `fd` without waiting (`flock`; exclusive, or shared): false when
/// another open file holds one that conflicts. A persistent sandbox's supervisor holds an
/// exclusive one on the lock file of its id for its whole life; the kernel lets go when it ends.
#[napi]
pub fn try_lock_file(fd: i32, exclusive: bool) -> napi::Result<bool> {
    crate::core::lockfile::try_lock(fd, exclusive)
        .map_err(|e| napi::Error::from_reason(format!("cannot lock file descriptor {fd}: {e}")))
}
