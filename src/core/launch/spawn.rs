//! Launching one child: the leader of a new process group, with exactly the environment given,
//! limits set and (with containment) its cgroup joined before the program's first instruction,
//! and a pidfd from the clone itself, so that the root is signalled and waited for by identity.
//!
//! On Linux the child is made by `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)`, as glibc's
//! `posix_spawn` makes it: no copy of the Node process's page tables, however large its heap.
//! Between the clone and `execve` the child only makes system calls on values prepared before the
//! clone: reset signal handling, `setpgid`, join its cgroup, `chdir`, place its pipes, set limits,
//! exec. So whatever it does cannot race the placement: it has not started yet. Elsewhere (macOS)
//! std's `Command` spawns it, with limits in a `pre_exec`.
//!
//! A child on a terminal leads a new session instead (`setsid`, so it still leads its process
//! group), and the slave side of a pseudo-terminal opened here, sized before the spawn, becomes
//! its controlling terminal and its stdin, stdout and stderr. The master is our end: read, it is
//! the output; written, it is the keyboard.

use crate::core::error::{errno_name, CoreError, CoreResult};
use crate::core::launch::command::{Limits, Pty, SpawnSpec, StdinMode};
use crate::core::tree::cgroup::Cgroup;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

/// A child that runs, with its pipe ends.
pub(crate) struct Launched {
    pub pid: u32,
    /// None where the platform has no pidfd (then the root is waited for by pid).
    pub pidfd: Option<Arc<OwnedFd>>,
    /// The pipe of stdout, or the terminal's master for a child on a terminal.
    pub stdout: OwnedFd,
    /// None for a child on a terminal: its stderr is the terminal too.
    pub stderr: Option<OwnedFd>,
    pub stdin: Option<OwnedFd>,
    /// The terminal's master, for window-size changes and the foreground group.
    pub terminal: Option<OwnedFd>,
}

/// Where the child goes before it runs: its own cgroup (Linux's; elsewhere there is none to go
/// to). It is born in it (`clone3(CLONE_INTO_CGROUP)` on the cgroup's directory); where the
/// kernel cannot do that, it writes itself into the cgroup's `cgroup.procs` before it execs.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct Placement<'a> {
    pub cgroup: Option<&'a Cgroup>,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints.
    #[cfg(target_os = "linux")]
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // No pipe2 on macOS: close-on-exec is set just after. (std's spawn there also marks its own
    // descriptors this way; a fork from another thread in between would inherit the pair.)
    // SAFETY: as above, then fcntl on the two fresh descriptors.
    #[cfg(not(target_os = "linux"))]
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for fd in fds {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    // SAFETY: both are fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A pseudo-terminal pair, both ends close-on-exec (the child gets the slave by `dup2`), the
/// slave not yet anybody's controlling terminal, the window size already set.
fn open_pty(size: &Pty) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let last = std::io::Error::last_os_error;
    // SAFETY: plain system calls on descriptors we own; `name` outlives the calls that use it.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if m < 0 {
            return Err(last());
        }
        let master = OwnedFd::from_raw_fd(m);
        // Some platforms ignore O_CLOEXEC here; a master inherited by a child would keep the
        // terminal from hanging up when the session ends.
        libc::fcntl(m, libc::F_SETFD, libc::FD_CLOEXEC);
        if libc::grantpt(m) != 0 || libc::unlockpt(m) != 0 {
            return Err(last());
        }
        let name = slave_name(m)?;
        let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if s < 0 {
            return Err(last());
        }
        let slave = OwnedFd::from_raw_fd(s);
        set_window_size(&master, size.cols, size.rows)?;
        Ok((master, slave))
    }
}

