//! Services: a launch with `restart` runs again when a run ends, in the same process (one log,
//! one lifecycle), and ends for good on a kill or when its count is spent.

use super::*;
use crate::core::launch::restart::RestartPolicy;

fn service(script: &str, policy: RestartPolicy) -> Arc<Process> {
    let mut spec = sh(script);
    spec.restart = Some(policy);
    start(spec)
}

fn fast(max_restarts: u32) -> RestartPolicy {
    RestartPolicy { max_restarts, initial_ms: 10.0, ..RestartPolicy::default() }
}

/// The log's events as letters: o(utput), r(estart) with its number, e(xited).
fn shape(p: &Process) -> Vec<String> {
    p.output
        .read_now(0, usize::MAX)
        .events
        .into_iter()
        .map(|e| match e.body {
            EventBody::Output(..) => "o".to_string(),
            EventBody::Restart { attempt, exit } => format!("r{attempt}:{}", exit.code),
            EventBody::Exited(x) => format!("e:{}", x.code),
            EventBody::Probe { kind, ok, .. } => format!("p:{}:{ok}", kind.as_str()),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loop_runs_max_restarts_more_times_then_gives_up() {
    let p = service("echo run; exit 3", fast(2));
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.done.unwrap().code, 3);
    assert_eq!((st.restarts, st.gave_up), (2, true));
    assert_eq!(shape(&p), ["o", "r1:3", "o", "r2:3", "o", "e:3"]);
    assert_eq!(p.retained_text(Stream::Stdout), "run\nrun\nrun\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_in_the_backoff_ends_the_service_at_once() {
    let p = service("exit 1", RestartPolicy { initial_ms: 60_000.0, ..fast(5) });
    within(Duration::from_secs(5), async {
        while !p.state().backoff {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(p.signal(libc::SIGKILL, SignalIntent::Kill));
    let st = within(Duration::from_secs(5), p.wait_done(None)).await;
    // The kill's signal is the service's end; the run's own exit stays its last.
    assert_eq!((st.done.unwrap().code, st.restarts, st.gave_up), (137, 1, false));
    assert_eq!(st.last_exit.map(|e| e.code), Some(1));
    assert_eq!(shape(&p), ["r1:1", "e:137"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_run_leaves_behind_is_gone_before_the_next_run() {
    let p = service("sleep 30 & echo $!; exit 1", fast(1));
    let st = within(Duration::from_secs(10), p.wait_done(None)).await;
    assert_eq!(st.restarts, 1);
    let text = p.retained_text(Stream::Stdout);
    let pids: Vec<i32> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|pid| !alive(*pid)), "{pids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_failure_leaves_exit_0_alone_and_always_does_not() {
    let once = service("exit 0", fast(3));
    let st = within(Duration::from_secs(5), once.wait_done(None)).await;
    assert_eq!((st.restarts, st.gave_up), (0, false));
    let always = service("exit 0", RestartPolicy { always: true, ..fast(2) });
    let st = within(Duration::from_secs(5), always.wait_done(None)).await;
    assert_eq!((st.restarts, st.gave_up), (2, true));
}
