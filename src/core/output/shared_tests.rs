use super::*;
use crate::core::output::shared_read::*;
use std::os::fd::{AsRawFd, FromRawFd};

/// A read-only mapping of the ring's memfd, as another process makes it.
struct Mapped {
    map: *const u8,
    len: usize,
}

impl Mapped {
    fn of(ring: &RingWriter) -> Mapped {
        let len = HEADER + ring.capacity;
        // SAFETY: a new read-only shared mapping of the sealed memfd.
        let map = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, ring.fd().as_raw_fd(), 0)
        };
        assert_ne!(map, libc::MAP_FAILED);
        Mapped { map: map.cast(), len }
    }

    fn reader(&self) -> RingReader {
        // SAFETY: mapped for `len` bytes until `self` drops, after the reader.
        unsafe { RingReader::new(self.map, self.len) }.expect("a ring")
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `of`.
        unsafe { libc::munmap(self.map as *mut _, self.len) };
    }
}

fn text(read: &RingRead) -> Vec<(u32, String)> {
    read.runs.iter().map(|r| (r.stream, String::from_utf8_lossy(&r.data).into_owned())).collect()
}

#[test]
fn records_read_back_in_order_joined_by_stream() {
    let mut w = RingWriter::create(capacity_for(4096, 100), 1).unwrap();
    w.append(1, 10, 0, b"he");
    w.append(2, 10, 0, b"llo");
    w.append(3, 11, 1, b"oops");
    w.append(5, 12, 0, b"!");
    let m = Mapped::of(&w);
    let r = m.reader();
    let all = r.read(0, u64::MAX, usize::MAX).unwrap();
    assert_eq!(text(&all), vec![(0, "hello".into()), (1, "oops".into()), (0, "!".into())]);
    assert!(!all.truncated);
    // Up to a sequence number: the rest waits, and is read from the position returned.
    let some = r.read(0, 3, usize::MAX).unwrap();
    assert_eq!(text(&some), vec![(0, "hello".into()), (1, "oops".into())]);
    let rest = r.read(some.pos, u64::MAX, usize::MAX).unwrap();
    assert_eq!(text(&rest), vec![(0, "!".into())]);
    assert_eq!(rest.pos, all.pos);
    // Two records of 24 + 8 bytes each.
    assert_eq!(r.position_after(0).unwrap(), 0);
    assert_eq!(r.position_after(2).unwrap(), 64);
    assert_eq!(r.position_after(5).unwrap(), all.pos);
    assert_eq!(r.first_seq(), 1);
}

#[test]
fn a_reader_overtaken_by_the_writer_is_told_truncated_and_reads_on_intact() {
    let cap = capacity_for(4096, 10);
    let mut w = RingWriter::create(cap, 1).unwrap();
    let m = Mapped::of(&w);
    let r = m.reader();
    let line = |n: u64| format!("line {n:08}\n");
    // Many times the capacity, records wrapping at every possible offset.
    let mut seq = 0;
    for _ in 0..(cap * 4 / 14) {
        seq += 1;
        w.append(seq, 0, 0, line(seq).as_bytes());
    }
    let read = r.read(0, u64::MAX, usize::MAX).unwrap();
    assert!(read.truncated);
    let got = String::from_utf8(read.runs[0].data.clone()).unwrap();
    let first: u64 = got[5..13].parse().unwrap();
    let want: String = (first..=seq).map(line).collect();
    assert_eq!(got, want);
    // Each line is a record of 40 bytes: the ring keeps all but the one it is about to reuse.
    let kept = (seq - first + 1) as usize * 40;
    assert!(kept + 40 > cap, "kept {kept} of {cap} bytes of records");
}