#[cfg(target_os = "linux")]
fn slave_name(master: libc::c_int) -> std::io::Result<std::ffi::CString> {
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: buf is valid for its length; ptsname_r NUL-terminates on success.
    if unsafe { libc::ptsname_r(master, buf.as_mut_ptr(), buf.len()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: NUL-terminated by ptsname_r.
    Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_owned())
}

#[cfg(not(target_os = "linux"))]
fn slave_name(master: libc::c_int) -> std::io::Result<std::ffi::CString> {
    // TIOCPTYGNAME: the thread-safe ptsname of macOS (128 bytes).
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: buf is the 128 bytes the ioctl fills, NUL-terminated.
    if unsafe { libc::ioctl(master, libc::TIOCPTYGNAME as _, buf.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: NUL-terminated by the ioctl.
    Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_owned())
}

/// TIOCSWINSZ on a terminal's master: the kernel sends SIGWINCH to its foreground group.
pub(crate) fn set_window_size(master: &OwnedFd, cols: u16, rows: u16) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let ws = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: ioctl with a valid winsize on a descriptor we own.
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ as _, &ws) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `/dev/null` for reading, opened once: every child without a stdin pipe gets it as fd 0 (an
/// open and a close less per launch; reading it has no state to share).
fn dev_null() -> std::io::Result<&'static OwnedFd> {
    static NULL: std::sync::OnceLock<OwnedFd> = std::sync::OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd);
    }
    let fd: OwnedFd = std::fs::File::open("/dev/null")?.into();
    Ok(NULL.get_or_init(|| fd))
}

pub(crate) fn launch(spec: &SpawnSpec, placement: Placement<'_>) -> CoreResult<Launched> {
    spec.validate()?;
    // A missing program in an unusable cwd is reported as the cwd: it is the first thing to fix.
    let program = spec.resolve_program().map_err(|e| cwd_error(spec).unwrap_or(e))?;
    let fail = |e: std::io::Error| spawn_error(spec, &program, e);
    if let Some(size) = &spec.pty {
        let (master, slave) = open_pty(size).map_err(fail)?;
        let (pid, pidfd) = imp::spawn(spec, &program, [&slave, &slave, &slave], true, placement).map_err(fail)?;
        // Our copy of the slave goes now: the master reads EIO (its end of file) once the
        // session's last holder has closed it.
        drop(slave);
        let stdin = match spec.stdin {
            StdinMode::Pipe => Some(master.try_clone().map_err(fail)?),
            StdinMode::Ignore => None,
        };
        let terminal = Some(master.try_clone().map_err(fail)?);
        return Ok(Launched { pid, pidfd: pidfd.map(Arc::new), stdout: master, stderr: None, stdin, terminal });
    }
    let (out_r, out_w) = pipe().map_err(fail)?;
    let (err_r, err_w) = pipe().map_err(fail)?;
    let (in_r, in_w) = match spec.stdin {
        StdinMode::Pipe => {
            let (r, w) = pipe().map_err(fail)?;
            (Some(r), Some(w))
        }
        StdinMode::Ignore => (None, None),
    };
    let stdin = match &in_r {
        Some(r) => r,
        None => dev_null().map_err(fail)?,
    };
    let (pid, pidfd) = imp::spawn(spec, &program, [stdin, &out_w, &err_w], false, placement).map_err(fail)?;
    Ok(Launched { pid, pidfd: pidfd.map(Arc::new), stdout: out_r, stderr: Some(err_r), stdin: in_w, terminal: None })
}

/// The working directory's own error, when it cannot be entered.
fn cwd_error(spec: &SpawnSpec) -> Option<CoreError> {
    crate::core::launch::command::validate_cwd(&spec.cwd).err()
}

fn spawn_error(spec: &SpawnSpec, program: &std::path::Path, e: std::io::Error) -> CoreError {
    let errno = e.raw_os_error();
    // The cwd is not checked before the spawn (the child's chdir is the check): when the spawn
    // failed and the cwd cannot be entered, the cwd is what failed, whatever the errno.
    if errno.is_some() {
        if let Some(cwd) = cwd_error(spec) {
            return cwd;
        }
    }
    let code = errno.map(errno_name).unwrap_or_else(|| "EUNKNOWN".into());
    CoreError::SpawnFailed { program: program.display().to_string(), reason: format!("{code}: {e}"), errno }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

/// Sets each given limit as both the soft and the hard limit, capped at the current hard limit
/// (an unprivileged process cannot raise it, and its current limit is then the stricter one).
/// Runs in the child before exec: system calls only.
fn set_limits(limits: &Limits) {
    for (resource, value) in [
        (libc::RLIMIT_AS, limits.address_space),
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_FSIZE, limits.file_size),
        (libc::RLIMIT_NPROC, limits.processes),
    ] {
        set_limit(resource as Resource, value);
    }
}

