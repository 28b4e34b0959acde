//! The launcher: one thread of ours that makes launches (request, clone, registration) when it
//! is awake, so that such a launch call only queues, and no runtime worker is blocked while the
//! child execs (`CLONE_VFORK` holds the cloning thread until then, and on a busy CPU the cloning
//! thread gets its CPU back only once the child has run to its end).
//!
//! On a VM, waking a parked thread costs the waker tens of microseconds (an interrupt sent
//! through the hypervisor), and the JS thread paid that on every launch it queued to a parked
//! runtime worker. The launcher stays awake for a short while after a process ends while fewer
//! processes are live than there are CPUs (it spins, then takes naps of a few microseconds,
//! which its own timer ends and nobody has to pay for): a program that launches one process
//! after another launches the next one right after the last one ended, and that launch then
//! only queues. The thread that saw the end pays for the wake, after it has settled what waits
//! for the end. A launch that finds the launcher parked or busy goes to the runtime, as before:
//! with many processes live its workers are awake, and they clone in parallel.
//!
//! The launcher also supervises what it launches. Its thread drives a runtime of its own (tokio's
//! current-thread scheduler), and a process it launched is read and supervised there to its end.
//! For a program that launches one process after another, one thread of ours is then on the
//! cycle besides the JS thread: the child's exit wakes the launcher, which settles the end and is
//! already awake for the next launch. Supervised by the multi-thread runtime, the same cycle woke
//! a worker for the exit, that worker woke the other worker (the runtime's work stealing) and
//! the launcher (for the stand-by), and the launch woke a worker again to start the process's
//! task. A process stays on the thread that launched it: one that floods keeps the launcher busy,
//! and launches then go to the runtime, as they do whenever it is busy.
//!
//! The stand-by adapts, as an adaptive mutex's spin does: a stand-by that no launch used halves
//! the window, down to none, and a launch that finds the launcher parked soon after an end
//! widens it to the most. A program that launches nothing after its processes end soon stops
//! paying for the stand-by.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// One launch, run on the launcher's thread, inside its runtime (a task it spawns runs on that
/// thread). It must settle whatever waits for it itself: a job that panics is dropped (with what
/// it owns) and the launcher goes on.
pub type Job = Box<dyn FnOnce() + Send>;

const PARKED: u8 = 0;
/// Running launches.
const BUSY: u8 = 1;
/// Standing by: awake, waiting for a launch.
const STANDING_BY: u8 = 2;

/// The longest stand-by: longer than a program takes, on a loaded VM, from seeing an end to its
/// next launch call, and short enough that a stand-by no launch uses costs little.
const MAX_WINDOW_US: u32 = 1_000;
/// A window halved below this is none.
const MIN_WINDOW_US: u32 = 25;
/// A stand-by spins this long, then naps: a launch queued during a nap waits for its end, and
/// the stand-by costs a wake-up per nap rather than a whole CPU. (Measured against spinning for
/// the whole window: half the stand-by's CPU, and no launch later.)
const SPIN: Duration = Duration::from_micros(20);
const NAP: Duration = Duration::from_micros(15);

pub struct Launcher {
    jobs: Mutex<VecDeque<Job>>,
    /// Read without the lock while standing by.
    queued: AtomicUsize,
    state: AtomicU8,
    stand_by: AtomicBool,
    window_us: AtomicU32,
    /// When a stand-by was last asked for, in microseconds since `born`.
    last_end_us: AtomicU64,
    born: Instant,
    /// Jobs run so far (a diagnostic).
    ran: AtomicU64,
    /// Wakes the launcher's runtime when it waits for work (a permit is kept if it is not yet
    /// waiting, so no wake is lost).
    wake: tokio::sync::Notify,
}

impl Launcher {
    /// A launcher with its own thread and runtime. `None` when either cannot be created.
    pub fn start(name: &str) -> Option<Arc<Launcher>> {
        let l = Arc::new(Launcher {
            jobs: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            state: AtomicU8::new(BUSY),
            stand_by: AtomicBool::new(false),
            window_us: AtomicU32::new(MAX_WINDOW_US / 2),
            last_end_us: AtomicU64::new(u64::MAX),
            born: Instant::now(),
            ran: AtomicU64::new(0),
            wake: tokio::sync::Notify::new(),
        });
        let rt = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().ok()?;
        let runs = l.clone();
        thread::Builder::new().name(name.into()).spawn(move || rt.block_on(runs.run())).ok()?;
        Some(l)
    }

