//! What goes into a process: its stdin, and the terminal of one started on a pseudo-terminal
//! (its window size, Ctrl-C to its foreground job). A second `impl Process`, apart from the
//! lifecycle and the signals in `process`.

use crate::core::error::{CoreError, CoreResult};
use crate::core::supervise::process::Process;
use crate::core::supervise::stdin::Stdin;
use bytes::Bytes;
use std::sync::Arc;

impl Process {
    pub(super) fn stdin(&self) -> Arc<Stdin> {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn exited_code(&self) -> Option<i32> {
        self.state.borrow().root_exit.map(|r| r.code)
    }

    /// Writes to stdin; resolves once written. Ordered with other writes.
    pub async fn write_stdin(&self, data: Bytes) -> CoreResult<()> {
        self.stdin().write(data, self.exited_code()).await
    }

    /// Sends EOF once everything written before has been written. Idempotent.
    pub async fn close_stdin(&self) -> CoreResult<()> {
        self.stdin().close(self.exited_code()).await
    }

    /// Sets the terminal's window size; the kernel sends SIGWINCH to its foreground group.
    pub fn resize(&self, cols: u16, rows: u16) -> CoreResult<()> {
        if !self.has_terminal {
            return Err(CoreError::NoTerminal(self.pid()));
        }
        let guard = self.terminal.lock().unwrap_or_else(|e| e.into_inner());
        let (Some(master), None) = (guard.as_ref(), self.exited_code()) else {
            return Err(CoreError::AlreadyExited { pid: self.pid(), code: self.exited_code().unwrap_or(0) });
        };
        // Before the kernel's size: a refused size changes nothing, for the program or the screen.
        if self.output.has_screen() {
            crate::core::terminal::screen::check_size(cols, rows)?;
        }
        crate::core::launch::pty::set_window_size(master, cols, rows).map_err(|e| CoreError::SpawnFailed {
            program: self.argv[0].clone(),
            reason: format!("cannot resize its terminal: {e}"),
            errno: e.raw_os_error(),
        })?;
        self.output.resize_screen(cols, rows);
        Ok(())
    }

    /// SIGINT to the terminal's foreground process group (the job in front, not the shell
    /// behind it), as Ctrl-C would, without going through the terminal's input queue.
    pub fn interrupt(&self) -> CoreResult<bool> {
        use std::os::fd::AsRawFd;
        if !self.has_terminal {
            return Err(CoreError::NoTerminal(self.pid()));
        }
        let guard = self.terminal.lock().unwrap_or_else(|e| e.into_inner());
        let (Some(master), None) = (guard.as_ref(), self.exited_code()) else {
            return Err(CoreError::AlreadyExited { pid: self.pid(), code: self.exited_code().unwrap_or(0) });
        };
        // SAFETY: plain queries and a signal; a foreground group of 0 or 1 is never signalled.
        let fg = unsafe { libc::tcgetpgrp(master.as_raw_fd()) };
        let fg = if fg > 1 { fg } else { self.pid() as i32 };
        Ok(unsafe { libc::killpg(fg, libc::SIGINT) } == 0)
    }
}