fn set_limit(resource: Resource, value: Option<u64>) {
    let Some(v) = value else { return };
    let v = v as libc::rlim_t;
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit on the calling process with valid pointers.
    unsafe {
        let max = if libc::getrlimit(resource, &mut old) == 0 { old.rlim_max.min(v) } else { v };
        libc::setrlimit(resource, &libc::rlimit { rlim_cur: max, rlim_max: max });
    }
}

#[cfg(target_os = "linux")]
pub(crate) mod imp {
    use super::{set_limits, Placement};
    use crate::core::launch::command::{Limits, SpawnSpec};
    use std::cell::RefCell;
    use std::ffi::{c_void, CString};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::atomic::{AtomicI32, Ordering};

    /// Everything the child needs, prepared before the clone: the child allocates nothing.
    struct ChildArgs {
        program: CString,
        argv: Vec<*const libc::c_char>,
        envp: Vec<*const libc::c_char>,
        cwd: CString,
        fds: [RawFd; 3],
        /// Lead a new session whose controlling terminal is fd 0 (then fds are a terminal's slave).
        session: bool,
        cgroup_procs: RawFd,
        limits: Limits,
        has_limits: bool,
        /// The errno of the step that failed in the child; 0 when it reached the program.
        err: AtomicI32,
    }

    const STACK: usize = 128 * 1024;

