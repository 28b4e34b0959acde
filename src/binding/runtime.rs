//! The runtime napi-rs runs our futures on, sized for launches (see `launcher::runtime_workers`).
//!
//! Set once, when the addon is loaded (napi-rs takes a runtime only from its module
//! initializer). Should napi-rs ever shut it down (the last JS environment that used the addon
//! went away) and start again, it starts its default runtime: one worker per CPU, slower to
//! launch many processes at once, otherwise the same.

use crate::core::launch::launcher;

#[napi_derive::module_init]
fn init_runtime() {
    // Building can fail only where threads cannot be made; napi-rs then builds its own runtime
    // at first use and reports that failure there.
    if let Ok(rt) =
        tokio::runtime::Builder::new_multi_thread().worker_threads(launcher::runtime_workers()).enable_all().build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(rt);
    }
}
