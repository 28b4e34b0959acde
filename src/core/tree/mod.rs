//! A process tree as the OS has it: the process group its root heads and the signals that reach
//! it (`group`), its cgroup when it is contained in one and the wait for that cgroup to empty
//! (`cgroup`, `cgroup_watch`), its root by identity (`reaper`), when the group is empty
//! (`liveness`), and the watchdog process that kills every tree still listed should Node die
//! (`watchdog`).
//!
//! May use: `error`, `value`. Nothing here knows of launches, output or handles.

pub mod cgroup;
pub mod cgroup_watch;
pub mod group;
pub mod liveness;
pub mod reaper;
pub mod watchdog;
