//! A process's output in shared memory: a ring of records that a persistent sandbox's supervisor
//! writes as the output arrives, and that the Node processes attached to it read by mapping it,
//! so that a flood's bytes never cross the socket (which carries wake-ups and positions only).
//!
//! The ring is a memfd sealed against growing, shrinking and any further writable mapping
//! (`F_SEAL_FUTURE_WRITE`): the supervisor's own mapping, made before the seals, is the only one
//! that writes; a reader can map it read-only, and whatever it tries it cannot write it nor make
//! a read fault (the size is sealed). A reader trusts nothing it reads: every position and length
//! is checked against the header and the capacity, and a record that the writer overwrote during
//! the copy is detected (the tail moved past it) and reported as `truncated`.
//!
//! Layout: a 64-byte header (magic, capacity, head, tail, first sequence number), then
//! `capacity` bytes of data. Positions are byte counts since the first record (never wrapped;
//! the byte at position p is at `64 + p % capacity`). A record is a 24-byte header (sequence
//! number, milliseconds since the epoch, length, kind) and its bytes, padded to 8. Its kind is
//! the stream of output (0 stdout, 1 stderr) or an event that is not output, encoded as a log
//! file's frame encodes it (2 restart, 3 probe, 4 the end): from its first record on, the ring
//! holds the whole log. The writer
//! moves the tail past the records it is about to overwrite before it writes (a release fence
//! between), then moves the head past the record it wrote: a reader that copied a record and
//! then still sees the tail at or before it has an intact copy.
//!
//! This is the format and the writer; the reader, which trusts nothing, is `shared_read`.

use std::io;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// "PVOUTRG1": what the header starts with.
pub const MAGIC: u64 = 0x3147_5254_554f_5650;
pub const HEADER: usize = 64;
pub const RECORD_HEADER: usize = 24;
pub(super) const HEAD_AT: usize = 16;
pub(super) const TAIL_AT: usize = 24;

pub(super) fn pad8(n: usize) -> usize {
    (n + 7) & !7
}

/// The least a ring holds. Its readers are held to half of it (`lags`), and a held writer waits
/// a round trip over the socket (a wake-up, the client's read, its answer) before it writes on:
/// with a 1 MiB ring (a default log's worth) 256 MiB to a listener crossed in ~500 wake-ups at
/// 1.5-2.0 GB/s on 2 vCPUs, with 4 MiB in ~250 at 1.9-2.2 (the local sandbox: 2.5-2.9).
pub const RING_MIN_BYTES: usize = 4 * 1024 * 1024;

/// The data capacity of a ring for a log of `max_bytes` and `max_events`: a reader may be half
/// of it behind, as far as the log's lag rule lets a reader of the log be (half of each), twice
/// over; a page multiple with the header, at least 64 KiB.
pub fn capacity_for(max_bytes: usize, max_events: usize) -> usize {
    let want = max_bytes.saturating_add(max_events.saturating_mul(RECORD_HEADER + 8)).max(64 * 1024);
    let total = (want + HEADER).div_ceil(4096) * 4096;
    total - HEADER
}

/// The writer's side: the supervisor's writable mapping and its own account of the records in
/// it (never read back from shared memory).
pub struct RingWriter {
    map: *mut u8,
    len: usize,
    capacity: usize,
    fd: std::os::fd::OwnedFd,
    head: u64,
    tail: u64,
    /// Each record in the ring, oldest first: its sequence number and the position it ends at.
    records: std::collections::VecDeque<(u64, u64)>,
    first_seq: u64,
}

// SAFETY: the mapping is owned by this value and written only through `&mut self`.
unsafe impl Send for RingWriter {}

