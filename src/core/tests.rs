//! Core behaviours against real processes (`sh`, `sleep`, `cat`), one file per concern, with the
//! setup they share.

use crate::core::launch::command::{Containment, SpawnSpec, StdinMode};
use crate::core::output::cursor;
use crate::core::output::log::{EventBody, Stream};
use crate::core::supervise::process::{Process, SignalIntent};
use crate::core::supervise::readiness::{probe_once, Probe, ProbeResult};
use crate::core::supervise::supervisor::spawn;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static NEXT: AtomicU64 = AtomicU64::new(1);

fn sh(script: &str) -> SpawnSpec {
    let mut s = SpawnSpec::shell(script, "/tmp");
    s.env = vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())];
    s
}

fn start(spec: SpawnSpec) -> Arc<Process> {
    spawn(spec, format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed)), 0).expect("spawn")
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); look at its state.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

/// A live (not zombie) process with this group id. Zombies do not count: reparented ones wait
/// for an init that may reap them late.
fn has_live_member(pgid: i32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let Ok(s) = std::fs::read_to_string(e.path().join("stat")) else { return false };
        let Some(rest) = s.rfind(')').map(|i| &s[i + 1..]) else { return false };
        let f: Vec<&str> = rest.split_whitespace().collect();
        f.len() > 2 && f[2].parse() == Ok(pgid) && f[0] != "Z" && f[0] != "X"
    })
}

async fn within<T>(d: Duration, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(d, f).await.expect("timed out")
}

mod launch;
mod lending;
mod lifecycle;
mod output;
mod probe;
mod service;
mod stdin;
mod terminal;