    /// Claims the launcher for one launch, which the caller then submits: true when it is
    /// standing by, so that the job runs at once, without a wake. One launch per stand-by: the
    /// next finds it busy and goes to the runtime, whose workers clone in parallel (when a
    /// program starts many launches at once, queueing them all here would clone them one after
    /// another, and supervise them all on this one thread). A launcher found parked soon after
    /// a stand-by was asked for widens its stand-by: the last one was too short, or there was
    /// none.
    pub fn claim(&self) -> bool {
        match self.state.compare_exchange(STANDING_BY, BUSY, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return true,
            Err(BUSY) => return false,
            Err(_) => {}
        }
        let since = self.micros().checked_sub(self.last_end_us.load(Ordering::Relaxed)).unwrap_or(u64::MAX);
        if since < u64::from(MAX_WINDOW_US) {
            self.window_us.store(MAX_WINDOW_US, Ordering::Relaxed);
        }
        false
    }

    /// Queues `job`, and wakes the launcher when it is parked (the caller pays for that wake).
    pub fn submit(&self, job: Job) {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).push_back(job);
        self.queued.fetch_add(1, Ordering::SeqCst);
        // The launcher looks at the queue after it says it parks: either it sees this job, or
        // this sees it parked.
        if self.state.load(Ordering::SeqCst) == PARKED {
            self.unpark();
        }
    }

    /// Asks the launcher to stay awake for a while: a process has just ended, and a launch may
    /// follow. Wakes it when it is parked (the caller pays for that), unless the window has
    /// shrunk to nothing.
    pub fn stand_by(&self) {
        self.last_end_us.store(self.micros(), Ordering::Relaxed);
        if self.window_us.load(Ordering::Relaxed) == 0 {
            return;
        }
        self.stand_by.store(true, Ordering::SeqCst);
        if self.state.load(Ordering::SeqCst) == PARKED {
            self.unpark();
        }
    }

    /// The current stand-by window, in microseconds (0: no stand-by).
    pub fn window_us(&self) -> u32 {
        self.window_us.load(Ordering::Relaxed)
    }

    /// How many jobs it has run (tests and diagnostics).
    pub fn jobs_run(&self) -> u64 {
        self.ran.load(Ordering::Relaxed)
    }

    /// Whether the launcher is parked (tests and diagnostics).
    pub fn parked(&self) -> bool {
        self.state.load(Ordering::SeqCst) == PARKED
    }

    fn micros(&self) -> u64 {
        self.born.elapsed().as_micros() as u64
    }

    fn unpark(&self) {
        self.wake.notify_one();
    }

    fn pop(&self) -> Option<Job> {
        let job = self.jobs.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        if job.is_some() {
            self.queued.fetch_sub(1, Ordering::SeqCst);
        }
        job
    }

    async fn run(self: Arc<Self>) {
        // A nap of `NAP` would otherwise last up to 50 µs more (the default timer slack).
        #[cfg(target_os = "linux")]
        // SAFETY: sets this thread's own timer slack; no pointer involved.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        }
        loop {
            self.state.store(BUSY, Ordering::SeqCst);
            while let Some(job) = self.pop() {
                // A panic is the job's own: what it owned is dropped (a pending promise rejects),
                // and the launches after it still run.
                let _ = catch_unwind(AssertUnwindSafe(job));
                self.ran.fetch_add(1, Ordering::Relaxed);
            }
            if self.stand_by_for_a_launch().await {
                continue;
            }
            self.state.store(PARKED, Ordering::SeqCst);
            // Seen by `submit` and `stand_by` after this store, or queued before this look.
            if self.queued.load(Ordering::SeqCst) > 0 || self.stand_by.load(Ordering::SeqCst) {
                continue;
            }
            self.wake.notified().await;
        }
    }

    /// Waits, awake, while a stand-by lasts: spins for its first microseconds, then naps. True
    /// when a job came.
    async fn stand_by_for_a_launch(&self) -> bool {
        // Without a stand-by asked for, it is never shown as standing by, even for an instant: a
        // claim then would take a launch that was meant for the runtime.
        if !self.stand_by.load(Ordering::SeqCst) {
            return false;
        }
        self.state.store(STANDING_BY, Ordering::SeqCst);
        let mut until = None;
        let mut spun_from = Instant::now();
        let mut standing_by = false;
        loop {
            if self.stand_by.swap(false, Ordering::SeqCst) {
                let w = self.window_us.load(Ordering::Relaxed);
                spun_from = Instant::now();
                until = Some(spun_from + Duration::from_micros(u64::from(w)));
                standing_by = w > 0;
            }
            if self.queued.load(Ordering::SeqCst) > 0 {
                return true;
            }
            let now = Instant::now();
            match until {
                Some(t) if now < t => {}
                _ => break,
            }
            if now < spun_from + SPIN {
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
                // Leaves the CPU to any other thread that wants it (two vCPUs are common).
                thread::yield_now();
            } else {
                thread::sleep(NAP);
            }
            // The processes this thread supervises are looked at between naps.
            tokio::task::yield_now().await;
        }
        if standing_by {
            let w = self.window_us.load(Ordering::Relaxed) / 2;
            self.window_us.store(if w < MIN_WINDOW_US { 0 } else { w }, Ordering::Relaxed);
        }
        false
    }
}

