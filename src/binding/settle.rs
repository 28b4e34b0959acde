//! The promises of a realm: made on the JS thread, settled from any thread through the realm's
//! one threadsafe function (`settler`), a core error rejecting with its typed JS error. Node
//! must stay alive while a promise is pending (an awaited `exitCode` is the only thing left to
//! do in many scripts) and must be free to exit when none is: the realm counts them.

use super::error::js_error;
use super::realm::Realm;
use super::settler::Settler;
use crate::core::error::{CoreError, CoreResult};
use napi::bindgen_prelude::{check_status, sys, PromiseRaw, ToNapiValue};
use napi::{Env, JsError};
use std::future::Future;
use std::sync::Arc;

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
            finish(env, d, ok, value);
        }));
    }
}

/// Settles the deferred, and counts one pending promise less.
fn finish(env: &Env, d: RawDeferred, ok: bool, value: sys::napi_value) {
    // SAFETY: the deferred is settled exactly once (taken out of its `Pending`), on its JS thread.
    unsafe {
        if ok {
            sys::napi_resolve_deferred(env.raw(), d.0, value);
        } else {
            sys::napi_reject_deferred(env.raw(), d.0, value);
        }
    }
    released(env);
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(d) = self.deferred.take() else { return };
        self.settler.call(Box::new(move |env: &Env| {
            let e = napi::Error::from_reason("procvisor: the native call stopped before it finished");
            // SAFETY: on the JS thread of the realm.
            let value = unsafe { JsError::from(e).into_value(env.raw()) };
            finish(env, d, false, value);
        }));
    }
}

/// Runs `fut` on the runtime and settles the promise on the JS thread (through the realm's one
/// settler), a core error becoming its typed JS error there. `fut` must own everything it uses.
pub(crate) fn promise<'env, T, V>(
    env: &'env Env,
    fut: impl Future<Output = CoreResult<T>> + Send + 'static,
    convert: impl FnOnce(T) -> V + Send + 'static,
) -> napi::Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: napi::bindgen_prelude::ToNapiValue + Send + 'static,
{
    let (pending, promise) = pending(env)?;
    napi::bindgen_prelude::spawn(async move { pending.settle(fut.await.map(convert)) });
    Ok(promise)
}
