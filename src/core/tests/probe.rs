//! Probes and shutdowns against real processes: readiness flips with each run, a liveness
//! failure ends the run and the policy restarts it, a shutdown's signal comes before its SIGKILL.

use super::*;
use crate::core::launch::probes::{log_pattern, ProbeSpec, ProbeTarget, Shutdown};
use crate::core::launch::restart::RestartPolicy;
use crate::core::output::log::ProbeKind;
use crate::core::value::Value;

fn every(target: ProbeTarget, threshold: u32) -> ProbeSpec {
    ProbeSpec {
        target,
        period: Duration::from_millis(20),
        timeout: Duration::from_millis(2000),
        failure_threshold: threshold,
        initial_delay: Duration::ZERO,
    }
}

fn exec(script: &str) -> ProbeTarget {
    ProbeTarget::Exec(vec!["/bin/sh".into(), "-c".into(), script.into()])
}

/// The probe events of the log: (probe, ok, reason).
fn probe_events(p: &Process) -> Vec<(ProbeKind, bool, String)> {
    p.output
        .read_now(0, usize::MAX)
        .events
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Probe { kind, ok, reason } => Some((kind, ok, reason)),
            _ => None,
        })
        .collect()
}

async fn printed(p: &Process, text: &str) {
    within(Duration::from_secs(5), async {
        while !p.retained_text(Stream::Stdout).contains(text) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

async fn until(p: &Process, what: fn(&crate::core::supervise::state::State) -> bool) {
    let mut rx = p.subscribe_state();
    within(Duration::from_secs(10), rx.wait_for(what)).await.expect("state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_by_a_command_and_by_output_flips_ready() {
    let dir = std::env::temp_dir().join(format!("procvisor-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let flag = dir.join("up");
    let mut spec = sh(&format!("sleep 0.2; touch {}; echo listening on 1; sleep 30", flag.display()));
    spec.probes.readiness = Some(every(exec(&format!("test -e {}", flag.display())), 1));
    let p = start(spec);
    assert_eq!(p.state().ready, Some(false), "not ready before the probe passed");
    assert_eq!(p.state().healthy, None, "no liveness probe, no verdict");
    until(&p, |s| s.ready == Some(true)).await;
    let events = probe_events(&p);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0].0, events[0].1), (ProbeKind::Readiness, true));
    p.signal(libc::SIGKILL, SignalIntent::Kill);
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.ready, Some(false), "an ended process is not ready");

    let mut spec = sh("echo booting; sleep 0.1; echo 'listening on 3000'; sleep 30");
    spec.probes.readiness =
        Some(every(ProbeTarget::Log(log_pattern("log", &Value::String("/on \\d+$/m".into())).unwrap()), 1));
    let p = start(spec);
    until(&p, |s| s.ready == Some(true)).await;
    assert!(probe_events(&p)[0].2.contains("/on \\d+$/m"), "{:?}", probe_events(&p));
    p.signal(libc::SIGKILL, SignalIntent::Kill);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_liveness_probe_ends_the_run_and_the_policy_restarts_it() {
    let mut spec = sh("echo run; exec sleep 30");
    spec.restart = Some(RestartPolicy { max_restarts: 1, initial_ms: 10.0, ..RestartPolicy::default() });
    spec.probes.liveness = Some(every(exec("echo sick >&2; exit 3"), 2));
    let p = start(spec);
    let st = within(Duration::from_secs(20), p.wait_done(None)).await;
    // Each run is ended by SIGTERM; the second exceeds maxRestarts and the service gives up.
    assert_eq!((st.done.unwrap().signal, st.restarts, st.gave_up), (Some(libc::SIGTERM), 1, true));
    let events = probe_events(&p);
    assert_eq!(events.len(), 2, "one failure per run: {events:?}");
    for (kind, ok, reason) in &events {
        assert_eq!((*kind, *ok), (ProbeKind::Liveness, false));
        assert!(reason.contains("2 failures in a row") && reason.contains("exited with code 3: sick"), "{reason}");
    }
    assert_eq!(p.retained_text(Stream::Stdout), "run\nrun\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_liveness_failure_kills_a_root_that_ignores_sigterm_after_the_grace_period() {
    let flag = std::env::temp_dir().join(format!("procvisor-probe-deaf-{}", std::process::id()));
    let mut spec = sh(&format!("trap '' TERM; touch {}; while :; do sleep 0.05; done", flag.display()));
    spec.grace_ms = 200;
    // Healthy until the trap is in place, so the SIGTERM that follows is the one it ignores.
    spec.probes.liveness = Some(every(exec(&format!("test ! -e {}", flag.display())), 1));
    let p = start(spec);
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().signal, Some(libc::SIGKILL));
    assert_eq!(st.healthy, Some(false));
    std::fs::remove_file(&flag).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_probe_past_its_timeout_fails_and_leaves_nothing() {
    // The probe's shell and its sleep both carry the marker in their command lines.
    let marker = format!("987.{}", std::process::id());
    let mut spec = sh("sleep 30");
    let mut probe = every(exec(&format!("sleep {marker}; true")), 1);
    probe.timeout = Duration::from_millis(100);
    spec.probes.liveness = Some(probe);
    let p = start(spec);
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().signal, Some(libc::SIGTERM));
    let reason = &probe_events(&p)[0].2;
    assert!(reason.contains("did not exit within 100ms"), "{reason}");
    let left = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read_to_string(e.path().join("cmdline")).is_ok_and(|c| c.contains(&marker))
            && e.file_name().to_str().and_then(|s| s.parse().ok()).is_some_and(alive)
    });
    assert!(!left, "the probe's command was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_signals_first_and_kills_after_its_timeout() {
    let mut spec = sh("trap 'echo got TERM; exit 0' TERM; echo up; while :; do sleep 0.05; done");
    spec.shutdown = Some(Shutdown { signal: libc::SIGTERM, timeout_ms: 5000 });
    let p = start(spec);
    printed(&p, "up").await;
    assert!(p.shutdown());
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 0, "the trap ran and exited");
    assert!(st.done.unwrap().killed());
    assert!(p.retained_text(Stream::Stdout).contains("got TERM"));

    let mut spec = sh("trap '' TERM; echo up; while :; do sleep 0.05; done");
    spec.shutdown = Some(Shutdown { signal: libc::SIGTERM, timeout_ms: 200 });
    let p = start(spec);
    printed(&p, "up").await;
    let t = Instant::now();
    assert!(p.shutdown());
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().signal, Some(libc::SIGKILL));
    assert!(t.elapsed() >= Duration::from_millis(200), "SIGKILL waited for the timeout");
}
