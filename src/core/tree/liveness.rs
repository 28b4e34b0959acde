//! When does a process group become empty? Once the root has exited, the process is not over
//! until no live member is left in its group (zombies waiting for another reaper do not count:
//! they run no code and hold no port). The kernel has no event for "group empty", so on Linux:
//!
//! - one shared scan of `/proc` finds the live members of every group that asks at that moment
//!   (requests that arrive during a scan are served together by the next one), and opens a pidfd
//!   for each member;
//! - the group then waits for those pidfds to become readable (the member exited), which costs
//!   nothing while they live, and scans again only when all of them are gone, since a member may
//!   have forked new ones;
//! - members still alive are re-checked now and then, backing off to every `RECHECK` (one
//!   `getpgid` each), because one may have left the group (`setsid`, `setpgid`) and is then no longer
//!   ours to wait for.
//!
//! So a group whose grandchild sleeps for an hour costs one scan and one descriptor, not a scan of
//! every process every few milliseconds. Where `/proc` or pidfds are missing (macOS), the group is
//! polled with `killpg(pgid, 0)` at a slow, bounded rate instead.

use crate::core::tree::group::ProcessGroup;
use std::time::Duration;

/// How often, at most, a member that is still alive is checked for having left the group. The
/// checks start at `FIRST_RECHECK` and back off to this: a member that leaves at once (a shell's
/// `setsid cmd &`, seen by the scan before its `setsid`) is let go quickly, and one that lives on
/// costs one `getpgid` call every few seconds.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const RECHECK: Duration = Duration::from_secs(5);
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const FIRST_RECHECK: Duration = Duration::from_millis(20);

