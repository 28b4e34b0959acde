//! The event loop's side of a lent pipe (`core::output::loan`): libuv polls a flooding stream's pipe on
//! the loop of the JS environment whose listeners or reader consume it, and each readiness reads
//! into the process's log from there, as a `child_process` stream would. The pump (or the
//! reader) then takes it on the same thread, and the runtime's thread no longer wakes for every
//! write of the producer.
//!
//! libuv's functions are looked up in the host process at first use (Node exports them); where
//! they are missing, nothing is borrowed and the runtime reads as before. Everything here runs on
//! the JS thread that owns the loop: the polls of a thread are listed in a thread-local, and the
//! environment's cleanup hook gives every pipe back before the loop goes away.

use crate::core::output::block::ReadBuf;
use crate::core::output::loan::Loan;
use crate::core::supervise::process::Process;
use napi::Env;
use std::cell::RefCell;
use std::ffi::{c_int, c_void, CStr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, OnceLock};

type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type CloseCb = unsafe extern "C" fn(*mut c_void);
type HandleSizeFn = unsafe extern "C" fn(c_int) -> usize;
type PollInitFn = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int) -> c_int;
type PollStartFn = unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int;
type PollStopFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type CloseFn = unsafe extern "C" fn(*mut c_void, Option<CloseCb>);

/// The few libuv functions used, from the host process.
struct Uv {
    handle_size: HandleSizeFn,
    poll_init: PollInitFn,
    poll_start: PollStartFn,
    poll_stop: PollStopFn,
    close: CloseFn,
}

/// `UV_POLL` in `uv_handle_type`, and `UV_READABLE` in `uv_poll_event`: part of libuv's ABI.
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

/// Reads per readiness at most: with 256 KiB blocks, 1 MiB, a full pipe. The loop then goes
/// round (timers, other streams, the pump's drain) before this stream is read again. Each read
/// is one block, and the lag rule is checked after each: a larger read could overrun the log
/// before the pump takes it.
const READS_PER_TURN: usize = 4;

/// Pipes read on one loop at most. A few fast streams are cheapest read there; when many flood
/// at once, the runtime's threads read the rest beside the loop, which keeps each turn of the
/// loop short (50 floods all read on the loop made the event loop's lag p99 about twice as long)
/// and uses the other CPUs.
const MAX_LENT: usize = 2;

fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        let sym = |name: &CStr| {
            // SAFETY: a lookup in the symbols already loaded; the name is NUL-terminated.
            let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        // SAFETY: each symbol is libuv's function of that name, whose signature is the field's.
        unsafe {
            Some(Uv {
                handle_size: std::mem::transmute::<*mut c_void, HandleSizeFn>(sym(c"uv_handle_size")?),
                poll_init: std::mem::transmute::<*mut c_void, PollInitFn>(sym(c"uv_poll_init")?),
                poll_start: std::mem::transmute::<*mut c_void, PollStartFn>(sym(c"uv_poll_start")?),
                poll_stop: std::mem::transmute::<*mut c_void, PollStopFn>(sym(c"uv_poll_stop")?),
                close: std::mem::transmute::<*mut c_void, CloseFn>(sym(c"uv_close")?),
            })
        }
    })
    .as_ref()
}

/// Whether pipes can be borrowed here (the host exports libuv).
pub(crate) fn available() -> bool {
    uv().is_some()
}

/// One lent pipe, owned by its uv handle (whose `data` points here) until the handle is closed.
struct Poll {
    uv: &'static Uv,
    /// The `uv_poll_t`, allocated with libuv's size for it.
    handle: *mut c_void,
    layout: std::alloc::Layout,
    fd: Option<OwnedFd>,
    loan: Arc<Loan>,
    process: Arc<Process>,
    buf: ReadBuf,
    /// Polling; false while a consumer lags.
    active: bool,
}

thread_local! {
    /// This thread's lent pipes.
    static POLLS: RefCell<Vec<*mut Poll>> = const { RefCell::new(Vec::new()) };
    /// Reads made on this thread's loop, ever (a diagnostic).
    static READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many reads of lent pipes this thread's event loop has made.
pub(crate) fn read_count() -> u64 {
    READS.with(|r| r.get())
}

/// The `data` field, first in every uv handle.
unsafe fn data(handle: *mut c_void) -> *mut Poll {
    *(handle as *mut *mut Poll)
}

/// How a loan ends on this side.
enum End {
    /// The pipe goes back to the runtime, open.
    GiveBack,
    /// The stream is over; the pipe is closed.
    Over,
}

/// Ends the loan: the handle is closed (libuv stops watching the descriptor at once) and freed
/// in its close callback. `poll` must not be used after this.
unsafe fn finish(poll: *mut Poll, end: End) {
    POLLS.with(|p| p.borrow_mut().retain(|&q| q != poll));
    let p = &mut *poll;
    (p.uv.close)(p.handle, Some(on_closed));
    let fd = p.fd.take();
    match (end, fd) {
        (End::GiveBack, Some(fd)) => p.loan.give_back(fd),
        (_, fd) => {
            drop(fd);
            p.loan.end();
        }
    }
}

unsafe extern "C" fn on_closed(handle: *mut c_void) {
    let poll = Box::from_raw(data(handle));
    std::alloc::dealloc(handle.cast(), poll.layout);
}

unsafe extern "C" fn on_readable(handle: *mut c_void, status: c_int, _events: c_int) {
    let poll = data(handle);
    let p = &mut *poll;
    if status < 0 || p.loan.reclaim_requested() {
        return finish(poll, End::GiveBack);
    }
    let Some(fd) = p.fd.as_ref().map(AsRawFd::as_raw_fd) else { return };
    let stream = p.loan.stream;
    for _ in 0..READS_PER_TURN {
        let b = p.buf.bytes_mut();
        let n = libc::read(fd, b.as_mut_ptr().cast(), b.len());
        if n > 0 {
            READS.with(|r| r.set(r.get() + 1));
            p.process.output.push_read(stream, &mut p.buf, n as usize);
            if p.process.output.disk_behind() {
                // The log's files are behind: the runtime reads on, waiting for the disk writer
                // as its reader does. Read on here, the queue grew past its bound (a flood to a
                // listener outran the disk) and the process's log files stopped.
                return finish(poll, End::GiveBack);
            }
            if p.process.output.consumers_lag() {
                // The one lag rule: no more reads until the consumers catch up (`serve`).
                (p.uv.poll_stop)(p.handle);
                p.active = false;
                return;
            }
            continue;
        }
        if n == 0 {
            return finish(poll, End::Over);
        }
        match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::Interrupted => continue,
            std::io::ErrorKind::WouldBlock => return,
            // As for the runtime's reader, a read error ends the stream.
            _ => return finish(poll, End::Over),
        }
    }
}

