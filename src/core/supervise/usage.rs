//! What a running process uses now, for a person watching it (`procvisor ps`): its CPU time and
//! memory peak are the process's own (`process`); the memory in use now is read here, at each ask.

use crate::core::supervise::process::Process;
use crate::core::tree::cgroup::Cgroup;

impl Process {
    /// The memory it uses now, in bytes, while it runs: the whole tree's from its cgroup, else
    /// (contained by process group, or without the memory controller) its root's resident set.
    pub fn memory_bytes(&self) -> Option<f64> {
        let between_runs = {
            let st = self.state.borrow();
            st.backoff || st.root_exit.is_some()
        };
        if between_runs {
            return None;
        }
        let tree = self.cgroup.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(Cgroup::memory_bytes);
        tree.or_else(|| {
            // statm's second field: resident pages.
            let statm = std::fs::read_to_string(format!("/proc/{}/statm", self.pid())).ok()?;
            let pages: f64 = statm.split_whitespace().nth(1)?.parse().ok()?;
            // SAFETY: sysconf is a plain query.
            Some(pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as f64)
        })
    }
}
