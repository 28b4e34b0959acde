//! A realm is one JS environment (the main thread or a worker) that loaded the addon. Its processes
//! are killed when it goes away: from `process.on('exit')` through `killRealm`, and from the env
//! cleanup hook, which also runs when a worker is `terminate()`d.

use crate::core::{registry, watchdog};
use napi::Env;
use napi_derive::napi;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_REALM: AtomicU32 = AtomicU32::new(1);

/// Registers the calling JS environment and returns its realm id. Starts the watchdog process
/// that kills our groups should Node die without running any hook (SIGKILL).
#[napi]
pub fn register_realm(env: Env) -> napi::Result<u32> {
    let id = NEXT_REALM.fetch_add(1, Ordering::Relaxed);
    watchdog::start();
    env.add_env_cleanup_hook(id, |id| {
        registry::kill_owned(id as u64);
    })?;
    Ok(id)
}

/// SIGKILL to every live process group of a realm. Synchronous, for `process.on('exit')`.
/// Returns how many groups were signalled.
#[napi]
pub fn kill_realm(realm: u32) -> u32 {
    registry::kill_owned(realm as u64) as u32
}

/// How many processes are alive (not yet done) in this OS process, all realms together.
#[napi]
pub fn live_process_count() -> u32 {
    registry::live_count() as u32
}