#[test]
fn a_large_event_goes_as_parts_and_reads_back_whole() {
    let cap = capacity_for(4096, 10);
    let mut w = RingWriter::create(cap, 7).unwrap();
    let big: Vec<u8> = (0..cap * 3 / 4).map(|i| (i % 251) as u8).collect();
    w.append(7, 5, 1, &big);
    w.append(8, 6, 0, b"after");
    let m = Mapped::of(&w);
    let r = m.reader();
    let read = r.read(0, 7, usize::MAX).unwrap();
    assert_eq!(read.runs.len(), 1);
    assert_eq!(read.runs[0].data, big);
    // Read as events, whatever the size asked: the split event alone, whole, then the next.
    let read = r.read_events(0, u64::MAX, 10).unwrap();
    assert_eq!(read.events.len(), 1, "the split event alone, whole");
    let crate::core::output::log::EventBody::Output(s, b) = &read.events[0].body else { panic!("output") };
    assert_eq!((*s as usize, &b[..]), (1, &big[..]));
    let rest = r.read_events(read.pos, u64::MAX, 10).unwrap();
    assert_eq!(rest.events.len(), 1);
    assert_eq!(rest.events[0].seq, 8);
}

#[test]
fn the_memfd_cannot_be_written_resized_or_mapped_writable_by_anyone_else() {
    let w = RingWriter::create(capacity_for(4096, 10), 1).unwrap();
    let fd = w.fd().as_raw_fd();
    let len = HEADER + w.capacity;
    // SAFETY: plain syscalls on the ring's descriptor; each is expected to fail.
    unsafe {
        let map = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0);
        assert_eq!(map, libc::MAP_FAILED, "a second writable mapping was allowed");
        assert_eq!(libc::pwrite(fd, b"x".as_ptr().cast(), 1, 64), -1);
        assert_eq!(libc::ftruncate(fd, 4096), -1);
        assert_eq!(libc::ftruncate(fd, (len * 2) as libc::off_t), -1);
        let seals = libc::fcntl(fd, libc::F_GET_SEALS);
        assert_eq!(seals & libc::F_SEAL_FUTURE_WRITE, libc::F_SEAL_FUTURE_WRITE);
        assert_eq!(seals & libc::F_SEAL_SHRINK, libc::F_SEAL_SHRINK);
        assert_eq!(libc::fcntl(fd, libc::F_ADD_SEALS, 0), -1, "the seals can still change");
    }
}

#[test]
fn a_reader_refuses_what_breaks_the_rings_rules() {
    // Memory that claims to be a ring, with a header and a record forged as a broken peer would.
    let cap = 4096usize;
    let mut mem = vec![0u64; (HEADER + cap) / 8];
    let mut put = |at: usize, v: u64| mem[at / 8] = v;
    put(0, MAGIC);
    put(8, cap as u64);
    put(HEAD_AT, 64);
    put(TAIL_AT, 0);
    // A record claiming 1 MiB.
    put(HEADER, 1);
    put(HEADER + 16, 1 << 20);
    let ptr = mem.as_ptr().cast::<u8>();
    // SAFETY: `mem` outlives the readers.
    let r = unsafe { RingReader::new(ptr, HEADER + cap) }.unwrap();
    assert!(r.read(0, u64::MAX, usize::MAX).is_err());
    // A position not on a record, past the head.
    assert!(r.read(72, u64::MAX, usize::MAX).is_err());
    assert!(r.read(3, u64::MAX, usize::MAX).is_err());
    // A tail past the head, or a head further than the capacity from the tail.
    mem[TAIL_AT / 8] = 128;
    // SAFETY: as above.
    let r = unsafe { RingReader::new(mem.as_ptr().cast(), HEADER + cap) }.unwrap();
    assert!(r.read(0, u64::MAX, usize::MAX).is_err());
    mem[TAIL_AT / 8] = 0;
    mem[HEAD_AT / 8] = cap as u64 * 2;
    // SAFETY: as above.
    let r = unsafe { RingReader::new(mem.as_ptr().cast(), HEADER + cap) }.unwrap();
    assert!(r.read(0, u64::MAX, usize::MAX).is_err());
    // A capacity that is not the mapping's, or no magic.
    mem[8 / 8] = cap as u64 * 2;
    // SAFETY: as above.
    assert!(unsafe { RingReader::new(mem.as_ptr().cast(), HEADER + cap) }.is_err());
    mem[0] = 0;
    mem[8 / 8] = cap as u64;
    // SAFETY: as above.
    assert!(unsafe { RingReader::new(mem.as_ptr().cast(), HEADER + cap) }.is_err());
}

