//! The limit for procvisor's benchmarks: the same work done with nothing but `std::process` and
//! plain blocking reads, so each JS contender can be read as a fraction of what the machine does.
//!
//! Every mode prints one JSON object on stdout (times in microseconds unless named otherwise).
//!
//!   spawn <n> <inflight> <program> [args...]
//!       n spawns of program (stdin /dev/null, stdout + stderr piped and drained, own process group),
//!       each waited until exit, `inflight` at a time (one thread per slot).
//!   pipe <program> [args...]
//!       program's stdout read to EOF with a plain blocking read into a 256 KiB buffer.
//!   idle <n> <program> [args...]
//!       n long-lived children tracked (Child + its pipes held), RSS before and after; then all killed
//!       and reaped.
//!
//! No dependencies: the two libc calls it needs (getrusage, kill) are declared here.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[repr(C)]
#[derive(Default)]
struct Timeval {
    sec: i64,
    usec: i64,
}

#[repr(C)]
#[derive(Default)]
struct Rusage {
    utime: Timeval,
    stime: Timeval,
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

/// (user, system) CPU seconds of this process so far.
fn cpu_seconds() -> (f64, f64) {
    let mut r = Rusage::default();
    // SAFETY: RUSAGE_SELF (0) into a struct of the kernel's layout on 64-bit Linux.
    unsafe { getrusage(0, &mut r) };
    let s = |t: &Timeval| t.sec as f64 + t.usec as f64 / 1e6;
    (s(&r.utime), s(&r.stime))
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
    pages * 4096
}

fn command(argv: &[String]) -> Command {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn spawn_mode(n: usize, inflight: usize, argv: Vec<String>) {
    let argv = Arc::new(argv);
    let next = Arc::new(AtomicUsize::new(0));
    let lat = Arc::new(Mutex::new(Vec::with_capacity(n)));
    let call = Arc::new(Mutex::new(Vec::with_capacity(n)));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..inflight.max(1))
        .map(|_| {
            let (argv, next, lat, call) = (argv.clone(), next.clone(), lat.clone(), call.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                let mut calls = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < n {
                    let a = Instant::now();
                    let child = command(&argv).spawn().expect("spawn");
                    calls.push(a.elapsed().as_secs_f64() * 1e6);
                    let out = child.wait_with_output().expect("wait");
                    assert!(out.status.success(), "{:?} failed", argv);
                    mine.push(a.elapsed().as_secs_f64() * 1e6);
                }
                lat.lock().unwrap().extend(mine);
                call.lock().unwrap().extend(calls);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut lat = lat.lock().unwrap().clone();
    let mut call = call.lock().unwrap().clone();
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    call.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{{\"n\":{n},\"secs\":{secs},\"perSec\":{},\"latP50\":{},\"latP99\":{},\"callP50\":{},\"callP99\":{}}}",
        n as f64 / secs,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        percentile(&call, 0.5),
        percentile(&call, 0.99)
    );
}

fn pipe_mode(argv: Vec<String>) {
    let (u0, s0) = cpu_seconds();
    let t0 = Instant::now();
    let mut child = command(&argv).stderr(Stdio::null()).spawn().expect("spawn");
    let mut out = child.stdout.take().expect("piped");
    let mut buf = vec![0u8; 256 * 1024];
    let mut bytes = 0u64;
    let mut reads = 0u64;
    loop {
        match out.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n as u64;
                reads += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("read: {e}"),
        }
    }
    let status = child.wait().expect("wait");
    let secs = t0.elapsed().as_secs_f64();
    let (u1, s1) = cpu_seconds();
    assert!(status.success());
    println!(
        "{{\"bytes\":{bytes},\"reads\":{reads},\"secs\":{secs},\"mbps\":{},\"cpuUser\":{},\"cpuSys\":{}}}",
        bytes as f64 / 1e6 / secs,
        u1 - u0,
        s1 - s0
    );
}

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

fn idle_mode(n: usize, argv: Vec<String>) {
    let before = rss_bytes();
    let mut children: Vec<Child> = Vec::with_capacity(n);
    for _ in 0..n {
        children.push(command(&argv).spawn().expect("spawn"));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let after = rss_bytes();
    for c in &children {
        // SAFETY: SIGKILL to the group each child leads (process_group(0)); not yet reaped.
        unsafe { kill(-(c.id() as i32), 9) };
    }
    for c in &mut children {
        let _ = c.wait();
    }
    println!(
        "{{\"n\":{n},\"rssBefore\":{before},\"rssAfter\":{after},\"perProcessBytes\":{}}}",
        (after as f64 - before as f64) / n as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: limit spawn <n> <inflight> <program> [args...] | pipe <program> [args...] | idle <n> <program> [args...]";
    match args.first().map(String::as_str) {
        Some("spawn") if args.len() >= 4 => {
            spawn_mode(args[1].parse().expect("n"), args[2].parse().expect("inflight"), args[3..].to_vec())
        }
        Some("pipe") if args.len() >= 2 => pipe_mode(args[1..].to_vec()),
        Some("idle") if args.len() >= 3 => idle_mode(args[1].parse().expect("n"), args[2..].to_vec()),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
