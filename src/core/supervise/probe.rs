//! The probes of a run (`readiness`, `liveness`): one task per probe, started with each run and
//! stopped with it, so that they hold nothing of the supervisor's and run where it runs (a
//! persistent sandbox's supervisor included, with nobody attached). Each check is bounded by the
//! probe's `timeoutMs`; a verdict that changes is published in the state (`ready`, `healthy`)
//! and logged as a `Probe` event. A liveness failure ends the run as a shutdown would (its
//! signal, then SIGKILL), and the restart policy takes it from there.

use crate::core::launch::command::SpawnSpec;
use crate::core::launch::probes::{ProbeSpec, ProbeTarget, Probes};
use crate::core::output::decoder::Utf8Decoder;
use crate::core::output::log::{EventBody, ProbeKind};
use crate::core::output::pattern::Pattern;
use crate::core::supervise::probe_exec;
use crate::core::supervise::process::Process;
use crate::core::supervise::readiness::{probe_once, Probe, ProbeResult};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the probes of every run need of the launch: an `exec` probe runs in the process's cwd
/// with its env; a liveness failure without `shutdown` waits out the `gracePeriod`.
#[derive(Debug)]
pub struct ProbePlan {
    pub probes: Probes,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub grace: Duration,
}

impl ProbePlan {
    pub(crate) fn of(spec: &SpawnSpec) -> Self {
        Self {
            probes: spec.probes.clone(),
            cwd: spec.cwd.clone(),
            env: spec.env.clone(),
            grace: Duration::from_millis(spec.grace_ms),
        }
    }
}

/// The probe tasks of one run; dropping it stops them (an `exec` probe's command with them).
pub(super) struct Probing(Vec<JoinHandle<()>>);

