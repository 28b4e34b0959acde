use super::*;
use crate::core::error::CoreError;
use crate::core::exit::{ExitInfo, StopReason};
use crate::core::output::log::{EventBody, OutputLog, ProbeKind, Stream};
use crate::core::value::Value;
use bytes::Bytes;
use std::path::Path;
use std::time::{Duration, Instant};

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("procvisor-disk-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The resolved options of a log directory `d` keeping `keep` files of `max_bytes` (the default without).
fn log_files(d: &Path, max_bytes: Option<f64>, keep: f64) -> LogFiles {
    let mut o =
        vec![("logDirectory".into(), Value::String(d.display().to_string())), ("logKeep".into(), Value::Number(keep))];
    if let Some(n) = max_bytes {
        o.push(("logMaxBytes".into(), Value::Number(n)));
    }
    options(&Value::Object(o), Path::new("/")).unwrap().unwrap()
}

/// A read after `after` is told it was truncated, and goes on from `oldest`.
fn assert_truncated_to(disk: &DiskLog, after: u64, oldest: u64) {
    let read = disk.read_after(after, 100).expect("the files answer");
    assert!(read.truncated, "not truncated after {after}");
    assert_eq!(read.events[0].seq, oldest);
}

fn written(disk: &DiskLog, seq: u64) {
    let until = Instant::now() + Duration::from_secs(10);
    while disk.kept_lock().written < seq {
        assert!(Instant::now() < until, "the writer did not reach {seq}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn reads_back_every_event_across_rotations_and_truncates_before_the_oldest_file() {
    let d = dir("rotate");
    let files = log_files(&d, Some(8192.0), 3.0);
    let disk = DiskLog::new(files, "t1");
    let mut log = OutputLog::new(4096, 10_000);
    for i in 0..1000u32 {
        let stream = if i % 3 == 0 { Stream::Stderr } else { Stream::Stdout };
        log.append(EventBody::Output(stream, Bytes::from(format!("line {i:05}\n"))));
        disk.push(log.newest().unwrap());
    }
    let ends = [
        EventBody::Restart { attempt: 1, exit: ExitInfo { code: 3, signal: None, stop: None } },
        EventBody::Probe { kind: ProbeKind::Liveness, ok: false, reason: "port 80: refused".into() },
        EventBody::Exited(ExitInfo { code: 137, signal: Some(9), stop: Some(StopReason::Kill) }),
    ];
    for body in ends.clone() {
        log.append(body);
        disk.push(log.newest().unwrap());
    }
    written(&disk, 1003);
    let mut names: Vec<String> =
        std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["t1.log", "t1.log.1", "t1.log.2"]);
    let oldest = disk.kept_lock().firsts[0];
    assert!(oldest > 1, "nothing was rotated away");
    // From the oldest kept event on, every event once, in order.
    let mut after = oldest - 1;
    let mut seen = Vec::new();
    while let Some(read) = disk.read_after(after, 1000) {
        assert!(!read.truncated);
        for ev in &read.events {
            seen.push(ev.clone());
        }
        after = read.next;
    }
    assert_eq!(after, 1003);
    let seqs: Vec<u64> = seen.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (oldest..=1003).collect::<Vec<_>>());
    assert_eq!(
        seen[0].body,
        EventBody::Output(
            if (oldest - 1).is_multiple_of(3) { Stream::Stderr } else { Stream::Stdout },
            Bytes::from(format!("line {:05}\n", oldest - 1))
        )
    );
    let read_ends: Vec<EventBody> = seen[seen.len() - 3..].iter().map(|e| e.body.clone()).collect();
    assert_eq!(read_ends, ends);
    // Before the oldest kept file: truncated, from the oldest kept event.
    assert_truncated_to(&disk, 0, oldest);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn refuses_a_file_a_missing_parent_made_of_a_file_and_bad_numbers() {
    let d = dir("refuse");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("plain");
    std::fs::write(&file, b"x").unwrap();
    let opts = |v: Value| Value::Object(vec![("logDirectory".into(), v)]);
    for bad in [
        Value::String(file.display().to_string()),
        Value::String(file.join("sub").display().to_string()),
        Value::String(String::new()),
        Value::Number(1.0),
        Value::String("/proc/self".into()),
    ] {
        assert!(matches!(options(&opts(bad.clone()), &d), Err(CoreError::InvalidOption { .. })), "{bad:?} accepted");
    }
    let made = d.join("a/b");
    assert_eq!(options(&opts(Value::String("a/b".into())), &d).unwrap().unwrap().directory, made);
    assert!(made.is_dir());
    let with = |k: &str, n: f64| {
        Value::Object(vec![
            ("logDirectory".into(), Value::String(made.display().to_string())),
            (k.into(), Value::Number(n)),
        ])
    };
    for (k, n) in [("logMaxBytes", 10.0), ("logMaxBytes", 1.5), ("logKeep", 0.0)] {
        assert!(options(&with(k, n), &d).is_err(), "{k} {n} accepted");
    }
    assert!(options(&Value::Object(vec![("logKeep".into(), Value::Number(3.0))]), &d).is_err());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn files_an_earlier_process_left_under_the_same_id_are_replaced_not_read() {
    let d = dir("earlier");
    let files = log_files(&d, None, 3.0);
    // What an earlier Node process's `t2` left: a current file and two rotated ones.
    for name in ["t2.log", "t2.log.1", "t2.log.2"] {
        std::fs::write(d.join(name), b"not this process's").unwrap();
    }
    let disk = DiskLog::new(files.clone(), "t2");
    let mut log = OutputLog::new(4096, 10_000);
    log.append(EventBody::Output(Stream::Stdout, Bytes::from_static(b"mine\n")));
    disk.push(log.newest().unwrap());
    written(&disk, 1);
    let mut names: Vec<String> =
        std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["t2.log"], "the earlier files are gone");
    let read = disk.read_after(0, 10).expect("the event is on disk");
    assert_eq!(read.events.len(), 1);

    // A free name: the log starts there, and a process of another id is left alone.
    std::fs::write(d.join("t9.log"), b"another id").unwrap();
    let fresh = DiskLog::new(files, "t3");
    let mut log = OutputLog::new(4096, 10_000);
    log.append(EventBody::Output(Stream::Stdout, Bytes::from_static(b"three\n")));
    fresh.push(log.newest().unwrap());
    written(&fresh, 1);
    assert_eq!(std::fs::read(d.join("t9.log")).unwrap(), b"another id");
    assert!(std::fs::metadata(d.join("t3.log")).unwrap().len() > 0);
    let _ = std::fs::remove_dir_all(&d);
}

/// `n` output events of `size` bytes each, then the end, pushed as fast as the log takes them.
fn flood(disk: &Arc<DiskLog>, n: usize, size: usize) -> u64 {
    let mut log = OutputLog::new(1 << 20, 100_000);
    let chunk = Bytes::from(vec![b'x'; size]);
    for _ in 0..n {
        log.append(EventBody::Output(Stream::Stdout, chunk.clone()));
        disk.push(log.newest().unwrap());
    }
    log.append(EventBody::Exited(ExitInfo { code: 0, signal: None, stop: None }));
    disk.push(log.newest().unwrap());
    log.newest().unwrap().seq
}

#[test]
fn a_flood_writes_the_last_window_of_its_output_not_all_of_it() {
    let d = dir("lazy-flood");
    // 2 MiB files, 2 kept: the files keep at most 4 MiB, and an event followed by 6 MiB of output
    // is in a file rotation deletes.
    let disk = DiskLog::new(log_files(&d, Some(2.0 * 1048576.0), 2.0), "f1");
    let end = flood(&disk, 1024, 64 * 1024);
    written(&disk, end);
    let k = disk.kept_lock();
    assert!(k.bytes_written < 8 << 20, "{} bytes written for 64 MiB of output", k.bytes_written);
    let oldest = k.firsts[0];
    drop(k);
    // What the files hold: a run of events without a gap, up to the end, as an eager log's files.
    let mut after = oldest - 1;
    let mut seqs = Vec::new();
    while let Some(read) = disk.read_after(after, 1 << 20) {
        assert!(!read.truncated, "a gap after {after}");
        seqs.extend(read.events.iter().map(|e| e.seq));
        after = read.next;
    }
    assert_eq!(seqs, (oldest..=end).collect::<Vec<_>>());
    assert!(end - oldest >= 32, "the files keep at least 2 MiB of it: {} events", end - oldest + 1);
    // A reader left where the dropped output was: told so, then the oldest kept event on.
    assert_truncated_to(&disk, 5, oldest);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_lazy_log_writes_a_quiet_process_line_soon_and_its_end_at_once() {
    let d = dir("lazy-quiet");
    let disk = DiskLog::new(log_files(&d, None, 5.0), "q1");
    let mut log = OutputLog::new(4096, 10_000);
    log.append(EventBody::Output(Stream::Stdout, Bytes::from_static(b"one line\n")));
    disk.push(log.newest().unwrap());
    // Within the delay (50 ms), with room for a loaded machine.
    written(&disk, 1);
    assert_eq!(disk.read_after(0, 1 << 20).unwrap().events.len(), 1);
    log.append(EventBody::Output(Stream::Stdout, Bytes::from_static(b"two\n")));
    disk.push(log.newest().unwrap());
    log.append(EventBody::Exited(ExitInfo { code: 0, signal: None, stop: None }));
    disk.push(log.newest().unwrap());
    written(&disk, 3);
    assert!(disk.queue_lock().events.is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn logs_too_large_to_hold_or_with_frames_near_a_file_are_written_whole() {
    use super::disk_writer::{hold, lazy_window, release};
    let files = |max: f64, keep: f64| log_files(&dir("window"), Some(max), keep);
    assert_eq!(lazy_window(&files(4.0 * 1048576.0, 5.0)), Some(24 << 20), "the defaults");
    assert_eq!(lazy_window(&files(1048576.0, 5.0)), None, "files under 2 MiB");
    assert_eq!(lazy_window(&files(4.0 * 1048576.0, 10.0)), None, "a window past 32 MiB");
    assert!(!hold(usize::MAX / 2), "past the budget nothing is held");
    assert!(hold(1));
    release(1);

    // Frames of 1.5 MiB into files of 2 MiB: each could fill most of a file, so every byte is
    // written, as before there were lazy logs.
    let d = dir("lazy-big-frames");
    let disk = DiskLog::new(log_files(&d, Some(2.0 * 1048576.0), 2.0), "b1");
    let end = flood(&disk, 16, 1536 * 1024);
    written(&disk, end);
    assert!(disk.kept_lock().bytes_written >= 16 * 1536 * 1024);
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(dir("window"));
}

#[test]
fn a_log_whose_first_event_is_its_end_makes_no_file_and_one_with_anything_before_it_does() {
    let d = dir("quiet");
    let files = log_files(&d, None, 2.0);
    let end = || EventBody::Exited(ExitInfo { code: 0, signal: None, stop: None });
    let quiet = DiskLog::new(files.clone(), "q1");
    let mut log = OutputLog::new(4096, 100);
    log.append(end());
    quiet.push(log.newest().unwrap());
    assert!(quiet.queue_lock().events.is_empty(), "nothing is queued for it");
    assert!(!quiet.stopped(), "not a log that failed");
    // A probe verdict before the end is worth a file, and so is the end after it.
    let probed = DiskLog::new(files, "q2");
    let mut log = OutputLog::new(4096, 100);
    log.append(EventBody::Probe { kind: ProbeKind::Readiness, ok: true, reason: String::new() });
    probed.push(log.newest().unwrap());
    log.append(end());
    probed.push(log.newest().unwrap());
    written(&probed, 2);
    assert_eq!(probed.read_after(0, 4096).expect("the file answers").events.len(), 2);
    assert!(d.join("q2.log").exists());
    assert!(!d.join("q1.log").exists(), "the quiet process left a file");
    let _ = std::fs::remove_dir_all(&d);
}
