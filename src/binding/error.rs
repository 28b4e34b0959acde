//! CoreError → napi::Error, with the stable code up front for the JS layer to parse.

use crate::core::error::CoreError;

pub(crate) fn to_napi(e: CoreError) -> napi::Error {
    napi::Error::new(napi::Status::GenericFailure, format!("[{}] {}", e.code(), e))
}

pub(crate) fn invalid(name: &str, reason: &str) -> napi::Error {
    to_napi(CoreError::invalid_option(name, reason))
}
