//! A log pattern for JS: a RegExp's source and flags compiled by the core's linear-time engine.

use super::error::js_error;
use crate::core::output::pattern;
use napi::Env;
use napi_derive::napi;

/// A pattern to find in output, matched in linear time (see the core's `pattern`).
#[napi]
pub struct LogPattern {
    inner: pattern::Pattern,
}

/// Where a pattern matched: its start in UTF-16 code units, and the matched text.
#[napi(object)]
pub struct PatternMatch {
    pub index: u32,
    pub text: String,
}

#[napi]
impl LogPattern {
    /// Compiles a RegExp's `source` and `flags`; an `InvalidProcessOptionError` names what cannot
    /// be matched in linear time (lookaround, backreferences) or is too large.
    #[napi(constructor)]
    pub fn new(env: Env, source: String, flags: String) -> napi::Result<Self> {
        pattern::Pattern::new(&source, &flags).map(|inner| Self { inner }).map_err(|e| js_error(&env, e))
    }

    /// The first match in `text`, or null.
    #[napi]
    pub fn find(&self, text: String) -> Option<PatternMatch> {
        self.inner.find(&text).map(|f| PatternMatch { index: f.index as u32, text: f.text })
    }
}