impl Drop for Probing {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// Starts the probes of the run that has just begun; `None` for a process without any.
pub(super) fn start(p: &Arc<Process>) -> Option<Probing> {
    let plan = p.probes.clone()?;
    let mut tasks = Vec::new();
    for (kind, spec) in [(ProbeKind::Readiness, &plan.probes.readiness), (ProbeKind::Liveness, &plan.probes.liveness)] {
        if spec.is_some() {
            tasks.push(tokio::spawn(watch(p.clone(), plan.clone(), kind)));
        }
    }
    Some(Probing(tasks))
}

/// Runs one probe until the run ends (its root exited) or the process is being ended.
async fn watch(p: Arc<Process>, plan: Arc<ProbePlan>, kind: ProbeKind) {
    let mut changes = p.subscribe_state();
    let over = async {
        let _ = changes.wait_for(|s| s.root_exit.is_some() || s.halt).await;
    };
    tokio::select! {
        _ = over => {}
        _ = checks(&p, &plan, kind) => {}
    }
}

async fn checks(p: &Arc<Process>, plan: &ProbePlan, kind: ProbeKind) {
    let spec = match kind {
        ProbeKind::Readiness => plan.probes.readiness.as_ref(),
        ProbeKind::Liveness => plan.probes.liveness.as_ref(),
    };
    let Some(spec) = spec else { return };
    let mut scan = LogScan::new(p.run_log_start.load(Ordering::Relaxed));
    tokio::time::sleep(spec.initial_delay).await;
    if kind == ProbeKind::Liveness && plan.probes.readiness.is_some() {
        // A run that is still starting is not failing: with a readiness probe, liveness is
        // checked once the run has been ready.
        let _ = p.subscribe_state().wait_for(|s| s.ready == Some(true)).await;
    }
    let mut failures = 0u32;
    loop {
        let next = Instant::now() + spec.period;
        let verdict = check(p, plan, spec, &mut scan).await;
        match (&verdict, kind) {
            (Ok(detail), ProbeKind::Readiness) => {
                failures = 0;
                if p.state().ready != Some(true) {
                    changed(p, kind, true, detail.clone());
                }
            }
            (Ok(_), ProbeKind::Liveness) => failures = 0,
            (Err(reason), _) => {
                failures = failures.saturating_add(1);
                if failures >= spec.failure_threshold {
                    match kind {
                        ProbeKind::Readiness if p.state().ready == Some(true) => {
                            changed(p, kind, false, format!("{}; {reason}", in_a_row(failures)));
                        }
                        ProbeKind::Readiness => {}
                        ProbeKind::Liveness => {
                            end_run(p, plan, format!("{}; {reason}", in_a_row(failures)));
                            return;
                        }
                    }
                }
            }
        }
        // Matched output stays matched: nothing more to look at for the rest of the run.
        if matches!(spec.target, ProbeTarget::Log(_)) && verdict.is_ok() {
            return;
        }
        match &spec.target {
            // Output that arrives meanwhile is read as it arrives, so a flood cannot push a match
            // out of the bounded log before the next check.
            ProbeTarget::Log(target) => {
                let _ = tokio::time::timeout_at(next, scan.until_match(p, &target.pattern)).await;
            }
            _ => tokio::time::sleep_until(next).await,
        }
    }
}

fn in_a_row(failures: u32) -> String {
    if failures == 1 {
        "1 failure".into()
    } else {
        format!("{failures} failures in a row")
    }
}

/// Publishes a verdict that changed, in the state and in the log.
fn changed(p: &Process, kind: ProbeKind, ok: bool, reason: String) {
    p.output.note(EventBody::Probe { kind, ok, reason });
    p.update(|s| match kind {
        ProbeKind::Readiness => s.ready = Some(ok),
        ProbeKind::Liveness => s.healthy = Some(ok),
    });
}

/// A liveness failure: the run is ended as a shutdown ends it (its signal, else SIGTERM; SIGKILL
/// after its timeout, else the grace period), and counts as a failure for the restart policy.
fn end_run(p: &Process, plan: &ProbePlan, reason: String) {
    let (signal, wait) = match p.shutdown {
        Some(sd) => (sd.signal, Duration::from_millis(sd.timeout_ms)),
        None => (libc::SIGTERM, plan.grace),
    };
    p.output.note(EventBody::Probe { kind: ProbeKind::Liveness, ok: false, reason });
    p.update(|s| {
        s.healthy = Some(false);
        s.unhealthy_end = true;
    });
    p.kill_after(wait);
    p.send(signal);
}

/// One check, bounded by the probe's timeout: what it saw, as `Ok` when it passed.
async fn check(p: &Process, plan: &ProbePlan, spec: &ProbeSpec, scan: &mut LogScan) -> Result<String, String> {
    let limit = spec.timeout;
    let ms = limit.as_millis();
    match &spec.target {
        ProbeTarget::Port(port) => match tokio::time::timeout(limit, probe_once(*port, &Probe::Tcp, limit)).await {
            Ok(ProbeResult::Ready) => Ok(format!("port {port} accepted a connection")),
            Ok(ProbeResult::NotReady(why)) => Err(format!("port {port}: {why}")),
            Err(_) => Err(format!("port {port}: no connection within {ms}ms")),
        },
        ProbeTarget::Http { port, path, status } => {
            let (min, max) = status.map_or((200, 399), |s| (s, s));
            let probe = Probe::Http { path: path.clone(), min, max };
            let url = format!("http://localhost:{port}{path}");
            match tokio::time::timeout(limit, probe_once(*port, &probe, limit)).await {
                Ok(ProbeResult::Ready) => Ok(format!("GET {url} answered")),
                Ok(ProbeResult::NotReady(why)) => Err(format!("GET {url}: {why}")),
                Err(_) => Err(format!("GET {url}: no answer within {ms}ms")),
            }
        }
        ProbeTarget::Log(target) => {
            if scan.advance(p, &target.pattern, None).await {
                Ok(format!("the output matched {}", target.shown))
            } else {
                Err(format!("no output has matched {} yet", target.shown))
            }
        }
        ProbeTarget::Exec(argv) => probe_exec::run(argv, &plan.cwd, &plan.env, limit).await,
    }
}

/// The text of a window a match is looked for in, per stream: as `waitForLog` keeps it.
const WINDOW: usize = 64 * 1024;
/// Bytes of the log read at once.
const READ_BYTES: usize = 256 * 1024;

/// A log probe's reading of the current run's output: both streams decoded, each searched in a
/// window of its newest text, so that a match split between two reads is still found.
struct LogScan {
    after: u64,
    decoders: [Utf8Decoder; 2],
    windows: [String; 2],
    matched: bool,
}

impl LogScan {
    fn new(after: u64) -> Self {
        Self { after, decoders: [Utf8Decoder::new(), Utf8Decoder::new()], windows: Default::default(), matched: false }
    }

    /// Reads what the log holds past the last read (waiting up to `wait` for something first)
    /// and searches it; true once the run's output has matched.
    async fn advance(&mut self, p: &Process, pattern: &Pattern, mut wait: Option<Duration>) -> bool {
        while !self.matched {
            let read = p.output.read(self.after, READ_BYTES, wait.take()).await;
            if read.events.is_empty() && !read.truncated {
                break;
            }
            self.after = read.next;
            for e in read.events {
                let EventBody::Output(stream, bytes) = e.body else { continue };
                let i = stream.index();
                let text = self.decoders[i].decode(&bytes);
                let w = &mut self.windows[i];
                w.push_str(&text);
                if pattern.find(w).is_some() {
                    self.matched = true;
                    break;
                }
                if w.len() > WINDOW * 2 {
                    let mut cut = w.len() - WINDOW;
                    while !w.is_char_boundary(cut) {
                        cut += 1;
                    }
                    w.drain(..cut);
                }
            }
        }
        self.matched
    }

    /// Follows the output until it matches (pending forever once the log is closed).
    async fn until_match(&mut self, p: &Process, pattern: &Pattern) {
        while !self.advance(p, pattern, Some(Duration::from_secs(3600))).await {
            if p.output.is_closed() {
                return std::future::pending().await;
            }
        }
    }
}
