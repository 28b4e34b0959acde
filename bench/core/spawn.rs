//! Probe: the Rust core alone, driven from a thread of its own as the JS thread drives it, beside
//! the limit (`bench/limit`), rounds interleaved. It splits a spawn's distance from the limit into
//! the core's part (this probe ÷ the limit) and the JS side's (the bench ÷ this probe).
//!
//!   cargo run --release --no-default-features --example core-spawn -- [inflight=1] [n=2000] [rounds=4] [fds=0] [containment=cgroup]
//!
//! `fds`: descriptors held beside the core's own, as a Node process holds its own (about 30), so
//! that the children inherit as many as they do under Node. `containment`: `cgroup` (a cgroup per
//! tree, as the bench's `exec`) or `process-group`.
//!
//! Each launch is `exec(['/bin/true'])` as the Processes API sends it (the same request, parsed
//! by the same rules), placed as the binding places it (the launcher when it stands by, else
//! the runtime), and reported to the driver twice, as the JS thread is: once launched, once
//! done. The driver keeps `inflight` launches going and starts the next at each end.

use procvisor::core::launch::launcher;
use procvisor::core::launch::request::{self, Face};
use procvisor::core::supervise::process::Process;
use procvisor::core::supervise::state::State;
use procvisor::core::supervise::supervisor;
use procvisor::core::value::Value;
use std::process::Command;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

enum Event {
    Launched,
    Done(i32),
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).take(4).map(|a| a.parse().expect("a number")).collect();
    let inflight = args.first().copied().unwrap_or(1).max(1);
    let n = args.get(1).copied().unwrap_or(2000);
    let rounds = args.get(2).copied().unwrap_or(4);
    let held: Vec<std::fs::File> =
        (0..args.get(3).copied().unwrap_or(0)).map(|_| std::fs::File::open("/dev/null").expect("/dev/null")).collect();
    let limit =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/limit/target/release/procvisor-bench-limit");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(launcher::runtime_workers())
        .enable_all()
        .build()
        .expect("runtime");
    let containment = std::env::args().nth(5).unwrap_or_else(|| "cgroup".into());
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let req = request::Request {
        command: Value::Array(vec![Value::String("/bin/true".into())]),
        env: vec![Value::Object(vec![("PATH".into(), Value::String(path))])],
        cwd: std::env::temp_dir().display().to_string(),
        containment: Some(containment.clone()),
        ..request::Request::default()
    };
    let (tx, rx) = mpsc::channel::<Event>();
    let launch = |tx: mpsc::Sender<Event>| {
        let req = req.clone();
        let job = move || -> Option<supervisor::Run> {
            let spec = request::parse(Face::Argv, &req).expect("request").spec;
            let (p, run): (Arc<Process>, _) = supervisor::launch(spec, "core".into(), 0, None, false).expect("launch");
            tx.send(Event::Launched).ok();
            p.when(State::is_done, Box::new(move |st| drop(tx.send(Event::Done(st.done.map_or(-1, |e| e.code))))));
            Some(run)
        };
        match launcher::global().filter(|l| l.claim()) {
            Some(l) => l.submit(Box::new(move || {
                if let Some(run) = job() {
                    tokio::spawn(run);
                }
            })),
            None => {
                rt.spawn(async move {
                    if let Some(run) = job() {
                        run.await;
                    }
                });
            }
        }
    };
    let run_core = |count: usize| -> f64 {
        let t0 = Instant::now();
        let (mut started, mut done) = (0, 0);
        while started < inflight.min(count) {
            launch(tx.clone());
            started += 1;
        }
        while done < count {
            match rx.recv().expect("events") {
                Event::Launched => {}
                Event::Done(code) => {
                    assert_eq!(code, 0, "/bin/true failed");
                    done += 1;
                    if started < count {
                        launch(tx.clone());
                        started += 1;
                    }
                }
            }
        }
        count as f64 / t0.elapsed().as_secs_f64()
    };
    run_core(300); // warm-up: the launcher, the runtime's threads, the cgroup pool
    let mut ratios = Vec::new();
    for r in 0..rounds {
        let core = run_core(n);
        let out = Command::new(&limit)
            .args(["spawn", &n.to_string(), &inflight.to_string(), "/bin/true"])
            .output()
            .expect("the limit (npm run bench builds it)");
        let text = String::from_utf8_lossy(&out.stdout);
        let per_sec: f64 = text
            .split("\"perSec\":")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|s| s.parse().ok())
            .expect("the limit's perSec");
        println!("round {r}: core {core:.0}/s, limit {per_sec:.0}/s, core ÷ limit {:.2}", core / per_sec);
        ratios.push(core / per_sec);
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{inflight} in flight, {} descriptors held, {containment}: core ÷ limit median {:.2} (min {:.2}, max {:.2})",
        held.len(),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    );
}