    #[cfg(test)]
    thread_local! {
        /// Makes this thread's launches join their cgroup as on a kernel without
        /// `CLONE_INTO_CGROUP`: by writing to its `cgroup.procs`.
        pub(crate) static REFUSE_CLONE_INTO_CGROUP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    fn born_in_cgroup_refused() -> bool {
        #[cfg(test)]
        return REFUSE_CLONE_INTO_CGROUP.with(std::cell::Cell::get);
        #[cfg(not(test))]
        false
    }

    thread_local! {
        /// The child runs on this stack until it execs; the parent thread is suspended meanwhile
        /// (CLONE_VFORK), so one per thread is enough.
        static STACK_MEM: RefCell<Vec<u8>> = RefCell::new(vec![0u8; STACK]);
    }

    fn cstr(b: &[u8]) -> std::io::Result<CString> {
        CString::new(b).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    }

    pub(super) fn spawn(
        spec: &SpawnSpec,
        program: &Path,
        fds: [&OwnedFd; 3],
        session: bool,
        placement: Placement<'_>,
    ) -> std::io::Result<(u32, Option<OwnedFd>)> {
        let argv_c: Vec<CString> = spec.argv.iter().map(|a| cstr(a.as_bytes())).collect::<Result<_, _>>()?;
        let env_c: Vec<CString> =
            spec.env.iter().map(|(k, v)| cstr(format!("{k}={v}").as_bytes())).collect::<Result<_, _>>()?;
        let mut argv: Vec<*const libc::c_char> = argv_c.iter().map(|c| c.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = env_c.iter().map(|c| c.as_ptr()).collect();
        envp.push(std::ptr::null());
        let mut args = ChildArgs {
            program: cstr(program.as_os_str().as_bytes())?,
            argv,
            envp,
            cwd: cstr(spec.cwd.as_os_str().as_bytes())?,
            fds: [fds[0].as_raw_fd(), fds[1].as_raw_fd(), fds[2].as_raw_fd()],
            session,
            cgroup_procs: -1,
            limits: spec.limits,
            has_limits: spec.limits != Limits::default(),
            err: AtomicI32::new(0),
        };
        let mut pidfd: libc::c_int = -1;
        let pid = STACK_MEM.with(|stack| {
            let mut stack = stack.borrow_mut();
            // The stack grows down from its 16-byte aligned top.
            let base = stack.as_mut_ptr() as usize;
            let top = (base + STACK) & !15;
            // SAFETY: all signals are blocked around the clone, so no handler of this process
            // runs on the child's stack before the child has reset them; `args` outlives the
            // child's use of it (CLONE_VFORK returns once the child has exec'd or exited).
            unsafe {
                let mut all: libc::sigset_t = std::mem::zeroed();
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&mut all);
                libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
                // Born in its cgroup where the kernel can (Linux 5.7, x86_64): joining it after
                // the clone is a migration, which waits for an RCU grace period (10-20 ms)
                // whenever this process has forked recently.
                let mut pid = match placement.cgroup.filter(|_| !born_in_cgroup_refused()) {
                    Some(cg) => clone3::spawn_into(cg.dir_fd().as_raw_fd(), base, top - base, &mut pidfd, &args),
                    None => -libc::ENOSYS as libc::c_long,
                };
                if pid < 0
                    && -pid as libc::c_int != libc::ENOSYS
                    && placement.cgroup.is_some()
                    && -pid as libc::c_int != libc::EINVAL
                    && -pid as libc::c_int != libc::E2BIG
                    && -pid as libc::c_int != libc::EOPNOTSUPP
                {
                    // A real failure (EAGAIN, ENOMEM…): no fallback would do better.
                    let e = std::io::Error::from_raw_os_error(-pid as libc::c_int);
                    libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
                    return Err(e);
                }
                if pid < 0 {
                    if let Some(cg) = placement.cgroup {
                        // Opened here, where it is needed: held by every cgroup, it was one more
                        // descriptor that each child's clone copied and its exec closed.
                        match cg.procs() {
                            Ok(procs) => args.cgroup_procs = procs.as_raw_fd(),
                            Err(e) => {
                                libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
                                return Err(e);
                            }
                        }
                    }
                    pid = libc::clone(
                        child,
                        top as *mut c_void,
                        libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
                        &args as *const ChildArgs as *mut c_void,
                        &mut pidfd as *mut libc::c_int,
                    ) as libc::c_long;
                    if pid < 0 {
                        pid = -(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL) as libc::c_long);
                    }
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
                if pid < 0 {
                    Err(std::io::Error::from_raw_os_error(-pid as libc::c_int))
                } else {
                    Ok(pid as libc::pid_t)
                }
            }
        })?;
        // SAFETY: CLONE_PIDFD stored a fresh descriptor that we own.
        let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
        let err = args.err.load(Ordering::Acquire);
        if err != 0 {
            let mut status = 0;
            // SAFETY: reaps the child that failed before its program ran.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(std::io::Error::from_raw_os_error(err));
        }
        Ok((pid as u32, pidfd))
    }

    mod clone3 {
        //! `clone3(CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP)`. glibc 2.36 has no
        //! wrapper, and a child that shares our memory must start on its own stack, which a plain
        //! `syscall()` cannot do: the system call and the jump to the child's function are one
        //! piece of assembly, as in glibc's own clone.
        use super::{child, ChildArgs};
        use std::ffi::c_void;

        #[repr(C)]
        struct CloneArgs {
            flags: u64,
            pidfd: u64,
            child_tid: u64,
            parent_tid: u64,
            exit_signal: u64,
            stack: u64,
            stack_size: u64,
            tls: u64,
            set_tid: u64,
            set_tid_size: u64,
            cgroup: u64,
        }

        const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

        /// The child's pid, or minus the errno (-ENOSYS where this is not available).
        #[cfg(target_arch = "x86_64")]
        pub(super) unsafe fn spawn_into(
            cgroup: libc::c_int,
            stack: usize,
            size: usize,
            pidfd: &mut libc::c_int,
            args: &ChildArgs,
        ) -> libc::c_long {
            let mut ca = CloneArgs {
                flags: (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD) as u64 | CLONE_INTO_CGROUP,
                pidfd: pidfd as *mut libc::c_int as u64,
                child_tid: 0,
                parent_tid: 0,
                exit_signal: libc::SIGCHLD as u64,
                stack: stack as u64,
                stack_size: size as u64,
                tls: 0,
                set_tid: 0,
                set_tid_size: 0,
                cgroup: cgroup as u64,
            };
            let f: extern "C" fn(*mut c_void) -> libc::c_int = child;
            let ret: libc::c_long;
            // SAFETY: the kernel starts the child at the next instruction with rsp at the top of
            // `stack` (16-byte aligned by the caller) and every register but rax, rcx, r11 as
            // ours: it calls `child(args)` and exits with its result; it never returns here. The
            // parent is suspended until the child execs or exits (CLONE_VFORK).
            unsafe {
                std::arch::asm!(
                    "syscall",
                    "test rax, rax",
                    "jnz 2f",
                    "xor ebp, ebp",
                    "mov rdi, r13",
                    "call r12",
                    "mov edi, eax",
                    "mov eax, 60",
                    "syscall",
                    "ud2",
                    "2:",
                    inlateout("rax") libc::SYS_clone3 => ret,
                    in("rdi") &mut ca as *mut CloneArgs,
                    in("rsi") std::mem::size_of::<CloneArgs>(),
                    in("r12") f,
                    in("r13") args as *const ChildArgs as *mut c_void,
                    lateout("rcx") _,
                    lateout("r11") _,
                    options(nostack),
                );
            }
            ret
        }

        #[cfg(not(target_arch = "x86_64"))]
        pub(super) unsafe fn spawn_into(
            _cgroup: libc::c_int,
            _stack: usize,
            _size: usize,
            _pidfd: &mut libc::c_int,
            _args: &ChildArgs,
        ) -> libc::c_long {
            -(libc::ENOSYS as libc::c_long)
        }
    }

    /// The child, between the clone and the exec. System calls only: it shares the parent's
    /// memory, so it must not allocate, lock, or unwind.
    extern "C" fn child(arg: *mut c_void) -> libc::c_int {
        // SAFETY: `arg` is the parent's `ChildArgs`, alive until we exec or exit.
        let a = unsafe { &*(arg as *const ChildArgs) };
        let fail = |a: &ChildArgs| -> libc::c_int {
            // SAFETY: errno of this thread; the parent reads `err` after we are gone.
            a.err.store(unsafe { *libc::__errno_location() }.max(1), Ordering::Release);
            unsafe { libc::_exit(127) }
        };
        // SAFETY (the whole block): async-signal-safe system calls on values prepared earlier.
        unsafe {
            // Default dispositions (Node ignores SIGPIPE and SIGXFSZ, and has handlers that must
            // not run here), then no signal blocked: the program starts as from a shell.
            for sig in 1..32 {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            // A new session also makes a new process group led by the child, so group signals,
            // timeouts and the watchdog treat it as any other root.
            if a.session {
                if libc::setsid() < 0 {
                    return fail(a);
                }
            } else if libc::setpgid(0, 0) != 0 {
                return fail(a);
            }
            if a.cgroup_procs >= 0 && libc::write(a.cgroup_procs, b"0".as_ptr().cast(), 1) != 1 {
                return fail(a);
            }
            if libc::chdir(a.cwd.as_ptr()) != 0 {
                return fail(a);
            }
            // Out of the way first, so that placing one end cannot overwrite another.
            let mut high = [-1; 3];
            for (i, fd) in a.fds.iter().enumerate() {
                high[i] = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3);
                if high[i] < 0 {
                    return fail(a);
                }
            }
            for (target, fd) in high.iter().enumerate() {
                if libc::dup2(*fd, target as libc::c_int) < 0 {
                    return fail(a);
                }
            }
            if a.session && libc::ioctl(0, libc::TIOCSCTTY as _, 0) != 0 {
                return fail(a);
            }
            // Last: a descriptor limit below our pipes' numbers would refuse the moves above.
            if a.has_limits {
                set_limits(&a.limits);
            }
            libc::execve(a.program.as_ptr(), a.argv.as_ptr(), a.envp.as_ptr());
            fail(a)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{set_limits, Placement};
    use crate::core::launch::command::{os_env, Limits, SpawnSpec};
    use std::os::fd::OwnedFd;
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::Stdio;

    pub(super) fn spawn(
        spec: &SpawnSpec,
        program: &Path,
        fds: [&OwnedFd; 3],
        session: bool,
        _placement: Placement<'_>,
    ) -> std::io::Result<(u32, Option<OwnedFd>)> {
        let stdio = |fd: &OwnedFd| -> std::io::Result<Stdio> { Ok(Stdio::from(fd.try_clone()?)) };
        let mut cmd = std::process::Command::new(program);
        cmd.arg0(&spec.argv[0])
            .args(&spec.argv[1..])
            .env_clear()
            .envs(os_env(&spec.env))
            .current_dir(&spec.cwd)
            .stdin(stdio(fds[0])?)
            .stdout(stdio(fds[1])?)
            .stderr(stdio(fds[2])?);
        if session {
            // SAFETY: the closure runs in the forked child and only makes system calls.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        } else {
            cmd.process_group(0);
        }
        if spec.limits != Limits::default() {
            let limits = spec.limits;
            // SAFETY: the closure runs in the forked child and only makes system calls.
            unsafe {
                cmd.pre_exec(move || {
                    set_limits(&limits);
                    Ok(())
                });
            }
        }
        let child = cmd.spawn()?;
        // Waited for by pid (the reaper); std's handle is not needed.
        let pid = child.id();
        std::mem::forget(child);
        Ok((pid, None))
    }
}