#[test]
fn a_reader_racing_the_writer_never_gets_a_torn_record() {
    let cap = capacity_for(4096, 10);
    let mut w = RingWriter::create(cap, 1).unwrap();
    let m = Mapped::of(&w);
    let total = 200_000u64;
    let writer = std::thread::spawn(move || {
        for seq in 1..=total {
            // Records of varying sizes, each its sequence number repeated.
            let len = 8 + (seq % 61) as usize * 8;
            let data: Vec<u8> = seq.to_ne_bytes().iter().copied().cycle().take(len).collect();
            w.append(seq, 0, (seq % 2) as u32, &data);
        }
        w
    });
    let r = m.reader();
    let (mut pos, mut last, mut truncations) = (0u64, 0u64, 0);
    while last < total {
        let read = r.read(pos, u64::MAX, 4096).unwrap();
        truncations += read.truncated as u32;
        pos = read.pos;
        for run in &read.runs {
            let words: Vec<u64> = run.data.chunks(8).map(|w| u64::from_ne_bytes(w.try_into().unwrap())).collect();
            // A record is its number repeated, as many times as the writer wrote it: a copy torn
            // by the writer would mix two numbers or cut one short.
            for group in words.chunk_by(|a, b| a == b) {
                let seq = group[0];
                assert!(seq > last, "record {seq} after {last}");
                assert_eq!(group.len() * 8, 8 + (seq % 61) as usize * 8, "record {seq} torn");
                assert_eq!(seq % 2, run.stream as u64);
                last = seq;
            }
        }
    }
    let _w = writer.join().unwrap();
    // Not asserted: how often the reader was overtaken depends on the scheduler.
    eprintln!("overtaken {truncations} times");
}

