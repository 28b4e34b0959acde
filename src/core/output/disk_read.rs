//! Reading the log back from its files (`disk`), for a position the memory ring no longer
//! holds. Every event is in a kept file (up to `written`) or still in the writer's queue, unless
//! rotation would have deleted it anyway (then it was never written), so a read goes on from the
//! exact position asked for while the files still have it, and says `truncated` (starting at the
//! next event they have) once they do not.

use crate::core::output::disk::DiskLog;
use crate::core::output::disk_frame::{self, HEADER};
use crate::core::output::log::{LogEvent, LogRead};
use std::fs::File;
use std::io::{BufReader, Read};

/// A position the writer is moving from the queue to a file may be in neither at a glance:
/// looked for again this many times.
const ATTEMPTS: usize = 3;

impl DiskLog {
    /// Events after `after`, about `max_bytes` of output at most (at least one event), from the
    /// files or the queue; `None` when neither has the event after `after` nor any older one
    /// (the memory ring then answers, `truncated` if it no longer has it either). Blocking: it
    /// reads files.
    pub fn read_after(&self, after: u64, max_bytes: usize) -> Option<LogRead> {
        for _ in 0..ATTEMPTS {
            if let Some(read) = self.read_files(after, max_bytes) {
                return read;
            }
            let q = self.queue_lock();
            match q.events.front() {
                Some(front) if front.seq <= after + 1 => {
                    let mut out = LogRead { truncated: false, events: Vec::new(), next: after };
                    let mut taken = 0;
                    for ev in q.events.iter().filter(|e| e.seq > after) {
                        let w = weight(ev);
                        if !out.events.is_empty() && taken + w > max_bytes {
                            break;
                        }
                        taken += w;
                        out.next = ev.seq;
                        out.events.push(ev.clone());
                    }
                    return (!out.events.is_empty()).then_some(out);
                }
                Some(_) => continue,
                None => return None,
            }
        }
        None
    }

    /// `None`: the files do not reach past `after`; `Some(None)`: they should but could not be
    /// read (gone, or damaged), so the memory ring answers.
    fn read_files(&self, after: u64, max_bytes: usize) -> Option<Option<LogRead>> {
        let (file, written, from, truncated) = {
            let k = self.kept_lock();
            let oldest = *k.firsts.front()?;
            if after >= k.written {
                return None;
            }
            let (from, truncated) = if after + 1 < oldest { (oldest, true) } else { (after + 1, false) };
            let i = k.firsts.iter().rposition(|&first| first <= from).unwrap_or(0);
            let back = k.firsts.len() - 1 - i;
            // Opened under the lock, so that no rotation renames it between the look and the open.
            (File::open(self.path(back)), k.written, from, truncated)
        };
        let Ok(file) = file else { return Some(None) };
        let mut out = LogRead { truncated, events: Vec::new(), next: from - 1 };
        let mut r = BufReader::with_capacity(64 * 1024, file);
        let mut taken = 0;
        let mut head = [0u8; HEADER];
        while r.read_exact(&mut head).is_ok() {
            let Some(h) = disk_frame::header(&head) else { break };
            if h.seq > written {
                break;
            }
            if h.seq < from {
                if r.seek_relative(h.len as i64).is_err() {
                    break;
                }
                continue;
            }
            if !out.events.is_empty() && taken + h.len > max_bytes {
                break;
            }
            let mut payload = vec![0u8; h.len];
            if r.read_exact(&mut payload).is_err() {
                break;
            }
            let Some(ev) = disk_frame::event(&h, payload) else { break };
            if ev.seq != out.next + 1 {
                // Events a lazy log dropped (see `DiskLog::push`): the read goes on after them,
                // truncated, when they are the first thing it meets; otherwise it ends there and
                // the next read meets them first.
                if !out.events.is_empty() {
                    break;
                }
                out.truncated = true;
            }
            taken += h.len;
            out.next = ev.seq;
            out.events.push(ev);
        }
        Some((!out.events.is_empty()).then_some(out))
    }
}

fn weight(ev: &LogEvent) -> usize {
    match &ev.body {
        crate::core::output::log::EventBody::Output(_, b) => b.len(),
        _ => 0,
    }
}