/// Resolves once `group` has no live member. With `cgroup` (the directory of the cgroup that
/// contains the whole tree), the members are looked for among the cgroup's own, with no scan of
/// `/proc` at all.
pub async fn wait_empty(group: ProcessGroup, cgroup: Option<std::path::PathBuf>) {
    #[cfg(target_os = "linux")]
    if linux::wait_empty(group, cgroup).await {
        return;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cgroup;
    poll_empty(group).await
}

/// The fallback: `killpg(pgid, 0)` with a backoff up to one second (zombies count as members
/// here, which only delays the end until their parent reaps them).
async fn poll_empty(group: ProcessGroup) {
    let mut pause = Duration::from_millis(5);
    while group.exists() {
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{FIRST_RECHECK, RECHECK};
    use crate::core::tree::group::ProcessGroup;
    use crate::core::tree::reaper::pidfd_open;
    use std::collections::HashMap;
    use std::os::fd::OwnedFd;
    use std::sync::{Mutex, OnceLock};
    use std::thread;
    use tokio::io::unix::AsyncFd;
    use tokio::sync::oneshot;

    struct Member {
        pid: i32,
        fd: AsyncFd<OwnedFd>,
    }

    /// A member as seen by the scan: its pid and pidfd, before it is registered with the reactor.
    type Found = Vec<(i32, OwnedFd)>;

    #[derive(Default)]
    struct Scanner {
        pending: Vec<(i32, oneshot::Sender<Option<Found>>)>,
        running: bool,
    }

    fn scanner() -> &'static Mutex<Scanner> {
        static S: OnceLock<Mutex<Scanner>> = OnceLock::new();
        S.get_or_init(Default::default)
    }

    /// Waits for the group to be empty. False when this mechanism cannot tell (no `/proc`), so
    /// that the caller falls back to polling.
    pub(super) async fn wait_empty(group: ProcessGroup, cgroup: Option<std::path::PathBuf>) -> bool {
        loop {
            if !group.exists() {
                return true;
            }
            let found = match &cgroup {
                Some(dir) => cgroup_members(dir, group.pgid),
                None => members(group.pgid).await,
            };
            let Some(found) = found else {
                return false;
            };
            let mut members: Vec<Member> = Vec::with_capacity(found.len());
            for (pid, fd) in found {
                // SAFETY: the pidfd is owned by the AsyncFd and stays open as long as it is registered.
                match unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) } {
                    Ok(fd) => members.push(Member { pid, fd }),
                    Err(_) => return false,
                }
            }
            if members.is_empty() {
                // Only zombies are left (or nothing, since the check above).
                return true;
            }
            let mut recheck = FIRST_RECHECK;
            while let Some(first) = members.first() {
                tokio::select! {
                    _ = first.fd.readable() => {
                        members.remove(0);
                    }
                    _ = tokio::time::sleep(recheck) => {
                        recheck = (recheck * 4).min(RECHECK);
                        // One `getpgid` a member, no read of `/proc`: a member that exited is
                        // either gone (ESRCH) or a zombie, whose pidfd is readable and is let go
                        // when its turn comes at the head of the list.
                        // SAFETY: a plain query.
                        members.retain(|m| unsafe { libc::getpgid(m.pid) } == group.pgid);
                    }
                }
            }
        }
    }

    /// The live members of `pgid` among the members of a cgroup (which lists live processes only).
    fn cgroup_members(dir: &std::path::Path, pgid: i32) -> Option<Found> {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).ok()?;
        let mut found = Vec::new();
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: plain queries.
            if unsafe { libc::getpgid(pid) } != pgid {
                continue;
            }
            let Some(fd) = pidfd_open(pid as u32) else { continue };
            // As in `scan`: only a pidfd whose process is (still) a member counts.
            if unsafe { libc::getpgid(pid) } == pgid {
                found.push((pid, fd));
            }
        }
        Some(found)
    }

    /// The live members of `pgid`, found by the next shared scan.
    async fn members(pgid: i32) -> Option<Found> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut s = scanner().lock().unwrap_or_else(|e| e.into_inner());
            s.pending.push((pgid, tx));
            !std::mem::replace(&mut s.running, true)
        };
        // The scans run on a thread of their own, not on a runtime's blocking pool: a runtime
        // shutting down (a JS environment going away, a test's runtime ending) drops a blocking
        // task it has not started, and the scanner then stayed marked as running for good, so
        // that every later wait for a group to empty waited for ever.
        if start && thread::Builder::new().name("procvisor-scan".into()).spawn(run_scans).is_err() {
            // No thread to scan with: the waiters fall back to polling their group.
            let pending = {
                let mut s = scanner().lock().unwrap_or_else(|e| e.into_inner());
                s.running = false;
                std::mem::take(&mut s.pending)
            };
            for (_, tx) in pending {
                let _ = tx.send(None);
            }
        }
        rx.await.ok().flatten()
    }

    fn run_scans() {
        loop {
            let batch = {
                let mut s = scanner().lock().unwrap_or_else(|e| e.into_inner());
                if s.pending.is_empty() {
                    s.running = false;
                    return;
                }
                std::mem::take(&mut s.pending)
            };
            let mut wanted: HashMap<i32, Found> = batch.iter().map(|(g, _)| (*g, Vec::new())).collect();
            let ok = scan(&mut wanted);
            for (pgid, tx) in batch {
                // One waiter per group; a second request for the same group in one batch gets a
                // scan of its own next round rather than an empty answer.
                match wanted.remove(&pgid) {
                    Some(found) => {
                        let _ = tx.send(ok.then_some(found));
                    }
                    None => scanner().lock().unwrap_or_else(|e| e.into_inner()).pending.push((pgid, tx)),
                }
            }
        }
    }

    /// One pass over `/proc`: every live process whose group is wanted, with a pidfd. False when
    /// `/proc` cannot be read.
    fn scan(wanted: &mut HashMap<i32, Found>) -> bool {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return false;
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Some((pgrp, live)) = stat(pid) else { continue };
            let Some(found) = wanted.get_mut(&pgrp) else { continue };
            if !live {
                continue;
            }
            let Some(fd) = pidfd_open(pid as u32) else { continue };
            // The pid could have been reused between the read and the open: only a pidfd whose
            // process is (still) a live member counts. One that exited since is harmless: it is
            // readable at once and leads to the next scan.
            if matches!(stat(pid), Some((g, true)) if g == pgrp) {
                found.push((pid, fd));
            }
        }
        true
    }

    /// (process group, alive) of `pid`, from `/proc/<pid>/stat`.
    fn stat(pid: i32) -> Option<(i32, bool)> {
        use std::io::Read;
        // One read: the fields wanted come within the first few hundred bytes (the command name
        // is at most 64), where `read_to_string` would probe with several small reads.
        let mut buf = [0u8; 512];
        let n = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?.read(&mut buf).ok()?;
        let s = &buf[..n];
        // The fields after the command name, which is in parentheses and may hold anything.
        let rest = std::str::from_utf8(&s[s.iter().rposition(|&b| b == b')')? + 1..]).ok()?;
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next()?;
        let _ppid = fields.next();
        let pgrp = fields.next()?.parse().ok()?;
        Some((pgrp, state != "Z" && state != "X"))
    }

    #[cfg(test)]
    mod tests {
        use super::members;
        use std::future::Future;
        use std::os::unix::process::CommandExt;
        use std::task::{Context, Waker};
        use std::time::Duration;

        #[test]
        fn a_scan_asked_for_from_a_runtime_that_is_shut_down_stops_no_later_one() {
            let mut sleep = std::process::Command::new("sleep").arg("10").process_group(0).spawn().expect("sleep");
            let pgid = sleep.id() as i32;
            // Asked for from a runtime that is shut down (its blocking pool runs nothing more).
            let gone = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let handle = gone.handle().clone();
            gone.shutdown_background();
            {
                let _entered = handle.enter();
                let mut first = Box::pin(members(pgid));
                let _ = first.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            }
            // A later request, from another runtime, is answered.
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let found = rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), members(pgid)).await });
            let _ = sleep.kill();
            let _ = sleep.wait();
            let found = found.expect("the scan answered").expect("/proc was read");
            assert_eq!(found.iter().map(|(pid, _)| *pid).collect::<Vec<_>>(), vec![pgid]);
        }
    }
}
