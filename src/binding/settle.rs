//! Promises settled from the runtime through one threadsafe function per realm.
//!
//! napi-rs gives every deferred promise a threadsafe function of its own: created on the JS
//! thread (an async handle, a cleanup hook, a reference), called once, then closed and finalized
//! on a later turn of the loop. A launch settles two promises (started, then exited), so that was
//! most of the native work the JS thread did per spawn. Here a realm has one threadsafe function,
//! made once; each settlement is a queued closure that it runs on the JS thread.
//!
//! Node must stay alive while a promise is pending (an awaited `exitCode` is the only thing left
//! to do in many scripts) and must be free to exit when none is: the function is weak, and
//! referenced only while the realm has pending promises (a count kept on the JS thread).
//!
//! A realm that goes away (a worker terminated) aborts the function first: a settlement that
//! arrives later is dropped with its closure, never run against a freed environment.

use super::error::js_error;
use super::realm::Realm;
use crate::core::error::CoreError;
use napi::bindgen_prelude::{check_status, sys, Function, PromiseRaw, Status, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsError};
use std::sync::{Arc, Mutex};

/// Work for the JS thread: settle one promise.
type Job = Box<dyn FnOnce(&Env) + Send>;

type SettleFn = ThreadsafeFunction<Job, (), (), Status, false, true>;

/// A realm's one threadsafe function for settling promises.
pub(crate) struct Settler {
    tsfn: Mutex<SettleFn>,
}

impl Settler {
    /// Made by `registerRealm`, on `noop` (the function a call lands on after its closure ran).
    pub(crate) fn new(noop: Function<(), ()>) -> napi::Result<Arc<Settler>> {
        let tsfn = noop.build_threadsafe_function::<Job>().weak::<true>().callee_handled::<false>().build_callback(
            |ctx: ThreadsafeCallContext<Job>| {
                (ctx.value)(&ctx.env);
                released(&ctx.env);
                Ok(())
            },
        )?;
        Ok(Arc::new(Settler { tsfn: Mutex::new(tsfn) }))
    }

    fn call(&self, job: Job) {
        let tsfn = self.tsfn.lock().unwrap_or_else(|e| e.into_inner());
        // Closing (the realm is gone): the job is dropped, and nobody is left to see the promise.
        let _ = tsfn.call(job, ThreadsafeFunctionCallMode::NonBlocking);
    }

    #[allow(deprecated)] // `refer`/`unref` are exactly the one reference this needs.
    fn hold(&self, env: &Env, on: bool) -> napi::Result<()> {
        let mut tsfn = self.tsfn.lock().unwrap_or_else(|e| e.into_inner());
        if on {
            tsfn.refer(env)
        } else {
            tsfn.unref(env)
        }
    }
}

/// One settled promise less: the last one lets Node exit again.
fn released(env: &Env) {
    let _ = keep_alive(env, false);
}

/// One wait more (`on`) or less that keeps Node alive, counted with the pending promises: a wait
/// that no promise stands for (a reader waiting for its wake-up).
pub(crate) fn keep_alive(env: &Env, on: bool) -> napi::Result<()> {
    let Some(realm) = env.get_instance_data::<Realm>()? else { return Ok(()) };
    if on {
        if realm.pending == 0 {
            realm.settler.hold(env, true)?;
        }
        realm.pending += 1;
    } else {
        realm.pending = realm.pending.saturating_sub(1);
        if realm.pending == 0 {
            realm.settler.hold(env, false)?;
        }
    }
    Ok(())
}

struct RawDeferred(sys::napi_deferred);
// SAFETY: the pointer is only handed back to napi on the JS thread of its realm (inside a job).
unsafe impl Send for RawDeferred {}

/// A promise waiting to be settled, from any thread. Dropped unsettled (its future was dropped
/// by a runtime that shut down), it rejects rather than leaving Node waiting for ever.
pub(crate) struct Pending {
    deferred: Option<RawDeferred>,
    settler: Arc<Settler>,
}

/// A new pending promise of the calling realm (JS thread).
pub(crate) fn pending<'env, V>(env: &'env Env) -> napi::Result<(Pending, PromiseRaw<'env, V>)> {
    let settler =
        env.get_instance_data::<Realm>()?.ok_or_else(|| napi::Error::from_reason("no realm"))?.settler.clone();
    let mut deferred = std::ptr::null_mut();
    let mut promise = std::ptr::null_mut();
    // SAFETY: plain napi call on the JS thread with valid out pointers.
    check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
    keep_alive(env, true)?;
    let pending = Pending { deferred: Some(RawDeferred(deferred)), settler };
    Ok((pending, PromiseRaw::new(env.raw(), promise)))
}

impl Pending {
    /// Settles with `r`: resolved with the value, or rejected with the error's own JS class.
    pub(crate) fn settle<V: ToNapiValue + Send + 'static>(mut self, r: Result<V, CoreError>) {
        let Some(d) = self.deferred.take() else { return };
        self.settler.call(Box::new(move |env: &Env| {
            let raw = env.raw();
            let (ok, value) = match r {
                // SAFETY: on the JS thread of the realm, inside a handle scope of the call.
                Ok(v) => match unsafe { V::to_napi_value(raw, v) } {
                    Ok(value) => (true, value),
                    Err(e) => (false, unsafe { JsError::from(e).into_value(raw) }),
                },
                Err(e) => (false, unsafe { JsError::from(js_error(env, e)).into_value(raw) }),
            };
            finish(raw, d, ok, value);
        }));
    }
}

fn finish(env: sys::napi_env, d: RawDeferred, ok: bool, value: sys::napi_value) {
    // SAFETY: the deferred is settled exactly once (taken out of its `Pending`), on its JS thread.
    unsafe {
        if ok {
            sys::napi_resolve_deferred(env, d.0, value);
        } else {
            sys::napi_reject_deferred(env, d.0, value);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(d) = self.deferred.take() else { return };
        self.settler.call(Box::new(move |env: &Env| {
            let e = napi::Error::from_reason("procvisor: the native call stopped before it finished");
            // SAFETY: on the JS thread of the realm.
            let value = unsafe { JsError::from(e).into_value(env.raw()) };
            finish(env.raw(), d, false, value);
        }));
    }
}
