//! The spawn on Linux: `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)`, or `clone3` into the
//! child's cgroup, and the child's few system calls between the clone and `execve`.

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
