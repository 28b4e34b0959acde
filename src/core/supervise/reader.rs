//! The reader of one stream of a process: its pipe moved into the process's output, read by a
//! runtime task or lent to the consumer's thread when it floods, and drained without waiting
//! for writers outside the group once the group is gone.

use crate::core::output::block::ReadBuf;
use crate::core::output::consumers::ReaderWait;
use crate::core::output::loan;
use crate::core::output::log::Stream;
use crate::core::supervise::pipe;
use crate::core::supervise::process::Process;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use tokio::sync::watch;

impl Process {
    pub(crate) async fn read_stream(self: &Arc<Self>, fd: OwnedFd, stream: Stream) {
        let Ok(mut reader) = pipe::AsyncPipe::new(fd) else {
            self.output.end_stream(stream);
            return;
        };
        // The read buffer is allocated at the first output, not at spawn: an idle child (a server
        // waiting for requests, a `sleep`) then costs no buffer at all. Allocated up front, the
        // 2 × 256 KiB made 1,000 idle children cost about 250 MB of RSS. It starts small and
        // grows once a read fills it: most children write a few lines or nothing (then the first
        // readiness is the end of file), and zeroing 256 KiB per stream cost more CPU than the
        // rest of such a child's reading.
        const FIRST: usize = 4 * 1024;
        let mut buf = ReadBuf::small(0);
        let mut drain = self.drain.subscribe();
        let mut lend = true;
        let mut reader_stalled = false;
        loop {
            let r = tokio::select! {
                r = async {
                    if buf.is_empty() {
                        reader.readable().await?;
                        buf = ReadBuf::small(FIRST);
                    }
                    reader.read(buf.bytes_mut()).await
                } => Some(r),
                _ = async { let _ = drain.wait_for(|d| *d).await; } => None,
            };
            match r {
                Some(Ok(0)) | Some(Err(_)) => break,
                Some(Ok(n)) => {
                    let filled = n == buf.len();
                    self.output.push_read(stream, &mut buf, n);
                    if filled && buf.len() == FIRST {
                        buf = ReadBuf::block();
                    }
                    reader_stalled = self.backpressure_while_reading(&mut drain, reader_stalled).await;
                    if lend && reader.flooded() && self.output.can_lend() {
                        let (back, lent) = self.lend(reader, stream, &mut drain).await;
                        match back {
                            Some(r) => reader = r,
                            None => break,
                        }
                        // Lent once: a stream whose offer was not taken, or that came back, stays here.
                        lend = !lent;
                        if lent {
                            // The borrower stops once a read of its own made a consumer lag, and
                            // gives the pipe back lagging (the runtime took it back, or it went
                            // away). A read here before the wait would be a second one past the
                            // rule, and with the other stream's it overran the log: a 256 KiB
                            // block the consumer had not taken was evicted.
                            reader_stalled = self.backpressure_while_reading(&mut drain, reader_stalled).await;
                        }
                    }
                }
                None => {
                    // The group is gone; take what is buffered without waiting for writers outside it.
                    // Most often that is nothing but the end of file, so the buffer grows only as
                    // reads fill it.
                    if buf.is_empty() {
                        buf = ReadBuf::small(FIRST);
                    }
                    while let Ok(n) = reader.read_now(buf.bytes_mut()) {
                        if n == 0 {
                            break;
                        }
                        let filled = n == buf.len();
                        self.output.push_read(stream, &mut buf, n);
                        if filled && buf.len() == FIRST {
                            buf = ReadBuf::block();
                        }
                        // A full pipe (1 MiB) drained at once would overrun a listener pump or
                        // reader that lags; the group is dead, so waiting here holds nothing up.
                        reader_stalled = self.backpressure_after_group(reader_stalled).await;
                    }
                    break;
                }
            }
        }
        self.output.end_stream(stream);
    }

    /// The one lag rule before the next read: every consumer is waited for while the group lives,
    /// then as `backpressure_after_group` says. Returns whether the reader is stalled.
    async fn backpressure_while_reading(&self, drain: &mut watch::Receiver<bool>, stalled: bool) -> bool {
        let group_gone = tokio::select! {
            _ = self.output.backpressure(ReaderWait::Always) => false,
            // Waiting for a reader without end here, a reader paused for good kept a dead
            // process unfinished for ever.
            _ = drain.wait_for(|d| *d) => true,
        };
        if group_gone {
            return self.backpressure_after_group(stalled).await;
        }
        stalled
    }

    /// The one lag rule once the group is gone: listeners are waited for as ever, a reader that
    /// lags only until it has made no progress for a while, and, once found stalled (`stalled`),
    /// not again: the pipe can hold several reads. Returns whether the reader is stalled.
    async fn backpressure_after_group(&self, stalled: bool) -> bool {
        if stalled {
            self.output.backpressure(ReaderWait::Never).await;
            return true;
        }
        self.output.backpressure(ReaderWait::ForAWhile).await
    }

    /// Offers the flooding pipe to the pump's side (see `loan`) and waits for it to come back;
    /// says whether it was offered at all. The pipe is `None` when the borrower read to the end
    /// (or the pipe cannot be watched again): the stream is over.
    async fn lend(
        &self,
        reader: pipe::AsyncPipe,
        stream: Stream,
        drain: &mut watch::Receiver<bool>,
    ) -> (Option<pipe::AsyncPipe>, bool) {
        let loan = match self.output.offer(stream, reader.into_fd()) {
            Ok(loan) => loan,
            Err(fd) => return (pipe::AsyncPipe::new(fd).ok(), false),
        };
        let first = tokio::select! {
            back = loan.returned() => Some(back),
            _ = tokio::time::sleep(loan::TAKE_PATIENCE) => None,
            _ = drain.wait_for(|d| *d) => None,
        };
        let back = match first {
            Some(back) => back,
            // Taken back at once when nobody took it in time; else the borrower is reading.
            None => match loan.take() {
                Some(fd) => loan::Back::Returned(fd),
                None => self.reclaim_when_drained(&loan, drain).await,
            },
        };
        self.output.loan_over(stream);
        let reader = match back {
            loan::Back::Returned(fd) => pipe::AsyncPipe::new(fd).ok(),
            loan::Back::Ended => None,
        };
        (reader, true)
    }

    /// Waits for a lent pipe; once the group is gone, asks for it back, so that what is
    /// buffered is taken without waiting for writers outside the group.
    async fn reclaim_when_drained(&self, loan: &loan::Loan, drain: &mut watch::Receiver<bool>) -> loan::Back {
        tokio::select! {
            back = loan.returned() => return back,
            _ = drain.wait_for(|d| *d) => {}
        }
        loan.request_reclaim();
        self.output.wake_for_reclaim();
        loan.returned().await
    }
}
