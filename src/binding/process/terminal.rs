//! A process on a terminal, as JS drives it: its window size, its screen, Ctrl-C.

use super::NativeProcess;
use crate::binding::error::js_error;
// `resize(cols, rows)` takes any JS values: the core names a bad one as JS would.
use crate::binding::value::value_of;
use crate::core::error::CoreError;
use crate::core::launch::options;
use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;

/// What a terminal shows now (0-based rows and columns).
#[napi(object, object_from_js = false)]
pub struct NativeSnapshot {
    pub cols: u32,
    pub rows: u32,
    /// One string per row, trailing blanks removed.
    pub lines: Vec<String>,
    pub cursor_row: u32,
    pub cursor_col: u32,
    pub title: String,
}

#[napi]
impl NativeProcess {
    /// Sets the window size of the process's terminal (`cols` and `rows` as JS gave them); a
    /// terminal that keeps a screen refuses one past `screen::MAX_CELLS`.
    #[napi(ts_args_type = "cols: unknown, rows: unknown")]
    pub fn resize(&self, env: &Env, cols: Unknown<'_>, rows: Unknown<'_>) -> napi::Result<()> {
        let (cols, rows) = (value_of(&cols)?, value_of(&rows)?);
        options::window_size(&cols, &rows).and_then(|(c, r)| self.inner.resize(c, r)).map_err(|e| js_error(env, e))
    }

    /// What the process's terminal shows now, rendered from its output.
    #[napi]
    pub fn snapshot(&self, env: &Env) -> napi::Result<NativeSnapshot> {
        let s = self.inner.output.snapshot().ok_or_else(|| js_error(env, CoreError::NoTerminal(self.inner.pid())))?;
        Ok(NativeSnapshot {
            cols: s.cols as u32,
            rows: s.rows as u32,
            lines: s.lines,
            cursor_row: s.cursor_row as u32,
            cursor_col: s.cursor_col as u32,
            title: s.title,
        })
    }

    /// SIGINT to the terminal's foreground process group. False when it reached no process.
    #[napi]
    pub fn interrupt(&self, env: &Env) -> napi::Result<bool> {
        self.inner.interrupt().map_err(|e| js_error(env, e))
    }
}