/// The polls of `process` on this thread.
fn polls_of(process: &Arc<Process>) -> Vec<*mut Poll> {
    POLLS.with(|p| {
        p.borrow()
            .iter()
            .copied()
            // SAFETY: listed polls are alive (removed from the list before they are freed).
            .filter(|&q| Arc::ptr_eq(unsafe { &(*q).process }, process))
            .collect()
    })
}

/// Called on the JS thread after the consumers of `process` took output: takes the pipes it
/// offers, starts again polls that a lagging consumer stopped, and gives back those the runtime
/// asked for.
pub(crate) fn serve(env: &Env, process: &Arc<Process>) {
    let Some(uv) = uv() else { return };
    for poll in polls_of(process) {
        // SAFETY: listed, so alive; this is its loop's thread.
        unsafe {
            let p = &mut *poll;
            if p.loan.reclaim_requested() {
                finish(poll, End::GiveBack);
            } else if !p.active
                && !process.output.consumers_lag()
                && (uv.poll_start)(p.handle, UV_READABLE, on_readable) == 0
            {
                p.active = true;
            }
        }
    }
    for loan in process.output.loans() {
        if let Some(fd) = loan.take() {
            if POLLS.with(|p| p.borrow().len()) >= MAX_LENT || process.output.disk_behind() {
                loan.give_back(fd);
            } else {
                start(env, uv, process, loan, fd);
            }
        }
    }
}

fn start(env: &Env, uv: &'static Uv, process: &Arc<Process>, loan: Arc<Loan>, fd: OwnedFd) {
    let mut uv_loop = std::ptr::null_mut();
    // SAFETY: a valid env; the loop is this thread's.
    let got = unsafe { napi::sys::napi_get_uv_event_loop(env.raw(), &mut uv_loop) };
    // SAFETY: plain libuv ABI query.
    let size = unsafe { (uv.handle_size)(UV_POLL) };
    let layout = std::alloc::Layout::from_size_align(size.max(std::mem::size_of::<usize>()), 16);
    let (true, Ok(layout)) = (got == napi::sys::Status::napi_ok && !uv_loop.is_null(), layout) else {
        process.output.stop_lending();
        return loan.give_back(fd);
    };
    // SAFETY: a zeroed allocation of libuv's size for a poll handle, initialised by uv_poll_init
    // on this thread's loop; `data` is set after init (which does not touch it) and points to
    // the Poll that the close callback frees.
    unsafe {
        let handle = std::alloc::alloc_zeroed(layout).cast::<c_void>();
        if handle.is_null() {
            process.output.stop_lending();
            return loan.give_back(fd);
        }
        if (uv.poll_init)(uv_loop.cast(), handle, fd.as_raw_fd()) != 0 {
            std::alloc::dealloc(handle.cast(), layout);
            process.output.stop_lending();
            return loan.give_back(fd);
        }
        let poll = Box::into_raw(Box::new(Poll {
            uv,
            handle,
            layout,
            fd: Some(fd),
            loan,
            process: process.clone(),
            buf: ReadBuf::block(),
            active: false,
        }));
        *(handle as *mut *mut Poll) = poll;
        POLLS.with(|p| p.borrow_mut().push(poll));
        // While a consumer lags, the next `serve` after it caught up starts the poll.
        if process.output.consumers_lag() {
            return;
        }
        if (uv.poll_start)(handle, UV_READABLE, on_readable) != 0 {
            process.output.stop_lending();
            return finish(poll, End::GiveBack);
        }
        (*poll).active = true;
    }
}

/// Gives back every pipe of `process` lent on this thread (no consumer there borrows any more).
pub(crate) fn release(process: &Arc<Process>) {
    for poll in polls_of(process) {
        // SAFETY: listed, so alive; this is its loop's thread.
        unsafe { finish(poll, End::GiveBack) };
    }
}

/// Gives back every pipe lent on this thread: its JS environment is going away. The runtime
/// reads them on, and they are offered no more.
pub(crate) fn release_all() {
    let all = POLLS.with(|p| p.borrow().clone());
    for poll in all {
        // SAFETY: listed, so alive; this is its loop's thread.
        unsafe {
            let p = &*poll;
            p.process.output.stop_lending();
            finish(poll, End::GiveBack);
        }
    }
}