static GLOBAL: OnceLock<Option<Arc<Launcher>>> = OnceLock::new();

/// The process-wide launcher, started at its first use. `None` when its thread cannot be made:
/// launches then run wherever the caller chooses.
pub fn global() -> Option<&'static Arc<Launcher>> {
    GLOBAL.get_or_init(|| Launcher::start("procvisor-launch")).as_ref()
}

/// How many launches the process-wide launcher has made (0 before its first use).
pub fn launches() -> u64 {
    GLOBAL.get().and_then(Option::as_ref).map_or(0, |l| l.jobs_run())
}

/// How many other live processes keep a stand-by from being useful: as many as there are CPUs.
/// With that many live, the stand-by would take CPU from them, and the runtime's workers, busy
/// with them, take the launches without a wake.
pub fn busy_at() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How many workers the runtime gets: a CPU's worth, and as many again up to 4. A launch
/// suspends the worker that makes it until the child has exec'd (`CLONE_VFORK`); with one worker
/// per CPU, launches in flight held back exits and output, and a CPU went idle while they waited
/// (16 launches in flight on 2 CPUs: 20-35 µs of idle CPU per spawn, 8-15 with 4 workers).
pub fn runtime_workers() -> usize {
    let cpus = busy_at();
    cpus + cpus.min(4)
}

/// Whether ends stand the process-wide launcher by (see `set_stand_by`).
static STAND_BY: AtomicBool = AtomicBool::new(true);

/// Turns the stand-by after an end on or off for the process-wide launcher. A process whose
/// launches come from elsewhere (a persistent sandbox's supervisor, whose next launch is two
/// socket hops and two event-loop turns away) turns it off: the stand-by would nap through most
/// of that wait, taking a CPU from the threads that carry the next launch to it (measured on 2
/// vCPUs: spawn until exit over the socket 10% slower with it).
pub fn set_stand_by(enabled: bool) {
    STAND_BY.store(enabled, Ordering::Relaxed);
}

/// Whether a launch may run on the thread that asks for it (see `set_inline`).
static INLINE: AtomicBool = AtomicBool::new(false);

/// Lets launches run on the thread that asks for them while no process is live, as Node's own
/// `child_process` spawns on its loop thread. That thread then waits for the child's exec
/// (`CLONE_VFORK`), tens of microseconds, instead of paying for two wake-ups between threads
/// (the launch queued, its result sent back), each tens of microseconds on a VM. A persistent
/// sandbox's supervisor asks for it: its JS thread only serves the socket, so no caller's
/// `spawn()` call is made longer by it (the reason launches otherwise leave that thread). While
/// any process is live, launches go to the launcher or the runtime as before: with 16 launches
/// in flight, those made on the JS thread held back the socket, 4% fewer spawns per second even
/// when allowed only below one live process per CPU.
pub fn set_inline(enabled: bool) {
    INLINE.store(enabled, Ordering::Relaxed);
}