#[test]
fn only_a_sealed_ring_is_mapped() {
    let w = RingWriter::create(capacity_for(4096, 100), 1).unwrap();
    let m = Mapping::of(w.fd().try_clone_to_owned().unwrap()).expect("the writer's own ring");
    assert_eq!(m.reader().unwrap().first_seq(), 1);
    // A memfd of the same size and header, not sealed: its size could change under the mapping.
    // SAFETY: plain syscalls on a descriptor owned at once.
    let raw = unsafe { libc::memfd_create(c"not-a-ring".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    assert!(raw >= 0);
    let fake = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
    let mut copy = vec![0u8; HEADER + w.capacity];
    // SAFETY: the writer's mapping, read for its length.
    unsafe { std::ptr::copy_nonoverlapping(w.map, copy.as_mut_ptr(), copy.len()) };
    assert_eq!(unsafe { libc::pwrite(raw, copy.as_ptr().cast(), copy.len(), 0) }, copy.len() as isize);
    let e = Mapping::of(fake.try_clone().unwrap()).err().expect("an unsealed memfd is refused");
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    // Sealed against growing and shrinking but still writable by anyone who has it: refused too.
    assert_eq!(unsafe { libc::fcntl(raw, libc::F_ADD_SEALS, libc::F_SEAL_SHRINK | libc::F_SEAL_GROW) }, 0);
    assert!(Mapping::of(fake).is_err());
    // Not a memfd at all.
    let file = std::fs::File::open("/dev/null").unwrap();
    assert!(Mapping::of(file.into()).is_err());
}

#[test]
fn a_readers_lag_is_what_the_ring_holds_after_its_position() {
    let cap = capacity_for(4096, 10);
    let mut w = RingWriter::create(cap, 1).unwrap();
    assert_eq!(w.bytes_after(0), 0);
    // Records of 24 + 1000 (padded to 1000) bytes.
    for seq in 1..=10 {
        w.append(seq, 0, 0, &[b'x'; 1000]);
    }
    assert_eq!(w.bytes_after(0), 10 * 1024);
    assert_eq!(w.bytes_after(4), 6 * 1024);
    assert_eq!(w.bytes_after(10), 0);
    assert_eq!(w.bytes_after(99), 0);
    // An event split into parts counts whole: read up to it, none of its parts is left.
    w.append(11, 0, 1, &vec![b'y'; cap / 2]);
    assert_eq!(w.bytes_after(11), 0);
    assert!(w.bytes_after(10) > (cap / 2) as u64);
    assert!(w.lags(10) && !w.lags(11));
    // Written over, a reader's records are all gone: it has everything the ring holds to read.
    for seq in 12..=200 {
        w.append(seq, 0, 0, &[b'z'; 1000]);
    }
    let held = w.bytes_after(0);
    assert_eq!(w.bytes_after(150), 50 * 1024);
    assert!(held <= cap as u64 && held > (cap - 1024) as u64, "{held} of {cap}");
    assert!(w.lags(3) && !w.lags(200));
}

/// The whole log after the ring's first record, read back from a mapping of the ring as events:
/// output, a service's restart and probe, and the end, each in its place.
#[test]
fn the_ring_holds_the_whole_log_as_a_logs_stream_reads_it() {
    use crate::core::exit::ExitInfo;
    use crate::core::output::log::{EventBody, ProbeKind, Stream};
    use crate::core::output::process_output::Output;
    let out = Output::new(1 << 20, 1000, None, None);
    out.push(Stream::Stdout, b"before the ring\n");
    let (fd, first) = out.share().unwrap();
    assert_eq!(first, 2);
    out.push(Stream::Stdout, b"one\n");
    out.push(Stream::Stderr, b"two\n");
    let exit = ExitInfo { code: 3, signal: None, stop: None };
    out.note(EventBody::Restart { attempt: 1, exit: exit.clone() });
    out.note(EventBody::Probe { kind: ProbeKind::Readiness, ok: true, reason: "port 80 open".into() });
    out.push(Stream::Stdout, b"three\n");
    out.close(EventBody::Exited(ExitInfo { code: 0, signal: Some(9), stop: None }));
    let m = crate::core::output::shared_read::Mapping::of(fd).unwrap();
    let r = m.reader().unwrap();
    let read = r.read_events(r.position_after(first - 1).unwrap(), u64::MAX, usize::MAX).unwrap();
    assert!(!read.truncated);
    let from_log = out.reader_take(first - 1, usize::MAX).events;
    assert_eq!(from_log.len(), 6);
    let strip = |evs: &[crate::core::output::log::LogEvent]| {
        evs.iter().map(|e| (e.seq, e.at_ms, e.body.clone())).collect::<Vec<_>>()
    };
    assert_eq!(strip(&read.events), strip(&from_log));
    // A reader of text passes over what is not output.
    let text = r.read(0, u64::MAX, usize::MAX).unwrap();
    assert_eq!(
        text.runs.iter().map(|x| (x.stream, String::from_utf8_lossy(&x.data).into_owned())).collect::<Vec<_>>(),
        vec![(0, "one\n".into()), (1, "two\n".into()), (0, "three\n".into())]
    );
    assert_eq!(text.pos, read.pos);
    // Read a few bytes at a time, the same events, one read after the other.
    let mut pos = 0;
    let mut events = Vec::new();
    loop {
        let some = r.read_events(pos, u64::MAX, 3).unwrap();
        if some.events.is_empty() {
            break;
        }
        pos = some.pos;
        events.extend(some.events);
    }
    assert_eq!(strip(&events), strip(&from_log));
}

#[test]
fn a_reader_refuses_an_event_that_is_not_one() {
    let mut w = RingWriter::create(capacity_for(4096, 10), 1).unwrap();
    // An end whose payload is too short to say how the process ended.
    w.append(1, 0, 4, b"\x01");
    let m = Mapped::of(&w);
    let err = m.reader().read_events(0, u64::MAX, usize::MAX).err().expect("refused");
    assert!(err.0.contains("not one"), "{}", err.0);
    let mut w = RingWriter::create(capacity_for(4096, 10), 1).unwrap();
    w.append(1, 0, 9, b"what");
    let m = Mapped::of(&w);
    assert!(m.reader().read_events(0, u64::MAX, usize::MAX).is_err(), "a kind no ring has");
}
