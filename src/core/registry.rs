//! Every live process of this OS process, so that they can all be killed when Node goes away:
//! from `process.on('exit')`, from a worker's env cleanup hook (by owner), or on `close()`.
//! It holds them weakly and by what they can do (`Member`), not by type.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// What the registry needs of a process.
pub trait Member: Send + Sync {
    /// The JS realm that started it.
    fn owner(&self) -> u64;
    /// SIGKILL to all of it; false when nothing was left to reach.
    fn kill(&self) -> bool;
}

type Table = HashMap<String, Weak<dyn Member>>;

fn table() -> &'static Mutex<Table> {
    static T: OnceLock<Mutex<Table>> = OnceLock::new();
    T.get_or_init(Default::default)
}

pub(crate) fn insert(id: &str, member: Weak<dyn Member>) {
    table().lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string(), member);
}

pub(crate) fn remove(id: &str) {
    table().lock().unwrap_or_else(|e| e.into_inner()).remove(id);
}

fn live(filter: impl Fn(&dyn Member) -> bool) -> Vec<Arc<dyn Member>> {
    let t = table().lock().unwrap_or_else(|e| e.into_inner());
    t.values().filter_map(Weak::upgrade).filter(|m| filter(m.as_ref())).collect()
}

/// SIGKILL to every live process owned by `owner` (a JS realm). Synchronous: safe at exit.
pub fn kill_owned(owner: u64) -> usize {
    live(|m| m.owner() == owner).iter().filter(|m| m.kill()).count()
}

pub fn live_count() -> usize {
    live(|_| true).len()
}
