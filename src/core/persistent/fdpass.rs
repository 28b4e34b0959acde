//! Handing a process's shared output (a sealed memfd) from a persistent sandbox's supervisor to
//! the Node processes attached to it, with `SCM_RIGHTS` over a Unix socket of its own beside the
//! sandbox's socket. Node's sockets cannot carry descriptors, so this one is served by a thread
//! of the supervisor's addon and asked by the client's addon.
//!
//! A descriptor is handed only for a token the supervisor gave that client over the sandbox's
//! socket (16 random bytes, used once, forgotten after a minute), and only to a peer of the
//! supervisor's own uid: whoever cannot call the supervisor cannot map its output either.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub type Token = [u8; 16];

/// How long a token offered waits to be taken.
const TOKEN_TTL: Duration = Duration::from_secs(60);
/// Tokens waiting at most: past it the oldest goes (a client that never takes its own).
const MAX_TOKENS: usize = 4096;
/// Connections served at once.
const MAX_CONNECTIONS: usize = 32;
/// How long a connection may take to send a token or read an answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The answer's first byte: the descriptor follows, or the token is unknown.
const GIVEN: u8 = 0;
const UNKNOWN: u8 = 1;

/// Sends `byte`, with `fd` attached when given.
pub fn send_fd(sock: RawFd, byte: u8, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let mut data = [byte];
    let mut iov = libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: zeroed msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: `control` has room for one header and one descriptor (CMSG_SPACE).
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            libc::CMSG_DATA(c).cast::<RawFd>().write_unaligned(fd.as_raw_fd());
        }
    }
    // A signal before anything was sent is retried: a socket with a timeout is never restarted
    // by the kernel (signal(7)), and the supervisor reaps children all the time.
    let n = loop {
        // SAFETY: `msg` points at live buffers.
        let n = unsafe { libc::sendmsg(sock, &msg, 0) };
        if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break n;
        }
    };
    if n != 1 {
        return Err(if n < 0 { io::Error::last_os_error() } else { io::ErrorKind::WriteZero.into() });
    }
    Ok(())
}

/// Receives one byte and the descriptor attached to it, if any. Descriptors past the first (a
/// broken peer's) are closed; so is any that came with a truncated control message. A signal
/// that interrupts the wait fails it with `Interrupted` (nothing was received): the caller
/// retries within its own deadline.
pub fn recv_fd(sock: RawFd) -> io::Result<(u8, Option<OwnedFd>)> {
    let mut data = [0u8; 1];
    let mut iov = libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: 1 };
    // Room for several, so that a peer sending more cannot make the kernel drop ours silently.
    // SAFETY: a pure size computation.
    let space = unsafe { libc::CMSG_SPACE((8 * std::mem::size_of::<RawFd>()) as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: zeroed msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = libc::MSG_CMSG_CLOEXEC;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = 0;
    // SAFETY: `msg` points at live buffers.
    let n = unsafe { libc::recvmsg(sock, &mut msg, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut fds = Vec::new();
    // SAFETY: walking the control messages the kernel wrote within `msg_controllen`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let bytes = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let p = libc::CMSG_DATA(c).cast::<RawFd>();
                for i in 0..bytes / std::mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(p.add(i).read_unaligned()));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    if n == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 || fds.len() > 1 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the answer carried more than one descriptor"));
    }
    Ok((data[0], fds.pop()))
}

fn random_token() -> io::Result<Token> {
    let mut t = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut t)?;
    Ok(t)
}

/// The supervisor's side: the socket, and the descriptors offered by token.
pub struct FdServer {
    offered: Mutex<HashMap<Token, (OwnedFd, Instant)>>,
}

