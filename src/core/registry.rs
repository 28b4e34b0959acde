//! Every live process of this OS process, so that they can all be killed when Node goes away:
//! from `process.on('exit')`, from a worker's env cleanup hook (by owner), or on `close()`.

use crate::core::process::Process;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

fn table() -> &'static Mutex<HashMap<String, Weak<Process>>> {
    static T: OnceLock<Mutex<HashMap<String, Weak<Process>>>> = OnceLock::new();
    T.get_or_init(Default::default)
}

pub(crate) fn insert(p: &Arc<Process>) {
    table().lock().unwrap_or_else(|e| e.into_inner()).insert(p.id.clone(), Arc::downgrade(p));
}

pub(crate) fn remove(p: &Process) {
    table().lock().unwrap_or_else(|e| e.into_inner()).remove(&p.id);
}

fn live(filter: impl Fn(&Process) -> bool) -> Vec<Arc<Process>> {
    let t = table().lock().unwrap_or_else(|e| e.into_inner());
    t.values().filter_map(Weak::upgrade).filter(|p| filter(p)).collect()
}

/// SIGKILL to every live group owned by `owner` (a JS realm). Synchronous: safe at exit.
pub fn kill_owned(owner: u64) -> usize {
    let procs = live(|p| p.owner == owner);
    procs.iter().filter(|p| p.signal(libc::SIGKILL, true)).count()
}

pub fn kill_all() -> usize {
    let procs = live(|_| true);
    procs.iter().filter(|p| p.signal(libc::SIGKILL, true)).count()
}

pub fn live_count() -> usize {
    live(|_| true).len()
}
