//! The launch request as the JS layer builds it (`request()` in lib/faces/manager.js), typed.

use super::value::Loose;
use crate::core::launch::request::Request;
use napi_derive::napi;

/// A launch: the call's own `command` and `options` as the user gave them, over the environment
/// layers and the working directory they resolve against. The core reads their meaning.
#[napi(object, object_to_js = false)]
pub struct LaunchRequest {
    #[napi(ts_type = "unknown")]
    pub command: Option<Loose>,
    #[napi(ts_type = "unknown")]
    pub options: Option<Loose>,
    /// The layers under the call's own `options.env`, later ones winning.
    #[napi(ts_type = "Array<Record<string, string | undefined>>")]
    pub env: Vec<Loose>,
    /// The manager's working directory.
    pub cwd: String,
    #[napi(ts_type = "'cgroup' | 'process-group'")]
    pub containment: Option<String>,
    #[napi(ts_type = "NativeLogFiles")]
    pub log_files: Option<Loose>,
}

impl From<LaunchRequest> for Request {
    fn from(r: LaunchRequest) -> Request {
        let loose = |v: Option<Loose>| v.map(|l| l.0).unwrap_or_default();
        Request {
            command: loose(r.command),
            options: loose(r.options),
            env: r.env.into_iter().map(|l| l.0).collect(),
            cwd: r.cwd,
            containment: r.containment,
            log_files: loose(r.log_files),
        }
    }
}
