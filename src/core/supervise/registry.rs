//! Every live process of this OS process, so that they can all be killed when Node goes away:
//! from `process.on('exit')`, from a worker's env cleanup hook (by owner), or on `close()`.
//! It holds them weakly and by what they can do (`Member`), not by type.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// What the registry needs of a process.
pub trait Member: Send + Sync {
    /// The JS realm that started it.
    fn owner(&self) -> u64;
    /// SIGKILL to all of it; false when nothing was left to reach.
    fn kill(&self) -> bool;
    /// Its owner is gone: SIGKILL to all of it, and nothing waits for the owner's consumers
    /// (listeners, readers) any more, so that its output is read to the end.
    fn retire(&self) -> bool;
}

#[derive(Default)]
struct Table {
    members: HashMap<String, Weak<dyn Member>>,
    /// Owners that are gone (a terminated worker's realm): a launch of theirs that completes
    /// afterwards is killed as it is listed, or it would run with nobody to end it.
    gone: HashSet<u64>,
}

fn table() -> &'static Mutex<Table> {
    static T: OnceLock<Mutex<Table>> = OnceLock::new();
    T.get_or_init(Default::default)
}

pub(crate) fn insert(id: &str, member: Weak<dyn Member>) {
    let orphan = {
        let mut t = table().lock().unwrap_or_else(|e| e.into_inner());
        t.members.insert(id.to_string(), member.clone());
        // Most Node processes never lose a worker: then a launch pays nothing for this check.
        if t.gone.is_empty() {
            None
        } else {
            member.upgrade().filter(|m| t.gone.contains(&m.owner()))
        }
    };
    if let Some(m) = orphan {
        m.retire();
    }
}

/// Returns how many live processes are still listed, counted up to `up_to`: an entry whose
/// process is gone (its supervision dropped with a runtime that shut down) does not count.
pub(crate) fn remove(id: &str, up_to: usize) -> usize {
    let mut t = table().lock().unwrap_or_else(|e| e.into_inner());
    t.members.remove(id);
    t.members.values().filter(|m| m.strong_count() > 0).take(up_to).count()
}

fn live(filter: impl Fn(&dyn Member) -> bool) -> Vec<Arc<dyn Member>> {
    let t = table().lock().unwrap_or_else(|e| e.into_inner());
    t.members.values().filter_map(Weak::upgrade).filter(|m| filter(m.as_ref())).collect()
}

/// SIGKILL to every live process owned by `owner` (a JS realm). Synchronous: safe at exit.
pub fn kill_owned(owner: u64) -> usize {
    live(|m| m.owner() == owner).iter().filter(|m| m.kill()).count()
}

/// `owner` is gone for good: SIGKILL to its live processes, and to those of its launches still
/// under way, as they complete. Returns how many live processes were reached.
pub fn retire_owned(owner: u64) -> usize {
    table().lock().unwrap_or_else(|e| e.into_inner()).gone.insert(owner);
    live(|m| m.owner() == owner).iter().filter(|m| m.retire()).count()
}

/// How many processes are live, counted up to `up_to`.
pub fn live_up_to(up_to: usize) -> usize {
    let t = table().lock().unwrap_or_else(|e| e.into_inner());
    t.members.values().filter(|m| m.strong_count() > 0).take(up_to).count()
}

pub fn live_count() -> usize {
    live(|_| true).len()
}