impl RingWriter {
    /// A new sealed ring of `capacity` data bytes (from `capacity_for`), whose first record
    /// will be `first_seq`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn create(capacity: usize, first_seq: u64) -> io::Result<RingWriter> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        if !capacity.is_multiple_of(8) || capacity < 4096 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a ring's capacity is a multiple of 8, at least 4096",
            ));
        }
        let len = HEADER + capacity;
        // SAFETY: a plain syscall with a NUL-terminated name.
        let raw =
            unsafe { libc::memfd_create(c"procvisor-output".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: plain syscalls on the descriptor just made.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new shared mapping of the whole file, checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut ring =
            RingWriter { map: map.cast(), len, capacity, fd, head: 0, tail: 0, records: Default::default(), first_seq };
        // The seals after the writable mapping: it stays the only one that can write.
        let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_FUTURE_WRITE | libc::F_SEAL_SEAL;
        // SAFETY: a plain fcntl on our descriptor.
        if unsafe { libc::fcntl(ring.fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
            return Err(io::Error::last_os_error());
        }
        ring.put_u64(0, MAGIC);
        ring.put_u64(8, capacity as u64);
        ring.put_u64(32, first_seq);
        Ok(ring)
    }

    /// Shared output needs memfd and its seals, which only Linux has: elsewhere the output
    /// crosses the socket as bytes.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub fn create(_capacity: usize, _first_seq: u64) -> io::Result<RingWriter> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "shared output needs memfd seals (Linux)"))
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// Bytes of the ring a reader that has read up to sequence number `seq` has still to read:
    /// all it holds when its records after `seq` are the only ones left (or some were already
    /// written over).
    pub fn bytes_after(&self, seq: u64) -> u64 {
        let read = self.records.partition_point(|&(s, _)| s <= seq);
        match read.checked_sub(1).and_then(|i| self.records.get(i)) {
            Some(&(_, end)) => self.head - end,
            None => self.head - self.tail,
        }
    }

    /// The lag rule of a reader of the ring: more than half of it after `seq` is unread, so the
    /// writer waits before it could write over what the reader has not read.
    pub fn lags(&self, seq: u64) -> bool {
        self.bytes_after(seq) > (self.capacity / 2) as u64
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn put_u64(&mut self, at: usize, v: u64) {
        // SAFETY: `at + 8 <= HEADER <= len`; the header's words are 8-aligned in a page-aligned map.
        unsafe { self.map.add(at).cast::<u64>().write_volatile(v) }
    }

    fn atomic(&self, at: usize) -> &AtomicU64 {
        // SAFETY: an aligned word of the header, within the mapping this value owns.
        unsafe { &*self.map.add(at).cast::<AtomicU64>() }
    }

    /// Copies `bytes` to ring position `pos`, wrapping at the end of the data.
    fn copy_in(&mut self, pos: u64, bytes: &[u8]) {
        let at = (pos % self.capacity as u64) as usize;
        let first = bytes.len().min(self.capacity - at);
        // SAFETY: both parts lie within the data area (`at + first <= capacity`, the rest from 0,
        // shorter than the capacity since a record never exceeds it).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.map.add(HEADER + at), first);
            std::ptr::copy_nonoverlapping(bytes[first..].as_ptr(), self.map.add(HEADER), bytes.len() - first);
        }
    }

    /// Appends event `seq` of kind `stream` (0 stdout, 1 stderr, 2-4 an event that is not
    /// output). Output larger than half the ring goes as several records of the same sequence
    /// number.
    pub fn append(&mut self, seq: u64, at_ms: u64, stream: u32, data: &[u8]) {
        let most = self.capacity / 2 - RECORD_HEADER;
        if data.is_empty() {
            // A record all the same: the ring's sequence numbers have no gaps, so a reader that
            // finds one knows it missed an event.
            return self.append_one(seq, at_ms, stream, data);
        }
        let parts = data.chunks(most);
        for part in parts {
            self.append_one(seq, at_ms, stream, part);
        }
    }

    fn append_one(&mut self, seq: u64, at_ms: u64, stream: u32, data: &[u8]) {
        let size = (RECORD_HEADER + pad8(data.len())) as u64;
        let end = self.head + size;
        let mut tail = self.tail;
        while end - tail > self.capacity as u64 {
            match self.records.pop_front() {
                Some((_, gone_to)) => tail = gone_to,
                None => break,
            }
        }
        if tail != self.tail {
            self.tail = tail;
            self.atomic(TAIL_AT).store(tail, Ordering::Relaxed);
            // Readers see the tail move before any byte of what it gave up changes.
            fence(Ordering::SeqCst);
        }
        let mut head = [0u8; RECORD_HEADER];
        head[0..8].copy_from_slice(&seq.to_ne_bytes());
        head[8..16].copy_from_slice(&at_ms.to_ne_bytes());
        head[16..20].copy_from_slice(&(data.len() as u32).to_ne_bytes());
        head[20..24].copy_from_slice(&stream.to_ne_bytes());
        let at = self.head;
        self.copy_in(at, &head);
        self.copy_in(at + RECORD_HEADER as u64, data);
        self.head = end;
        self.records.push_back((seq, end));
        self.atomic(HEAD_AT).store(end, Ordering::Release);
    }
}

impl Drop for RingWriter {
    fn drop(&mut self) {
        // SAFETY: the mapping this value made, unmapped once.
        unsafe { libc::munmap(self.map.cast(), self.len) };
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
#[path = "shared_tests.rs"]
mod tests;
