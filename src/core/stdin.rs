//! The stdin of one process: writes and the EOF go through one channel to one writer task, so
//! they reach the pipe in call order. Writes are refused once the root has exited (`shut`), and
//! then the writer ends and our end of the pipe closes.

use crate::core::command::StdinMode;
use crate::core::error::{CoreError, CoreResult};
use crate::core::pipe;
use bytes::Bytes;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::{mpsc, oneshot};

enum Op {
    Write(Bytes, oneshot::Sender<CoreResult<()>>),
    Close(oneshot::Sender<CoreResult<()>>),
}

pub struct Stdin {
    pid: u32,
    mode: StdinMode,
    tx: Mutex<Option<mpsc::UnboundedSender<Op>>>,
    closed: AtomicBool,
}

impl Stdin {
    /// Starts the writer task for `fd` (none for an ignored stdin). Inside a tokio runtime.
    /// With `terminal`, `fd` is a terminal's master: EOF is the terminal's EOF character, not a
    /// close (closing our end would not reach the program, which reads the slave).
    pub fn start(pid: u32, mode: StdinMode, fd: Option<OwnedFd>, terminal: bool) -> Self {
        let tx = fd.map(|fd| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(writer(pid, fd, rx, terminal));
            tx
        });
        Self { pid, mode, tx: Mutex::new(tx), closed: AtomicBool::new(false) }
    }

    /// Refuses writes from now on and lets the writer close the pipe. Held until the handle was
    /// dropped, the pipe cost one descriptor per exited process that a program kept a handle to.
    pub fn shut(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// `exited` is the root's exit code once it has exited.
    fn sender(&self, exited: Option<i32>) -> CoreResult<mpsc::UnboundedSender<Op>> {
        if self.mode == StdinMode::Ignore {
            return Err(CoreError::StdinIgnored(self.pid));
        }
        if let Some(code) = exited {
            return Err(CoreError::AlreadyExited { pid: self.pid, code });
        }
        let guard = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        guard.clone().ok_or(CoreError::StdinClosed(self.pid))
    }

    /// Writes `data`; resolves once written. Ordered with other writes and the close.
    pub async fn write(&self, data: Bytes, exited: Option<i32>) -> CoreResult<()> {
        let tx = self.sender(exited)?;
        let (reply, rx) = oneshot::channel();
        tx.send(Op::Write(data, reply)).map_err(|_| CoreError::StdinClosed(self.pid))?;
        rx.await.unwrap_or(Err(CoreError::StdinClosed(self.pid)))
    }

    /// Sends EOF once everything written before has been written. Idempotent.
    pub async fn close(&self, exited: Option<i32>) -> CoreResult<()> {
        if self.closed.load(Ordering::Acquire) && self.mode == StdinMode::Pipe {
            return Ok(());
        }
        let tx = self.sender(exited)?;
        self.closed.store(true, Ordering::Release);
        self.shut();
        let (reply, rx) = oneshot::channel();
        if tx.send(Op::Close(reply)).is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }
}

async fn writer(pid: u32, fd: OwnedFd, mut rx: mpsc::UnboundedReceiver<Op>, terminal: bool) {
    let Ok(mut pipe) = pipe::AsyncPipe::new(fd) else {
        return;
    };
    while let Some(op) = rx.recv().await {
        match op {
            Op::Write(data, reply) => {
                let r = pipe.write_all(&data).await.map_err(|e| CoreError::StdinWrite {
                    pid,
                    reason: if e.raw_os_error() == Some(libc::EPIPE) {
                        "the process closed its stdin or exited (EPIPE)".into()
                    } else {
                        e.to_string()
                    },
                });
                let _ = reply.send(r);
            }
            Op::Close(reply) => {
                // ^D at the start of a line: the program's read returns 0 (in the usual mode).
                let r = if terminal {
                    pipe.write_all(b"\x04").await.map_err(|e| CoreError::StdinWrite { pid, reason: e.to_string() })
                } else {
                    Ok(())
                };
                drop(pipe);
                let _ = reply.send(r);
                // Writes queued after a close fail: their senders see the channel closed.
                return;
            }
        }
    }
}