/// Whether the launch asked for now should run on the calling thread (see `set_inline`).
pub fn inline_now() -> bool {
    INLINE.load(Ordering::Relaxed) && crate::core::supervise::registry::live_up_to(1) == 0
}

/// A process has ended and `others` are still live (counted up to `busy_at()`): stands the
/// process-wide launcher by, once a launch call has started it and while a CPU is likely idle.
pub fn stand_by(others: usize) {
    if others >= busy_at() || !STAND_BY.load(Ordering::Relaxed) {
        return;
    }
    if let Some(Some(l)) = GLOBAL.get() {
        l.stand_by();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
        let end = Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(Instant::now() < end, "timed out waiting for {what}");
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn jobs_run_in_order_on_the_launcher_thread_and_a_panic_stops_none() {
        let l = Launcher::start("test-launch").expect("thread");
        wait_for("the launcher to park", || l.parked());
        let (tx, rx) = mpsc::channel();
        for i in 0..5 {
            let tx = tx.clone();
            l.submit(Box::new(move || {
                if i == 2 {
                    panic!("a launch that panics");
                }
                tx.send((i, thread::current().name().map(str::to_string))).unwrap();
            }));
        }
        let got: Vec<_> = (0..4).map(|_| rx.recv_timeout(Duration::from_secs(10)).expect("a job ran")).collect();
        let order: Vec<_> = got.iter().map(|(i, _)| *i).collect();
        assert_eq!(order, vec![0, 1, 3, 4]);
        assert!(got.iter().all(|(_, name)| name.as_deref() == Some("test-launch")), "{got:?}");
        wait_for("the panicking job counted", || l.jobs_run() == 5);
        // A task a job spawns (a process's reads and supervision) runs on the launcher's thread.
        let task_tx = tx.clone();
        l.submit(Box::new(move || {
            tokio::spawn(async move {
                tokio::task::yield_now().await;
                task_tx.send((7, thread::current().name().map(str::to_string))).unwrap();
            });
        }));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).expect("the task ran"), (7, Some("test-launch".into())));
        // Parked again, it is woken by the next job.
        wait_for("the launcher to park", || l.parked());
        l.submit(Box::new(move || tx.send((9, None)).unwrap()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).expect("woken").0, 9);
    }

    #[test]
    fn a_stand_by_keeps_it_ready_for_a_launch_and_unused_ones_shrink_to_nothing() {
        let l = Launcher::start("test-standby").expect("thread");
        wait_for("the launcher to park", || l.parked());
        assert!(!l.claim(), "a parked launcher with no end seen cannot be claimed");
        // Stood by, it is awake, and a job queued then runs without a wake.
        wait_for("a stand-by", || {
            l.stand_by();
            l.claim()
        });
        assert!(!l.claim(), "one launch per stand-by");
        let (tx, rx) = mpsc::channel();
        l.submit(Box::new(move || tx.send(()).unwrap()));
        rx.recv_timeout(Duration::from_secs(10)).expect("the job ran");
        // Stand-bys that no launch uses halve the window, down to none.
        let mut widths = vec![l.window_us()];
        while l.window_us() > 0 {
            wait_for("the launcher to park", || l.parked());
            let before = l.window_us();
            l.stand_by();
            wait_for("an unused stand-by to end", || l.window_us() < before);
            widths.push(l.window_us());
            assert!(widths.len() < 20, "{widths:?}");
        }
        assert!(widths.windows(2).all(|w| w[1] <= w[0] / 2 + 1), "{widths:?}");
        // With none, a stand-by no longer wakes it...
        l.stand_by();
        thread::sleep(Duration::from_millis(20));
        assert!(l.parked());
        // ...and a launch that finds it parked right after an end (within the widest window)
        // widens it again.
        wait_for("a missed launch to widen the stand-by", || {
            l.stand_by();
            assert!(!l.claim());
            l.window_us() == MAX_WINDOW_US
        });
    }
}
