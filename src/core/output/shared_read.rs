//! The reader's side of a process's output in shared memory (see `shared` for the format): a
//! client maps the memfd it was handed read-only (`Mapping`, after checking its seals), and
//! reads records from it, checking every header, position and length, and detecting the
//! records the writer overwrote while they were copied.

use super::disk_frame::event_of;
use super::log::{EventBody, LogEvent, Stream};
use super::shared::{pad8, HEADER, HEAD_AT, MAGIC, RECORD_HEADER, TAIL_AT};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// How many times one read may find the writer past it before the ring is taken for broken: a
/// writer that keeps a reader from ever finishing a read is not one that keeps the rules.
const OVERTAKEN_MAX: usize = 64;

fn overtaken() -> RingBroken {
    RingBroken(format!("a ring whose writer overtook the reader {OVERTAKEN_MAX} times in one read"))
}

/// One run of a read: consecutive bytes of one stream (the tests' view of a read).
#[cfg(test)]
#[derive(Debug, PartialEq, Eq)]
pub struct RingRun {
    pub stream: u32,
    pub data: Vec<u8>,
}

/// What a read found.
#[cfg(test)]
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RingRead {
    pub runs: Vec<RingRun>,
    /// The position to read from next time.
    pub pos: u64,
    /// Records the reader had not read were overwritten: the read skipped to the oldest kept.
    pub truncated: bool,
}

/// The kinds of record a ring holds: output (0, 1) and the events that are not (2-4).
const MAX_KIND: u32 = 4;

/// A record's header, as read.
#[derive(Debug, Clone, Copy)]
struct Record {
    seq: u64,
    at_ms: u64,
    kind: u32,
    len: usize,
}

/// What a read of events found.
pub struct RingEvents {
    pub events: Vec<LogEvent>,
    /// The position to read from next time.
    pub pos: u64,
    /// Events this reader had not read were overwritten: the read skipped to the oldest kept.
    pub truncated: bool,
    /// Bytes copied (output and the other events' payloads).
    pub bytes: usize,
}

/// Why a ring cannot be read: what it holds breaks its own rules.
#[derive(Debug)]
pub struct RingBroken(pub String);

/// The reader's side: any mapping of a ring (read-only in another process, or the writer's own
/// in tests), of `len` bytes. Everything read from it is checked.
pub struct RingReader {
    map: *const u8,
    capacity: u64,
}

impl RingReader {
    /// # Safety
    /// `map` must stay mapped, readable, for `len` bytes while the reader is used.
    pub unsafe fn new(map: *const u8, len: usize) -> Result<RingReader, RingBroken> {
        if len < HEADER + 4096 || map.align_offset(8) != 0 {
            return Err(RingBroken(format!("a mapping of {len} bytes is not a ring")));
        }
        // SAFETY: within the header, per the caller's promise.
        let (magic, capacity) =
            unsafe { (map.cast::<u64>().read_volatile(), map.add(8).cast::<u64>().read_volatile()) };
        if magic != MAGIC {
            return Err(RingBroken("the shared output has no ring header".into()));
        }
        if capacity % 8 != 0 || capacity != (len - HEADER) as u64 {
            return Err(RingBroken(format!("a ring of {capacity} bytes in a mapping of {len}")));
        }
        Ok(RingReader { map, capacity })
    }

    fn word(&self, at: usize) -> u64 {
        // SAFETY: an aligned word of the header, mapped as `new` requires of its caller.
        unsafe { (*self.map.add(at).cast::<AtomicU64>()).load(Ordering::Acquire) }
    }

