//! A realm's one threadsafe function, through which promises are settled from the runtime.
//!
//! napi-rs gives every deferred promise a threadsafe function of its own: created on the JS
//! thread (an async handle, a cleanup hook, a reference), called once, then closed and finalized
//! on a later turn of the loop. A launch settles two promises (started, then exited), so that was
//! most of the native work the JS thread did per spawn. Here a realm has one threadsafe function,
//! made once, and settlements are closures queued beside it. The function is a bare N-API one: no
//! JS function is called after the closures, and one call runs every closure queued by then, so
//! the settlements that arrive together (many launches in flight) cost the JS thread one callback
//! and one microtask checkpoint, not one each.
//!
//! Node must stay alive while a promise is pending (an awaited `exitCode` is the only thing left
//! to do in many scripts) and must be free to exit when none is: the function is weak, and
//! referenced only while the realm has pending promises (a count kept on the JS thread).
//!
//! A realm that goes away (a worker terminated) has its function finalized by Node: a settlement
//! that arrives later is dropped with its closure, never run against a freed environment. The
//! function's handle is only used under the lock that its finalizer takes to clear it.

use napi::bindgen_prelude::{check_status, sys};
use napi::Env;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// Work for the JS thread: settle one promise.
pub(crate) type Job = Box<dyn FnOnce(&Env) + Send>;

/// Closures one callback runs at most; the rest wait for the next turn of the loop, so that a
/// burst of settlements cannot hold the event loop.
const BATCH: usize = 1024;

/// What the realm's threadsafe function and its callers share.
struct Shared {
    /// The function; null once Node has finalized it (its environment is gone).
    tsfn: Mutex<Tsfn>,
    queue: Mutex<Queue>,
}

struct Tsfn(sys::napi_threadsafe_function);
// SAFETY: a threadsafe function may be called from any thread; its other uses (ref, unref) are
// made on the JS thread of its realm, and all of them under the lock that its finalizer takes.
unsafe impl Send for Tsfn {}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// A call of the function is on its way to the JS thread, which will run `jobs`.
    scheduled: bool,
    /// The function is finalized: a closure queued now would never run.
    closed: bool,
}

/// A realm's one threadsafe function for settling promises.
pub(crate) struct Settler {
    shared: Arc<Shared>,
}

impl Settler {
    /// Made by `registerRealm`, on the JS thread of the realm.
    pub(crate) fn new(env: &Env) -> napi::Result<Arc<Settler>> {
        let shared = Arc::new(Shared { tsfn: Mutex::new(Tsfn(std::ptr::null_mut())), queue: Mutex::default() });
        // Node hands this back to the callback and to the finalizer, which frees it.
        let context = Box::into_raw(Box::new(shared.clone())) as *mut c_void;
        let mut name = std::ptr::null_mut();
        let mut tsfn = std::ptr::null_mut();
        // SAFETY: plain N-API calls on the JS thread, with valid out pointers. No JS function: the
        // callback does the work. One thread count, never released: the function lives as long
        // as the environment, which finalizes it.
        unsafe {
            check_status!(sys::napi_create_string_utf8(env.raw(), c"procvisor".as_ptr(), 9, &mut name))?;
            let created = check_status!(sys::napi_create_threadsafe_function(
                env.raw(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                name,
                0,
                1,
                context,
                Some(finalize),
                context,
                Some(run_queued),
                &mut tsfn,
            ));
            if let Err(e) = created {
                drop(Box::from_raw(context as *mut Arc<Shared>));
                return Err(e);
            }
            check_status!(sys::napi_unref_threadsafe_function(env.raw(), tsfn))?;
        }
        shared.tsfn.lock().unwrap_or_else(|e| e.into_inner()).0 = tsfn;
        Ok(Arc::new(Settler { shared }))
    }

    /// Queues `job` for the JS thread of the realm.
    pub(crate) fn call(&self, job: Job) {
        self.shared.push(job);
    }

    /// Keeps Node alive (`on`) while promises of the realm are pending, or lets it exit.
    pub(crate) fn hold(&self, env: &Env, on: bool) -> napi::Result<()> {
        let tsfn = self.shared.tsfn.lock().unwrap_or_else(|e| e.into_inner());
        if tsfn.0.is_null() {
            return Ok(());
        }
        // SAFETY: on the JS thread of the realm, on a function not finalized (checked under the lock).
        check_status!(unsafe {
            if on {
                sys::napi_ref_threadsafe_function(env.raw(), tsfn.0)
            } else {
                sys::napi_unref_threadsafe_function(env.raw(), tsfn.0)
            }
        })
    }
}

impl Shared {
    /// Queues `job`, and calls the function unless a call is already on its way.
    fn push(&self, job: Job) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if q.closed {
            // Dropped outside the lock: what the closure owns may settle something else.
            drop(q);
            drop(job);
            return;
        }
        q.jobs.push_back(job);
        if !q.scheduled {
            q.scheduled = self.wake();
        }
    }

    /// Asks the JS thread to run the queue. False when the function is finalized (nobody is
    /// left to see the promises: the queued closures are dropped with the realm's queue).
    fn wake(&self) -> bool {
        let tsfn = self.tsfn.lock().unwrap_or_else(|e| e.into_inner());
        if tsfn.0.is_null() {
            return false;
        }
        // SAFETY: a function not finalized (checked under the lock its finalizer takes).
        let status = unsafe {
            sys::napi_call_threadsafe_function(
                tsfn.0,
                std::ptr::null_mut(),
                sys::ThreadsafeFunctionCallMode::nonblocking,
            )
        };
        status == sys::Status::napi_ok
    }
}

/// The function's callback, on the JS thread: runs what is queued, up to `BATCH` closures.
unsafe extern "C" fn run_queued(env: sys::napi_env, _js: sys::napi_value, context: *mut c_void, _data: *mut c_void) {
    // A null environment: Node is emptying the queue of a function being finalized.
    if env.is_null() || context.is_null() {
        return;
    }
    // SAFETY: the context is the `Arc<Shared>` boxed by `Settler::new`, freed only by `finalize`,
    // which runs after the last callback.
    let shared = unsafe { &*(context as *const Arc<Shared>) };
    let jobs: Vec<Job> = {
        let mut q = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
        let n = q.jobs.len().min(BATCH);
        let jobs = q.jobs.drain(..n).collect();
        if q.jobs.is_empty() {
            q.scheduled = false;
        } else {
            // The rest on the next turn (this call counts as the one on its way).
            q.scheduled = shared.wake();
        }
        jobs
    };
    // A live environment, on its JS thread (N-API runs this callback there).
    let env = Env::from_raw(env);
    for job in jobs {
        job(&env);
    }
}

/// Node finalized the function (its environment is going away): it is never called again, and
/// what waits in the queue is dropped.
unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the box made by `Settler::new`; Node finalizes a function once.
    let shared = unsafe { Box::from_raw(data as *mut Arc<Shared>) };
    shared.tsfn.lock().unwrap_or_else(|e| e.into_inner()).0 = std::ptr::null_mut();
    let jobs = {
        let mut q = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.closed = true;
        std::mem::take(&mut q.jobs)
    };
    drop(jobs);
}
