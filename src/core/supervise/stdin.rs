//! The stdin of one process: writes and the EOF go through one channel to one writer task, so
//! they reach the pipe in call order. Writes are refused once the root has exited (`shut`), and
//! then the writer ends and our end of the pipe closes.
//!
//! The writer starts at the first write: most processes are never written to (every Mastra
//! `spawn` has a stdin pipe), and a writer made at the launch cost each of them a task, a wake
//! of a runtime worker to run it, and the pipe's registration with epoll and its removal.

use crate::core::error::{CoreError, CoreResult};
use crate::core::launch::command::StdinMode;
use crate::core::supervise::pipe;
use bytes::Bytes;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::{mpsc, oneshot, watch};

enum Op {
    Write(Bytes, oneshot::Sender<CoreResult<()>>),
    Close(oneshot::Sender<CoreResult<()>>),
}

/// Our end of the pipe: alone until the first write, then owned by the writer task.
enum End {
    /// Not written to yet. `terminal`: the fd is a terminal's master.
    Idle {
        fd: OwnedFd,
        terminal: bool,
    },
    Writing(mpsc::UnboundedSender<Op>),
    /// Closed, or shut at the exit (or none: an ignored stdin).
    Shut,
}

pub struct Stdin {
    pid: u32,
    mode: StdinMode,
    end: Mutex<End>,
    closed: AtomicBool,
    /// Set at the root's exit: a write still pending then fails rather than wait for a reader
    /// that may never come (a terminal in raw mode whose program is gone never drains).
    gone: watch::Sender<bool>,
}

impl Stdin {
    /// The stdin of a process, `fd` its pipe's end (none for an ignored stdin). With `terminal`,
    /// `fd` is a terminal's master: EOF is the terminal's EOF character, not a close (closing our
    /// end would not reach the program, which reads the slave).
    pub fn start(pid: u32, mode: StdinMode, fd: Option<OwnedFd>, terminal: bool) -> Self {
        let end = fd.map_or(End::Shut, |fd| End::Idle { fd, terminal });
        Self { pid, mode, end: Mutex::new(end), closed: AtomicBool::new(false), gone: watch::Sender::new(false) }
    }

    /// Refuses writes from now on and lets the writer close the pipe. Held until the handle was
    /// dropped, the pipe cost one descriptor per exited process that a program kept a handle to.
    pub fn shut(&self) {
        *self.end.lock().unwrap_or_else(|e| e.into_inner()) = End::Shut;
    }

    /// The root has exited: writes are refused from now on, and one still pending fails.
    pub fn exited(&self) {
        self.shut();
        self.gone.send_replace(true);
    }

    /// `exited` is the root's exit code once it has exited.
    fn check(&self, exited: Option<i32>) -> CoreResult<()> {
        if self.mode == StdinMode::Ignore {
            return Err(CoreError::StdinIgnored(self.pid));
        }
        match exited {
            Some(code) => Err(CoreError::AlreadyExited { pid: self.pid, code }),
            None => Ok(()),
        }
    }

    /// The writer's channel, the writer started at the first call (on the calling runtime).
    fn sender(&self, exited: Option<i32>) -> CoreResult<mpsc::UnboundedSender<Op>> {
        self.check(exited)?;
        let mut end = self.end.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *end, End::Shut) {
            End::Writing(tx) => {
                *end = End::Writing(tx.clone());
                Ok(tx)
            }
            End::Idle { fd, terminal } => {
                // Called from a future of ours, so on a runtime; without one the pipe is closed
                // rather than the process left with a stdin nobody can write.
                let rt = tokio::runtime::Handle::try_current()
                    .map_err(|e| CoreError::StdinWrite { pid: self.pid, reason: e.to_string() })?;
                let (tx, rx) = mpsc::unbounded_channel();
                rt.spawn(writer(self.pid, fd, rx, terminal, self.gone.subscribe()));
                *end = End::Writing(tx.clone());
                Ok(tx)
            }
            End::Shut => Err(CoreError::StdinClosed(self.pid)),
        }
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
        self.check(exited)?;
        {
            // Never written to: nothing is queued before the EOF, which for a pipe is its close.
            let mut end = self.end.lock().unwrap_or_else(|e| e.into_inner());
            if matches!(&*end, End::Idle { terminal: false, .. }) {
                self.closed.store(true, Ordering::Release);
                *end = End::Shut;
                return Ok(());
            }
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

async fn writer(
    pid: u32,
    fd: OwnedFd,
    mut rx: mpsc::UnboundedReceiver<Op>,
    terminal: bool,
    mut gone: watch::Receiver<bool>,
) {
    let Ok(mut pipe) = pipe::AsyncPipe::new(fd) else {
        return;
    };
    let failed = |reason: String| CoreError::StdinWrite { pid, reason };
    while let Some(op) = rx.recv().await {
        match op {
            Op::Write(data, reply) => {
                let r = tokio::select! {
                    // A write that can complete completes, even as the root exits.
                    biased;
                    r = pipe.write_all(&data) => r.map_err(|e| {
                        failed(match e.raw_os_error() {
                            Some(libc::EPIPE) => "the process closed its stdin or exited (EPIPE)".into(),
                            Some(libc::EIO) if terminal => "the terminal was hung up: its program is gone (EIO)".into(),
                            _ => e.to_string(),
                        })
                    }),
                    _ = gone.wait_for(|g| *g) => Err(failed("the process exited before it read this input".into())),
                };
                let failed = r.is_err();
                let _ = reply.send(r);
                if failed && *gone.borrow() {
                    // Nothing more can be written: the writes queued behind fail as the channel closes.
                    return;
                }
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
