//! Output bytes handed to JS as a `Buffer` *copied into V8's memory* (`napi_create_buffer_copy`).
//! An external buffer (`Buffer::from(Vec)`) is invisible to V8's GC heuristics: a fast producer
//! then piles up hundreds of megabytes of dead buffers behind a tiny heap (measured: +800 MB RSS
//! for 1 GiB through a listener). A copy is accounted, so garbage is collected in step.

use crate::core::output::text::Text;
use bytes::Bytes;
use napi::bindgen_prelude::{check_status, sys, FromNapiValue, ToNapiValue, TypeName, ValueType};

pub struct JsBytes(pub Bytes);

impl TypeName for JsBytes {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for JsBytes {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let mut out = std::ptr::null_mut();
        let mut data = std::ptr::null_mut();
        // SAFETY: `val.0` is valid for its length; napi copies it before returning.
        check_status!(
            unsafe { sys::napi_create_buffer_copy(env, val.0.len(), val.0.as_ptr().cast(), &mut data, &mut out) },
            "failed to create an output Buffer"
        )?;
        Ok(out)
    }
}

impl FromNapiValue for JsBytes {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: forwarded to napi's own Buffer conversion.
        let b = unsafe { napi::bindgen_prelude::Buffer::from_napi_value(env, value)? };
        Ok(JsBytes(Bytes::copy_from_slice(&b)))
    }
}

/// Output chunks handed to JS as one `Buffer`, copied once into V8's memory (see above).
pub struct JsChunks(pub Vec<Bytes>);

impl TypeName for JsChunks {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for JsChunks {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        if let [one] = &val.0[..] {
            // SAFETY: the same call with the same arguments, for a single chunk.
            return unsafe { JsBytes::to_napi_value(env, JsBytes(one.clone())) };
        }
        let len = val.0.iter().map(Bytes::len).sum();
        let mut out = std::ptr::null_mut();
        let mut data: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: napi allocates `len` bytes at `data`, which we fill before returning.
        check_status!(
            unsafe { sys::napi_create_buffer(env, len, &mut data, &mut out) },
            "failed to create an output Buffer"
        )?;
        let mut at = 0;
        for c in &val.0 {
            // SAFETY: `data` holds `len` bytes, the sum of the chunks' lengths.
            unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), data.cast::<u8>().add(at), c.len()) };
            at += c.len();
        }
        Ok(out)
    }
}

/// Listener text for JS: a piece of the decoded output shared with the core (no copy before
/// V8's own), or a few small pieces gathered into one string.
pub enum JsText {
    Shared(Text),
    Owned(String),
}

impl TypeName for JsText {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for JsText {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let s = match &val {
            JsText::Shared(t) => t.as_str(),
            JsText::Owned(s) => s.as_str(),
        };
        let mut out = std::ptr::null_mut();
        if matches!(&val, JsText::Shared(t) if t.is_ascii()) {
            // SAFETY: ASCII is Latin-1 byte for byte; napi copies it before returning.
            check_status!(
                unsafe { sys::napi_create_string_latin1(env, s.as_ptr().cast(), s.len() as isize, &mut out) },
                "failed to create an output string"
            )?;
            return Ok(out);
        }
        // SAFETY: `s` is valid UTF-8 for its length; napi copies it before returning.
        check_status!(
            unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut out) },
            "failed to create an output string"
        )?;
        Ok(out)
    }
}