impl FdServer {
    /// Listens at `path` (replacing what is there: the supervisor holds the sandbox's lock) and
    /// serves it on a thread of its own for the life of the process.
    pub fn start(path: &Path) -> io::Result<Arc<FdServer>> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path)?;
        let server = Arc::new(FdServer { offered: Mutex::new(HashMap::new()) });
        let s = server.clone();
        std::thread::Builder::new().name("procvisor-fds".into()).spawn(move || {
            let busy = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                // A thread per connection, so that a peer that stalls holds up nobody else; past
                // MAX_CONNECTIONS at once a connection is closed at once (its client falls back
                // to output over the sandbox's socket).
                if busy.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                    busy.fetch_sub(1, Ordering::AcqRel);
                    continue;
                }
                let (s, done) = (s.clone(), busy.clone());
                let spawned = std::thread::Builder::new().name("procvisor-fd".into()).spawn(move || {
                    let _ = s.serve(conn);
                    done.fetch_sub(1, Ordering::AcqRel);
                });
                if spawned.is_err() {
                    busy.fetch_sub(1, Ordering::AcqRel);
                }
            }
        })?;
        Ok(server)
    }

    /// Offers `fd` for one taking; returns the token that takes it.
    pub fn offer(&self, fd: OwnedFd) -> io::Result<Token> {
        let token = random_token()?;
        let mut offered = self.offered.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        offered.retain(|_, (_, at)| now.duration_since(*at) < TOKEN_TTL);
        if offered.len() >= MAX_TOKENS {
            if let Some(oldest) = offered.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| *k) {
                offered.remove(&oldest);
            }
        }
        offered.insert(token, (fd, now));
        Ok(token)
    }

    fn serve(&self, mut conn: UnixStream) -> io::Result<()> {
        let peer = super::credentials::peer_credentials(conn.as_raw_fd())?;
        // SAFETY: a plain syscall.
        if peer.uid != unsafe { libc::geteuid() } {
            return Ok(());
        }
        conn.set_read_timeout(Some(IO_TIMEOUT))?;
        conn.set_write_timeout(Some(IO_TIMEOUT))?;
        loop {
            let mut token = [0u8; 16];
            conn.read_exact(&mut token)?;
            let taken = self.offered.lock().unwrap_or_else(|e| e.into_inner()).remove(&token);
            match taken {
                Some((fd, _)) => {
                    use std::os::fd::AsFd;
                    send_fd(conn.as_raw_fd(), GIVEN, Some(fd.as_fd()))?
                }
                None => send_fd(conn.as_raw_fd(), UNKNOWN, None)?,
            }
        }
    }
}

