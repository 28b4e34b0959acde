//! A realm is one JS environment (the main thread or a worker) that loaded the addon. Its processes
//! are killed when it goes away: from `process.on('exit')` through `killRealm`, and from the env
//! cleanup hook, which also runs when a worker is `terminate()`d.

use super::loop_reader;
use super::settler::Settler;
use crate::core::{supervise::registry, tree::watchdog};
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, Unknown};
use napi::Env;
use napi_derive::napi;
use std::sync::atomic::{AtomicU32, Ordering};

/// The error factory's arguments: code, message, and for a failed spawn the OS error's name and
/// number (see `error`).
pub(crate) type ErrorArgs = FnArgs<(String, String, Option<String>, Option<i32>)>;

static NEXT_REALM: AtomicU32 = AtomicU32::new(1);

/// What the addon keeps per JS environment.
pub(crate) struct Realm {
    /// `(code, message, osCode, errno) => Error`: builds the typed error of a failed call.
    pub error_factory: FunctionRef<ErrorArgs, Unknown<'static>>,
    /// Settles this realm's promises (see `settle` and `settler`).
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
        loop_reader::release_all();
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

/// Removes the emptied cgroups kept for later launches; `close()` calls it so that a closed
/// manager leaves no cgroup behind.
#[napi]
pub fn trim_cgroups() {
    crate::core::tree::cgroup::trim_pool();
}
