//! One log event as a frame on disk: a fixed header, then the payload. All integers are little
//! endian.
//!
//! ```text
//! 0      1     2          6          14            22               30
//! | 0xB7 | kind | len: u32 | seq: u64 | at_ms: u64 | end_offset: u64 | payload (len bytes)
//! ```
//!
//! `kind`: 0 stdout, 1 stderr (payload: the bytes), 2 restart (attempt: u32, then an exit),
//! 3 probe (which: u8, ok: u8, then the reason as UTF-8), 4 exited (an exit). An exit is
//! code: i32, signal: i32 (-1 for none), stop: u8 (0 none, 1 timeout, 2 kill). The header
//! carries everything a cursor needs, so a reader skips a payload it does not want by its length.

use crate::core::exit::{ExitInfo, StopReason};
use crate::core::output::log::{EventBody, LogEvent, ProbeKind, Stream};
use bytes::Bytes;

pub(super) const HEADER: usize = 30;
const MAGIC: u8 = 0xB7;

/// The header of a frame read back: enough to skip it or to read its payload.
pub(super) struct Header {
    kind: u8,
    pub(super) len: usize,
    pub(super) seq: u64,
    at_ms: u64,
    end_offset: u64,
}

/// Bytes a frame's payload takes, what the queue's bound counts.
pub(super) fn payload_len(body: &EventBody) -> usize {
    match body {
        EventBody::Output(_, b) => b.len(),
        EventBody::Exited(_) => 9,
        EventBody::Restart { .. } => 13,
        EventBody::Probe { reason, .. } => 2 + reason.len(),
    }
}

/// A frame as its header (with any small payload) and the output it carries, written as they are
/// (`write_vectored`): a flood's bytes are not copied once more on their way to the file.
pub(super) fn encode(ev: &LogEvent) -> (Vec<u8>, Option<Bytes>) {
    let len = payload_len(&ev.body);
    let mut f = Vec::with_capacity(HEADER + if matches!(ev.body, EventBody::Output(..)) { 0 } else { len });
    let kind = match &ev.body {
        EventBody::Output(Stream::Stdout, _) => 0,
        EventBody::Output(Stream::Stderr, _) => 1,
        EventBody::Restart { .. } => 2,
        EventBody::Probe { .. } => 3,
        EventBody::Exited(_) => 4,
    };
    f.push(MAGIC);
    f.push(kind);
    f.extend_from_slice(&(len as u32).to_le_bytes());
    f.extend_from_slice(&ev.seq.to_le_bytes());
    f.extend_from_slice(&ev.at_ms.to_le_bytes());
    f.extend_from_slice(&ev.end_offset.to_le_bytes());
    if let EventBody::Output(_, b) = &ev.body {
        return (f, Some(b.clone()));
    }
    push_note(&mut f, &ev.body);
    (f, None)
}

/// The payload of an event that is not output, appended to `f`.
fn push_note(f: &mut Vec<u8>, body: &EventBody) {
    match body {
        EventBody::Output(..) => {}
        EventBody::Exited(exit) => push_exit(f, exit),
        EventBody::Restart { attempt, exit } => {
            f.extend_from_slice(&attempt.to_le_bytes());
            push_exit(f, exit);
        }
        EventBody::Probe { kind, ok, reason } => {
            f.push(matches!(kind, ProbeKind::Liveness) as u8);
            f.push(*ok as u8);
            f.extend_from_slice(reason.as_bytes());
        }
    }
}

/// An event that is not output as its kind (2 restart, 3 probe, 4 exited) and payload, as a
/// frame carries them: the form such an event takes in shared memory too. `None` for output.
pub(crate) fn note(body: &EventBody) -> Option<(u32, Vec<u8>)> {
    let kind = match body {
        EventBody::Output(..) => return None,
        EventBody::Restart { .. } => 2,
        EventBody::Probe { .. } => 3,
        EventBody::Exited(_) => 4,
    };
    let mut payload = Vec::with_capacity(payload_len(body));
    push_note(&mut payload, body);
    Some((kind, payload))
}

/// The event of kind `kind` (as `note` gives it, or 0/1 for output) read back from anywhere,
/// trusting nothing: `None` for a kind or payload that is not one.
pub(crate) fn event_of(kind: u32, seq: u64, at_ms: u64, payload: Vec<u8>) -> Option<LogEvent> {
    let kind = u8::try_from(kind).ok().filter(|&k| k <= 4)?;
    event(&Header { kind, len: payload.len(), seq, at_ms, end_offset: 0 }, payload)
}

fn push_exit(f: &mut Vec<u8>, exit: &ExitInfo) {
    f.extend_from_slice(&exit.code.to_le_bytes());
    f.extend_from_slice(&exit.signal.unwrap_or(-1).to_le_bytes());
    f.push(match exit.stop {
        None => 0,
        Some(StopReason::Timeout) => 1,
        Some(StopReason::Kill) => 2,
    });
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).and_then(|s| s.try_into().ok()).map_or(0, u64::from_le_bytes)
}

/// A header, or `None` for bytes that are not one (a file from elsewhere, or damaged).
pub(super) fn header(b: &[u8; HEADER]) -> Option<Header> {
    if b[0] != MAGIC || b[1] > 4 {
        return None;
    }
    Some(Header {
        kind: b[1],
        len: u32_at(b, 2) as usize,
        seq: u64_at(b, 6),
        at_ms: u64_at(b, 14),
        end_offset: u64_at(b, 22),
    })
}

fn exit_at(p: &[u8], at: usize) -> Option<ExitInfo> {
    if p.len() < at + 9 {
        return None;
    }
    let signal = u32_at(p, at + 4) as i32;
    let stop = match p[at + 8] {
        0 => None,
        1 => Some(StopReason::Timeout),
        2 => Some(StopReason::Kill),
        _ => return None,
    };
    Some(ExitInfo { code: u32_at(p, at) as i32, signal: (signal >= 0).then_some(signal), stop })
}

/// The event of a header and its payload.
pub(super) fn event(h: &Header, payload: Vec<u8>) -> Option<LogEvent> {
    let body = match h.kind {
        0 => EventBody::Output(Stream::Stdout, Bytes::from(payload)),
        1 => EventBody::Output(Stream::Stderr, Bytes::from(payload)),
        2 if payload.len() >= 13 => EventBody::Restart { attempt: u32_at(&payload, 0), exit: exit_at(&payload, 4)? },
        3 if payload.len() >= 2 => EventBody::Probe {
            kind: if payload[0] == 1 { ProbeKind::Liveness } else { ProbeKind::Readiness },
            ok: payload[1] == 1,
            reason: String::from_utf8_lossy(&payload[2..]).into_owned(),
        },
        4 => EventBody::Exited(exit_at(&payload, 0)?),
        _ => return None,
    };
    Some(LogEvent { seq: h.seq, at_ms: h.at_ms, body, end_offset: h.end_offset })
}