    fn copy_out(&self, pos: u64, out: &mut [u8]) {
        let at = (pos % self.capacity) as usize;
        let first = out.len().min(self.capacity as usize - at);
        let n = out.len();
        // SAFETY: both parts lie within the data area; `out.len() <= capacity` (checked by callers).
        unsafe {
            std::ptr::copy_nonoverlapping(self.map.add(HEADER + at), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(self.map.add(HEADER), out[first..].as_mut_ptr(), n - first);
        }
    }

    /// The first sequence number the ring was made for.
    pub fn first_seq(&self) -> u64 {
        self.word(32)
    }

    /// The position of the first record after sequence number `after` that the ring still has
    /// (its head when there is none yet).
    pub fn position_after(&self, after: u64) -> Result<u64, RingBroken> {
        let mut pos = self.word(TAIL_AT);
        let mut overtaken_times = 0;
        loop {
            let head = self.word(HEAD_AT);
            self.check_span(pos, head)?;
            if pos == head {
                return Ok(pos);
            }
            let record = self.record_at(pos, head);
            fence(Ordering::SeqCst);
            let tail = self.word(TAIL_AT);
            if tail > pos {
                // Overtaken as it was read: its header may be torn, and is not looked at.
                overtaken_times += 1;
                if overtaken_times > OVERTAKEN_MAX {
                    return Err(overtaken());
                }
                pos = tail;
                continue;
            }
            let (Record { seq, .. }, size) = record?;
            if seq > after {
                return Ok(pos);
            }
            pos += size;
        }
    }

    /// The tail and the head as they were together: read tail, head, tail again, until the tail
    /// held still (the writer moves it before the head, so a head read alone may be older than a
    /// tail read after it). A ring whose tail never holds still is not one a writer keeps.
    fn bounds(&self) -> Result<(u64, u64), RingBroken> {
        for _ in 0..64 {
            let tail = self.word(TAIL_AT);
            let head = self.word(HEAD_AT);
            fence(Ordering::SeqCst);
            if self.word(TAIL_AT) != tail {
                continue;
            }
            if tail > head || head - tail > self.capacity {
                return Err(RingBroken(format!(
                    "a ring whose tail {tail} and head {head} do not fit its {} bytes",
                    self.capacity
                )));
            }
            return Ok((tail, head));
        }
        Err(RingBroken("a ring whose tail moved at every look".into()))
    }

    fn check_span(&self, pos: u64, head: u64) -> Result<(), RingBroken> {
        if pos > head || !pos.is_multiple_of(8) {
            return Err(RingBroken(format!("position {pos} is not a record of a ring whose head is {head}")));
        }
        Ok(())
    }

    /// The header of the record at `pos`: what it is, and its size in the ring.
    fn record_at(&self, pos: u64, head: u64) -> Result<(Record, u64), RingBroken> {
        let mut h = [0u8; RECORD_HEADER];
        self.copy_out(pos, &mut h);
        let seq = u64::from_ne_bytes(h[0..8].try_into().unwrap_or_default());
        let at_ms = u64::from_ne_bytes(h[8..16].try_into().unwrap_or_default());
        let len = u32::from_ne_bytes(h[16..20].try_into().unwrap_or_default()) as usize;
        let kind = u32::from_ne_bytes(h[20..24].try_into().unwrap_or_default());
        let size = (RECORD_HEADER + pad8(len)) as u64;
        if pos + size > head || size > self.capacity / 2 + 8 || kind > MAX_KIND {
            return Err(RingBroken(format!("a record of {len} bytes of kind {kind} at {pos} (head {head})")));
        }
        Ok((Record { seq, at_ms, kind, len }, size))
    }

    /// Records from position `pos` whose sequence number is at most `until`, about `max_bytes`
    /// of them (at least one record when there is one), run by run.
    #[cfg(test)]
    pub fn read(&self, pos: u64, until: u64, max_bytes: usize) -> Result<RingRead, RingBroken> {
        let (data, plan) = self.read_into(pos, until, max_bytes)?;
        let mut runs = Vec::with_capacity(plan.runs.len());
        let mut at = 0;
        for &(stream, len) in &plan.runs {
            runs.push(RingRun { stream, data: data[at..at + len].to_vec() });
            at += len;
        }
        Ok(RingRead { runs, pos: plan.pos, truncated: plan.truncated })
    }

    /// The bytes of a read, copied once, with the plan that says their runs and where the next
    /// read starts. A copy the writer overtook is dropped and the read made again from the
    /// oldest record kept.
    pub fn read_into(&self, pos: u64, until: u64, max_bytes: usize) -> Result<(Vec<u8>, RingPlan), RingBroken> {
        self.copy(pos, until, max_bytes, false)
    }

    fn copy(&self, mut pos: u64, until: u64, max_bytes: usize, notes: bool) -> Result<(Vec<u8>, RingPlan), RingBroken> {
        for _ in 0..OVERTAKEN_MAX {
            let plan = self.plan(pos, until, max_bytes, notes)?;
            let mut out = vec![0u8; plan.total];
            if self.fill(&plan, &mut out) {
                return Ok((out, plan));
            }
            pos = plan.start;
        }
        Err(overtaken())
    }

    /// Events from position `pos` whose sequence number is at most `until`, about `max_bytes` of
    /// output (at least one event when there is one; an event the writer split goes whole), as
    /// the log holds them: what a `logs()` stream reads. Their bytes are copied once.
    pub fn read_events(&self, pos: u64, until: u64, max_bytes: usize) -> Result<RingEvents, RingBroken> {
        let (data, plan) = self.copy(pos, until, max_bytes, true)?;
        let data = bytes::Bytes::from(data);
        let mut events: Vec<LogEvent> = Vec::with_capacity(plan.records.len());
        let mut at = 0;
        for r in &plan.records {
            let part = data.slice(at..at + r.len);
            at += r.len;
            if r.kind <= 1 {
                // The parts of one event the writer split, joined: they lie together in `data`.
                if let Some(LogEvent { seq, body: EventBody::Output(s, b), .. }) = events.last_mut() {
                    if *seq == r.seq && s.index() as u32 == r.kind {
                        *b = data.slice(at - r.len - b.len()..at);
                        continue;
                    }
                }
                let stream = if r.kind == 0 { Stream::Stdout } else { Stream::Stderr };
                events.push(LogEvent {
                    seq: r.seq,
                    at_ms: r.at_ms,
                    body: EventBody::Output(stream, part),
                    end_offset: 0,
                });
            } else {
                let ev = event_of(r.kind, r.seq, r.at_ms, part.to_vec()).ok_or_else(|| {
                    RingBroken(format!("an event of kind {} of {} bytes that is not one", r.kind, r.len))
                })?;
                events.push(ev);
            }
        }
        Ok(RingEvents { events, pos: plan.pos, truncated: plan.truncated, bytes: plan.total })
    }

    /// What a read from `pos` would copy, from the records' headers alone: its memory is sized
    /// with `total` before `fill` copies into it. `notes`: the events that are not output are
    /// read too (else they are passed over).
    fn plan(&self, pos: u64, until: u64, max_bytes: usize, notes: bool) -> Result<RingPlan, RingBroken> {
        let mut plan = RingPlan { start: pos, pos, ..Default::default() };
        let mut overtaken_times = 0;
        loop {
            let (tail, head) = self.bounds()?;
            if plan.pos < tail {
                // Overtaken, before or while it was planned: planned again from the oldest kept.
                overtaken_times += 1;
                if overtaken_times > OVERTAKEN_MAX {
                    return Err(overtaken());
                }
                plan = RingPlan { start: tail, pos: tail, truncated: true, ..Default::default() };
            }
            self.check_span(plan.pos, head)?;
            if plan.pos == head {
                return Ok(plan);
            }
            let record = self.record_at(plan.pos, head);
            fence(Ordering::SeqCst);
            if self.word(TAIL_AT) > plan.pos {
                // The header may have been overwritten as it was read: not a broken ring.
                continue;
            }
            let (record, size) = record?;
            let Record { seq, kind: stream, len, .. } = record;
            // The parts of one split event are never read apart.
            let same_event = plan.records.last().is_some_and(|r| r.seq == seq);
            if seq > until || (plan.total > 0 && plan.total + len > max_bytes && !same_event) {
                return Ok(plan);
            }
            if (stream > 1 || len == 0) && !notes {
                plan.pos += size;
                continue;
            }
            plan.parts.push((plan.pos + RECORD_HEADER as u64, len));
            plan.records.push(record);
            if stream <= 1 {
                match plan.runs.last_mut() {
                    Some((s, n)) if *s == stream => *n += len,
                    _ => plan.runs.push((stream, len)),
                }
            }
            plan.total += len;
            plan.pos += size;
        }
    }

    /// Copies what `plan` found into `out` (`plan.total` bytes). False when the writer overwrote
    /// any of it meanwhile: `out` is then garbage, and the read starts again from `plan.start`,
    /// which the ring no longer has (the next plan says `truncated`).
    fn fill(&self, plan: &RingPlan, out: &mut [u8]) -> bool {
        assert_eq!(out.len(), plan.total, "a fill sized by its plan");
        let mut at = 0;
        for &(pos, len) in &plan.parts {
            self.copy_out(pos, &mut out[at..at + len]);
            at += len;
        }
        fence(Ordering::SeqCst);
        self.word(TAIL_AT) <= plan.start
    }
}

/// A read of a ring, planned from its headers (`RingReader::plan`).
#[derive(Debug, Default)]
pub struct RingPlan {
    /// Where the records planned begin.
    pub start: u64,
    /// The position to read from next.
    pub pos: u64,
    /// Records the reader had not read were overwritten: the plan skipped to the oldest kept.
    pub truncated: bool,
    /// Runs of one stream: the stream and its bytes, in order.
    pub runs: Vec<(u32, usize)>,
    /// The bytes of every record: where they are in the ring, and how many.
    parts: Vec<(u64, usize)>,
    /// Each record planned, in order.
    records: Vec<Record>,
    /// Bytes of all the runs.
    pub total: usize,
}

/// A ring handed to this process, mapped read-only for as long as this value lives.
pub struct Mapping {
    map: *mut libc::c_void,
    len: usize,
}

// SAFETY: a read-only mapping owned by this value; nothing writes through it.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps the ring `fd` read-only, once its seals say that its size cannot change (a read of a
    /// shrunk file would fault) and that nobody but its writer can write it, and its header is
    /// a ring's.
    pub fn of(fd: OwnedFd) -> io::Result<Mapping> {
        check_sealed(&fd)?;
        // SAFETY: fstat into a zeroed struct, on a descriptor we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let len = st.st_size as usize;
        // SAFETY: a new read-only shared mapping of the whole file, whose size is sealed.
        let map =
            unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mapping = Mapping { map, len };
        mapping.reader().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.0))?;
        Ok(mapping)
    }

    /// A reader of the mapping, which it must not outlive.
    pub fn reader(&self) -> Result<RingReader, RingBroken> {
        // SAFETY: mapped readable for `len` bytes while `self` lives.
        unsafe { RingReader::new(self.map as *const u8, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapped once, by its owner.
        unsafe { libc::munmap(self.map, self.len) };
    }
}

/// The seals a ring must have before it is mapped.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn check_sealed(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: a plain fcntl.
    let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
    let need = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_FUTURE_WRITE | libc::F_SEAL_SEAL;
    if seals < 0 || seals & need != need {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the descriptor is not a sealed ring"));
    }
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn check_sealed(_fd: &OwnedFd) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "shared output needs memfd seals (Linux)"))
}
