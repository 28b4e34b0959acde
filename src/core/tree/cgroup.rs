//! Containment in a cgroup (Linux, cgroup v2): every process tree in a cgroup of its own, so that
//! a descendant that leaves its process group (`setsid`, `setpgid`, job control, a double fork)
//! is still reached, and "the tree is empty" is an event (`cgroup.events`, watched by
//! `cgroup_watch`), not a scan.
//!
//! One parent cgroup per Node process (`procvisor-<pid>-<n>`) is created under a cgroup v2
//! directory we may write: our own cgroup when it is delegated to us, or the unified mount's root
//! when running as root. Each launch gets a cgroup of its own under it, joined by the child
//! before it execs (see `spawn`); once the process is over the emptied cgroup is kept for a later
//! launch (up to `POOL` of them) or removed. `cgroup.kill` (Linux ≥ 5.14) kills
//! every member at once.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The parent cgroup of this Node process, or why there is none.
pub fn parent() -> Result<&'static Path, String> {
    static P: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    P.get_or_init(find_parent).as_deref().map_err(Clone::clone)
}

fn find_parent() -> Result<PathBuf, String> {
    if !cfg!(target_os = "linux") {
        return Err("cgroups are a Linux feature".into());
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    // Fields: id parent major:minor root mount-point options ... - fstype source options
    let mount = mounts
        .lines()
        .find(|l| l.split(" - ").nth(1).is_some_and(|t| t.starts_with("cgroup2 ")))
        .and_then(|l| l.split(' ').nth(4))
        .ok_or("no cgroup v2 hierarchy is mounted")?;
    let own =
        std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let own = own.lines().find_map(|l| l.strip_prefix("0::")).ok_or("this process has no cgroup v2 path")?;
    let base = Path::new(mount).join(own.trim_start_matches('/'));
    if !writable(&base) {
        return Err(format!(
            "the cgroup {} is not writable by this user (run under a delegated cgroup, e.g. systemd-run --user --scope -p Delegate=yes node app.js)",
            base.display()
        ));
    }
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let parent = base.join(format!("procvisor-{}-{n}", std::process::id()));
    std::fs::create_dir(&parent).map_err(|e| format!("cannot create the cgroup {}: {e}", parent.display()))?;
    if !parent.join("cgroup.kill").exists() {
        let _ = std::fs::remove_dir(&parent);
        return Err("the kernel has no cgroup.kill (Linux 5.14 or later is needed)".into());
    }
    crate::core::tree::watchdog::register_parent(&parent);
    Ok(parent)
}

fn writable(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: `c` is a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// How many emptied cgroups are kept for the next launches: creating and removing a cgroup costs
/// about 90 µs of kernel time, which a reused one does not pay. Each kept one holds three
/// descriptors; 32 covers the 16 launches in flight measured by the benchmarks, twice over.
const POOL: usize = 32;

fn pool() -> &'static Mutex<Vec<Cgroup>> {
    static P: OnceLock<Mutex<Vec<Cgroup>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

/// Removes the emptied cgroups kept for later launches (a manager that closes leaves none).
pub fn trim_pool() {
    let kept = std::mem::take(&mut *pool().lock().unwrap_or_else(|e| e.into_inner()));
    for cg in kept {
        let _ = std::fs::remove_dir(&cg.dir);
    }
}

/// The cgroup of one process tree.
#[derive(Debug)]
pub struct Cgroup {
    pub dir: PathBuf,
    /// Its `cgroup.procs`, which the child writes itself into where it cannot be born in the
    /// cgroup: opened then, not before (a child's clone copies every descriptor we hold).
    procs: OnceLock<OwnedFd>,
    /// The directory itself, for `clone3(CLONE_INTO_CGROUP)`.
    dirfd: Arc<OwnedFd>,
    /// Its `cgroup.events`, kept open: read again from offset 0 it is made anew, for a sixth of
    /// the cost of an open, read and close (each tree's end reads it twice).
    events: Arc<OwnedFd>,
    /// Its `cpu.stat`, kept open for the same reason (read at each tree's end); without it the
    /// tree's CPU time is simply not reported.
    cpu_stat: Option<OwnedFd>,
    /// `usage_usec` of `cpu.stat` when this tree got the cgroup (a reused one counts on).
    cpu_base_usec: f64,
    /// `cgroup.kill` was written: the kernel then kills every child later born into the cgroup
    /// (measured on 6.18 with CLONE_INTO_CGROUP), so it is never reused.
    killed: std::sync::atomic::AtomicBool,
    /// It may have a `memory.peak`. A reused cgroup has none: only cgroups without memory
    /// accounting go back to the pool, so their release skips the look.
    may_have_memory: bool,
}

impl Cgroup {
    /// An empty cgroup under `parent`: a reused one, or `<parent>/c<n>`.
    pub fn acquire(parent: &Path) -> io::Result<Cgroup> {
        if let Some(cg) = pool().lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(cg);
        }
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = parent.join(format!("c{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        std::fs::create_dir(&dir)?;
        let open = |f: &str| std::fs::File::open(dir.join(f)).map(OwnedFd::from);
        let opened = std::fs::File::open(&dir).and_then(|d| Ok((d, open("cgroup.events")?, open("cpu.stat").ok())));
        match opened {
            Ok((d, events, cpu_stat)) => Ok(Cgroup {
                dir,
                procs: OnceLock::new(),
                dirfd: Arc::new(d.into()),
                events: Arc::new(events),
                cpu_stat,
                cpu_base_usec: 0.0,
                killed: Default::default(),
                may_have_memory: true,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Its `cgroup.procs`, open for writing (opened at the first call).
    pub fn procs(&self) -> io::Result<&OwnedFd> {
        if let Some(fd) = self.procs.get() {
            return Ok(fd);
        }
        let fd: OwnedFd = std::fs::OpenOptions::new().write(true).open(self.dir.join("cgroup.procs"))?.into();
        Ok(self.procs.get_or_init(|| fd))
    }

    pub fn dir_fd(&self) -> &OwnedFd {
        &self.dirfd
    }

    /// Gives back the (empty) cgroup: kept for a later launch, or removed. Returns the tree's CPU
    /// time and memory peak. `seen_empty`: its emptiness was just read (nothing can join a
    /// cgroup that no process is in, so it is not read again).
    pub fn release(self, seen_empty: bool) -> (Option<f64>, Option<f64>) {
        let usage = self.cpu_stat.as_ref().and_then(usage_usec);
        let cpu = usage.map(|u| (u - self.cpu_base_usec) / 1000.0);
        let memory = if self.may_have_memory { memory_peak_bytes(&self.dir) } else { None };
        let mut pool = pool().lock().unwrap_or_else(|e| e.into_inner());
        // A cgroup with memory accounting keeps its peak: it is not reused.
        let killed = self.killed.load(std::sync::atomic::Ordering::Acquire);
        if memory.is_none() && !killed && pool.len() < POOL && (seen_empty || !self.populated()) {
            pool.push(Cgroup { cpu_base_usec: usage.unwrap_or(0.0), may_have_memory: false, ..self });
        } else {
            drop(pool);
            let _ = std::fs::remove_dir(&self.dir);
        }
        (cpu, memory)
    }

    /// SIGKILL to every member, whatever its process group or session.
    pub fn kill(&self) -> bool {
        self.killed.store(true, std::sync::atomic::Ordering::Release);
        std::fs::write(self.dir.join("cgroup.kill"), b"1").is_ok() && self.populated()
    }

    /// `signal` to every member but those `reached` already; true when there was one.
    pub fn signal(&self, signal: i32, reached: impl Fn(libc::pid_t) -> bool) -> bool {
        let Ok(procs) = read(&self.dir, "cgroup.procs") else { return false };
        let mut any = false;
        for pid in procs.lines().filter_map(|l| l.trim().parse::<libc::pid_t>().ok()).filter(|&pid| !reached(pid)) {
            // SAFETY: plain syscall; a member listed by the cgroup is alive (or a zombie).
            any |= unsafe { libc::kill(pid, signal) } == 0;
        }
        any
    }

    /// CPU time of every member so far, dead ones included, in milliseconds.
    pub fn cpu_time_ms(&self) -> Option<f64> {
        self.cpu_stat.as_ref().and_then(usage_usec).map(|u| (u - self.cpu_base_usec) / 1000.0)
    }

    /// Some live process is a member.
    pub fn populated(&self) -> bool {
        populated(&self.dir, &self.events)
    }

    /// Its `cgroup.events`, open, for `populated` and `wait_empty`.
    pub fn events(&self) -> Arc<OwnedFd> {
        self.events.clone()
    }

    /// The peak of memory use, where the memory controller is enabled for this cgroup.
    pub fn memory_peak_bytes(&self) -> Option<f64> {
        memory_peak_bytes(&self.dir)
    }

    /// The memory its members use now, in bytes (`memory.current`), where the memory controller
    /// is enabled for it.
    pub fn memory_bytes(&self) -> Option<f64> {
        read(&self.dir, "memory.current").ok()?.trim().parse().ok()
    }
}

/// A small cgroup file, opened by path and read to its end with plain reads (`read_to_string`
/// adds a `statx` and an `lseek`).
fn read(dir: &Path, file: &str) -> io::Result<String> {
    read_again(&std::fs::File::open(dir.join(file))?.into())
}

/// A kernfs file read from its start, at offsets: kept open, it is made anew by each read from 0.
/// A read that does not fill the buffer has reached the end: a cgroup file is a `seq_file`, which
/// fills the reader's buffer until its text ends, so the usual read that returns 0 is not made
/// (half of these files' system calls, a third of them at each tree's end).
fn read_again(fd: &OwnedFd) -> io::Result<String> {
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        // SAFETY: reads into our buffer, at an offset, from a descriptor we own.
        let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), out.len() as libc::off_t) };
        match n {
            0 => break,
            n if n > 0 => {
                out.extend_from_slice(&buf[..n as usize]);
                if (n as usize) < buf.len() {
                    break;
                }
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    String::from_utf8(out).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// `usage_usec` of a `cpu.stat` kept open.
fn usage_usec(cpu_stat: &OwnedFd) -> Option<f64> {
    let stat = read_again(cpu_stat).ok()?;
    stat.lines().find_map(|l| l.strip_prefix("usage_usec "))?.trim().parse().ok()
}

fn memory_peak_bytes(dir: &Path) -> Option<f64> {
    read(dir, "memory.peak").ok()?.trim().parse().ok()
}

/// Some live process is a member of the cgroup at `dir` (`events`: its `cgroup.events`, open).
pub fn populated(dir: &Path, events: &OwnedFd) -> bool {
    match read_again(events) {
        // `populated` stays 1 while an exited member is still being torn down (measured: about
        // 10 ms after a big parent forked), but such a member runs no code; `cgroup.procs` lists
        // live members only.
        Ok(events) => {
            events.lines().any(|l| l == "populated 1") && read(dir, "cgroup.procs").is_ok_and(|p| !p.trim().is_empty())
        }
        Err(_) => false,
    }
}
