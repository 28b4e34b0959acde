//! CoreError → a JS error of its own class with its stable `code`, built on the JS thread by the
//! factory that the JS layer registers once per realm (`registerRealm`). Every native function
//! and method that can fail goes through `js_error`, so no JS call site has to remember to wrap
//! anything and no message has to be parsed.

use super::realm::Realm;
use crate::core::error::{CoreError, ERROR_KINDS};
use napi::bindgen_prelude::{FnArgs, Unknown};
use napi::Env;
use napi_derive::napi;

pub(crate) fn js_error(env: &Env, e: CoreError) -> napi::Error {
    let made = (|| -> napi::Result<napi::Error> {
        let realm = env.get_instance_data::<Realm>()?.ok_or_else(|| napi::Error::from_reason("no realm"))?;
        let factory = realm.error_factory.borrow_back(env)?;
        let errno = match &e {
            CoreError::SpawnFailed { errno, .. } => *errno,
            _ => None,
        };
        let obj: Unknown = factory.call(FnArgs::from((e.code().to_string(), e.to_string(), e.os_code(), errno)))?;
        Ok(napi::Error::from(obj))
    })();
    // Without a realm (the addon used without its JS layer) the code leads the message.
    made.unwrap_or_else(|_| napi::Error::from_reason(format!("{}: {}", e.code(), e)))
}

pub(crate) fn invalid(env: &Env, name: &str, reason: &str) -> napi::Error {
    js_error(env, CoreError::invalid_option(name, reason))
}

/// One of procvisor's typed errors: its stable `code`, the `name` of its JS class, and the class
/// that one extends (`base`: `'ProcessError'`, `'RangeError'` or `'TypeError'`).
#[napi(object, object_from_js = false)]
pub struct ErrorCode {
    pub code: String,
    pub name: String,
    #[napi(ts_type = "'ProcessError' | 'RangeError' | 'TypeError'")]
    pub base: String,
}

/// Every typed error of procvisor, from the core's one list: the JS layer builds its classes
/// from it at load, so no code is defined twice.
#[napi]
pub fn error_codes() -> Vec<ErrorCode> {
    ERROR_KINDS
        .iter()
        .map(|k| ErrorCode { code: k.code.into(), name: k.name.into(), base: k.base.name().into() })
        .collect()
}