/// Connects without waiting: a Unix socket whose backlog is full (a supervisor stopped while
/// clients keep asking) makes a blocking connect wait without end, where this fails at once.
fn connect_now(path: &Path) -> io::Result<UnixStream> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: a zeroed sockaddr_un, filled within its bounds below.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= addr.sun_path.len() || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the shared output's socket path does not fit a socket address",
        ));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    // SAFETY: plain syscalls on a descriptor owned at once.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    // SAFETY: fcntl on the descriptor owned above (no SOCK_CLOEXEC on every unix).
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    stream.set_nonblocking(true)?;
    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    if unsafe { libc::connect(fd, (&addr as *const libc::sockaddr_un).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// How long a client waits for the descriptor it asked for. The supervisor's thread answers at
/// once; the client asks on its JS thread (see the binding), so a supervisor that is stopped or
/// stuck costs it this much once, then its output goes on as bytes.
pub const TAKE_TIMEOUT: Duration = Duration::from_millis(250);

/// The client's side: the descriptor offered under `token` by the supervisor listening at
/// `path`, within TAKE_TIMEOUT.
pub fn take_fd(path: &Path, token: &Token) -> io::Result<OwnedFd> {
    let mut conn = connect_now(path)?;
    let peer = super::credentials::peer_credentials(conn.as_raw_fd())?;
    // SAFETY: a plain syscall.
    if peer.uid != unsafe { libc::geteuid() } {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is served by uid {}", path.display(), peer.uid),
        ));
    }
    let deadline = Instant::now() + TAKE_TIMEOUT;
    conn.set_read_timeout(Some(TAKE_TIMEOUT))?;
    conn.set_write_timeout(Some(TAKE_TIMEOUT))?;
    conn.write_all(token)?;
    // The client's thread takes signals (a Node process with children gets SIGCHLD), and a
    // socket with a timeout is never restarted by the kernel: retry, waiting what is left.
    let answer = loop {
        match recv_fd(conn.as_raw_fd()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "the supervisor did not answer in time"));
                }
                conn.set_read_timeout(Some(left))?;
            }
            other => break other?,
        }
    };
    match answer {
        (GIVEN, Some(fd)) => Ok(fd),
        (UNKNOWN, None) => {
            Err(io::Error::new(io::ErrorKind::NotFound, "the supervisor offers nothing under that token"))
        }
        (b, fd) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("an answer {b} with{} a descriptor", if fd.is_some() { "" } else { "out" }),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_gives_its_descriptor_once_and_an_unknown_one_nothing() {
        let dir = std::env::temp_dir().join(format!("procvisor-fdpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.fds");
        let server = FdServer::start(&path).unwrap();
        let file = std::fs::File::open("/dev/null").unwrap();
        use std::os::fd::AsFd;
        let token = server.offer(file.as_fd().try_clone_to_owned().unwrap()).unwrap();
        let fd = take_fd(&path, &token).unwrap();
        // The same open file: its status flags say read-only, as opened.
        // SAFETY: a plain fcntl on a descriptor we own.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_ACCMODE, libc::O_RDONLY);
        let again = take_fd(&path, &token).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::NotFound);
        assert_eq!(take_fd(&path, &[7u8; 16]).unwrap_err().kind(), io::ErrorKind::NotFound);
        // A peer that sends half a token and goes away costs the server nothing.
        let mut half = UnixStream::connect(&path).unwrap();
        half.write_all(&[1, 2, 3]).unwrap();
        drop(half);
        let token = server.offer(file.as_fd().try_clone_to_owned().unwrap()).unwrap();
        assert!(take_fd(&path, &token).is_ok());
        // Past MAX_CONNECTIONS silent peers, one more is turned away (its client falls back to
        // bytes); once they leave, tokens are served again.
        // (Accepted in order: the one after them finds every place taken.)
        let silent: Vec<_> = (0..MAX_CONNECTIONS).map(|_| UnixStream::connect(&path).unwrap()).collect();
        let token = server.offer(file.as_fd().try_clone_to_owned().unwrap()).unwrap();
        assert!(take_fd(&path, &token).is_err());
        drop(silent);
        let served = (0..100).any(|_| {
            let token = server.offer(file.as_fd().try_clone_to_owned().unwrap()).unwrap();
            take_fd(&path, &token).is_ok() || {
                std::thread::sleep(Duration::from_millis(50));
                false
            }
        });
        assert!(served, "served again once the silent peers left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    extern "C" fn ignore(_: libc::c_int) {}

    #[test]
    fn signals_while_the_client_waits_for_its_descriptor_do_not_fail_the_taking() {
        let dir = std::env::temp_dir().join(format!("procvisor-fdpass-sig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.fds");
        // A server that answers late, as a busy supervisor does.
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut token = [0u8; 16];
            conn.read_exact(&mut token).unwrap();
            std::thread::sleep(Duration::from_millis(120));
            let file = std::fs::File::open("/dev/null").unwrap();
            use std::os::fd::AsFd;
            send_fd(conn.as_raw_fd(), GIVEN, Some(file.as_fd())).unwrap();
        });
        // SAFETY: a handler that does nothing, with SA_RESTART as Node installs its own: the
        // socket's timeout still makes recvmsg fail with EINTR.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut());
        }
        // SAFETY: pthread_self is always valid for the calling thread.
        let me = unsafe { libc::pthread_self() } as usize;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let pester = std::thread::spawn(move || {
            let mut sent = 0;
            while !s.load(Ordering::Acquire) {
                // SAFETY: the target thread lives until `stop` is set, after which this stops.
                unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR2) };
                sent += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            sent
        });
        let taken = take_fd(&path, &[3u8; 16]);
        stop.store(true, Ordering::Release);
        assert!(pester.join().unwrap() > 5, "signals arrived while it waited");
        server.join().unwrap();
        assert!(taken.is_ok(), "{:?}", taken.err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
