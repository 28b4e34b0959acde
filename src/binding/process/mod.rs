//! `NativeProcess`: the JS-visible handle on one core `Process`. Both JS faces (the Mastra
//! `ProcessHandle` and the Processes API's `Process`) are views over one of these. Here: the
//! launch, what the handle knows of the process, its waits, signals and stdin; its output in
//! `output`, its terminal in `terminal`, and the objects that say how it ended in `exit`.
//!
//! Every asynchronous method clones the `Arc<Process>` into its future before returning the
//! promise: the future owns what it uses, so a JS object that is collected, or a worker that is
//! terminated, while a call is pending can never leave a future reading freed memory.

mod exit;
mod output;
mod output_take;
mod terminal;

pub use exit::*;
pub use output::*;
pub use output_take::*;
pub use terminal::*;

use super::checks::{limit, signal_arg};
use super::error::invalid;
use super::loop_reader;
use super::request::LaunchRequest;
use super::settle::{self, promise};
use crate::core::launch::request::{self, Face};
use crate::core::supervise::process::{Process, SignalIntent};
use crate::core::supervise::state::State;
use crate::core::{launch::launcher, supervise::supervisor};
use napi::bindgen_prelude::{Buffer, PromiseRaw, Status, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Called (weakly: it does not keep Node alive) when new output is ready for `pumpDrain()`.
pub type WakeFn = ThreadsafeFunction<(), (), (), Status, false, true>;

/// A supervised process. Created by `spawnProcess`.
#[napi]
pub struct NativeProcess {
    inner: Arc<Process>,
    /// The `timeout` as given, for the Mastra face's timeout note.
    timeout: Option<f64>,
    /// The reader is waiting for its wake-up, and keeps Node alive meanwhile.
    reader_waits: AtomicBool,
}

/// A promise of the state once `pred` holds, settled by the supervisor's own update: no task is
/// spawned on the runtime for the wait, so the JS thread hands nothing to a runtime thread (on a
/// VM, waking a parked thread costs tens of microseconds), and the one wake-up left is the
/// settlement itself.
fn settle_when<'env>(
    env: &'env Env,
    p: &Arc<Process>,
    pred: fn(&State) -> bool,
) -> napi::Result<PromiseRaw<'env, NativeState>> {
    let (pending, promise) = settle::pending(env)?;
    p.when(pred, Box::new(move |st| pending.settle(Ok(NativeState::from(st)))));
    Ok(promise)
}

fn wake_fn(wake: WakeFn) -> Box<dyn Fn() + Send + Sync> {
    Box::new(move || {
        wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
    })
}

/// Spawns a process (off the JS thread) and starts supervising it. `face` is `'shell'` (the
/// Mastra surface's `spawn`), `'argv'` (the Processes API's `exec`) or `'terminal'` (its
/// `createTerminal`); `request` is the call's values as the user gave them, over the manager's:
/// the core reads their meaning. `onWake`, when given, is called whenever new output is ready for
/// `pumpDrain()`; while it is installed the child is slowed down rather than letting the pump
/// lose output. `holdOutput` holds the producer for a byte-stream reader at the start of stdout,
/// from the first byte, until `setReaderHold` moves or releases it.
#[napi(ts_return_type = "Promise<NativeProcess>")]
pub fn spawn_process<'env>(
    env: &'env Env,
    face: String,
    request: LaunchRequest,
    owner: u32,
    on_wake: Option<WakeFn>,
    hold_output: Option<bool>,
) -> napi::Result<PromiseRaw<'env, NativeProcess>> {
    let face = Face::from_name(&face).ok_or_else(|| invalid(env, "face", "must be 'shell', 'argv' or 'terminal'"))?;
    // Only the conversion happens on the JS thread; the request's rules are read off it,
    // with the spawn: a bad value still rejects the launch, with its typed error.
    let request = request::Request::from(request);
    let id = format!("p{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let lend = on_wake.is_some() && loop_reader::available();
    let pump = on_wake.map(wake_fn);
    let hold = hold_output.unwrap_or(false);
    let (pending, promise) = settle::pending(env)?;
    let launch = move || {
        let launched = request::parse(face, &request).and_then(|launch| {
            let (inner, run) = supervisor::launch(launch.spec, id, owner as u64, pump, hold)?;
            if lend {
                inner.output.allow_lending();
            }
            Ok((NativeProcess { inner, timeout: launch.timeout, reader_waits: AtomicBool::new(false) }, run))
        });
        match launched {
            Ok((process, run)) => {
                pending.settle(Ok(process));
                Some(run)
            }
            Err(e) => {
                pending.settle::<NativeProcess>(Err(e));
                None
            }
        }
    };
    if launcher::inline_now() {
        // On this thread, until the child's exec; a launch that panics rejects (its promise is
        // dropped unsettled) and never unwinds into Node.
        if let Ok(Some(run)) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(launch)) {
            napi::bindgen_prelude::spawn(run);
        }
        return Ok(promise);
    }
    match launcher::global().filter(|l| l.claim()) {
        // The call only queues, and no runtime worker waits for the child's exec. The job runs
        // in the launcher's own runtime, which reads and supervises the process to its end.
        Some(l) => l.submit(Box::new(move || {
            if let Some(run) = launch() {
                tokio::spawn(run);
            }
        })),
        // On the runtime, whose workers are awake while other processes keep them busy. The
        // launch's task goes on as the process's own: no task spawned from a runtime thread, and
        // none of the hand-offs between its threads that each such spawn costs.
        None => {
            napi::bindgen_prelude::spawn(async move {
                if let Some(run) = launch() {
                    run.await;
                }
            });
        }
    }
    Ok(promise)
}

#[napi]
impl NativeProcess {
    /// Unique in this OS process; names the process in cursors.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// Whether it runs on a pseudo-terminal (started with `pty`).
    #[napi(getter)]
    pub fn on_terminal(&self) -> bool {
        self.inner.on_terminal()
    }

    /// The OS pid of the root, which is also the process group id.
    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.inner.pid()
    }

    /// The argv that was launched (for a shell command: `/bin/sh`, `-c`, the command).
    #[napi(getter)]
    pub fn argv(&self) -> Vec<String> {
        self.inner.argv.clone()
    }

    /// The working directory, resolved.
    #[napi(getter)]
    pub fn cwd(&self) -> String {
        self.inner.cwd.display().to_string()
    }

    /// The `timeout` in milliseconds as it was given, if there is one.
    #[napi(getter)]
    pub fn timeout_ms(&self) -> Option<f64> {
        self.timeout
    }

    /// CPU time of the whole tree in milliseconds, when it is contained in a cgroup (the final
    /// figure once it is over); `undefined` otherwise.
    #[napi(getter)]
    pub fn cpu_time_ms(&self) -> Option<f64> {
        self.inner.cpu_time_ms()
    }

    /// The tree's memory peak in bytes, where the memory controller is enabled for its cgroup.
    #[napi(getter)]
    pub fn memory_peak_bytes(&self) -> Option<f64> {
        self.inner.memory_peak_bytes()
    }

    /// The memory it uses now in bytes, while it runs: its tree's from its cgroup, else its
    /// root's resident set; `undefined` once it has ended, and between a service's runs.
    #[napi(getter)]
    pub fn memory_bytes(&self) -> Option<f64> {
        self.inner.memory_bytes()
    }

    #[napi(getter)]
    pub fn started_at_ms(&self) -> f64 {
        self.inner.started_at_ms as f64
    }

    /// When the process was done (the Processes API end), in ms since the epoch; undefined
    /// before. The one field `state()` would be built for when pruning exited processes.
    #[napi(getter)]
    pub fn done_at_ms(&self) -> Option<f64> {
        let st = self.inner.state();
        if st.is_done() {
            st.ended_at_ms.map(|v| v as f64)
        } else {
            None
        }
    }

    #[napi]
    pub fn state(&self) -> NativeState {
        self.inner.state().into()
    }

    /// Resolves once the root exited and its output is drained (the Mastra end), with that end
    /// alone (what the Mastra waits report), not the whole state.
    #[napi(ts_return_type = "Promise<NativeFinish>")]
    pub fn wait_finish<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeFinish>> {
        let (pending, promise) = settle::pending(env)?;
        self.inner.when(State::is_finished, Box::new(move |st| pending.settle(Ok(NativeFinish::of(&st)))));
        Ok(promise)
    }

    /// Resolves when the whole group is gone and the terminal event is logged (the Processes API
    /// end), or after `limitMs` with the state as it is then.
    #[napi(ts_return_type = "Promise<NativeState>")]
    pub fn wait_done<'env>(
        &self,
        env: &'env Env,
        limit_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, NativeState>> {
        if limit_ms.is_none() {
            return settle_when(env, &self.inner, State::is_done);
        }
        let (p, limit) = (self.inner.clone(), limit(limit_ms));
        promise(env, async move { Ok(p.wait_done(limit?).await) }, NativeState::from)
    }

    /// Resolves once what the process logged to its manager's `logDirectory` is in the files (at
    /// once without one). After the process is done nothing more is written: a manager's close
    /// waits for this, so that its files are settled, and their directory removable, once it resolves.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn logs_written<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let disk = self.inner.output.disk().cloned();
        promise(
            env,
            async move {
                if let Some(disk) = disk {
                    disk.written().await;
                }
                Ok(())
            },
            |()| (),
        )
    }

    /// Resolves with the exit code once the whole group is gone (the Processes API's `exitCode`):
    /// the number alone, settled like `waitDone()` without building the state object.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn wait_exit_code<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, i32>> {
        let (pending, promise) = settle::pending(env)?;
        let code = |st: State| st.done.map(|e| e.code).unwrap_or(-1);
        self.inner.when(State::is_done, Box::new(move |st| pending.settle(Ok(code(st)))));
        Ok(promise)
    }

    /// Installs the listener pump on a running process; it sees output from now on.
    #[napi]
    pub fn set_pump(&self, on_wake: WakeFn) {
        self.inner.output.set_pump(wake_fn(on_wake), false);
        if loop_reader::available() {
            self.inner.output.allow_lending();
        }
    }

    /// Sends `signal` (1–64, or a name: 'SIGTERM', 'TERM') to the whole group, and to the root
    /// should it have left the group. SIGKILL, or `asKill`, marks the outcome as killed. Returns
    /// false when it reached no process.
    #[napi]
    pub fn signal(&self, env: &Env, value: Unknown<'_>, as_kill: bool) -> napi::Result<bool> {
        let signal = signal_arg(env, value)?;
        let intent = if as_kill || signal == libc::SIGKILL { SignalIntent::Kill } else { SignalIntent::Plain };
        Ok(self.inner.signal(signal, intent))
    }

    /// Ends the process through its `shutdown` option (its signal, then SIGKILL once its
    /// `timeoutMs` has passed), or with SIGKILL at once without one; either is a kill. Returns
    /// false when the signal reached no process.
    #[napi]
    pub fn shutdown(&self) -> bool {
        self.inner.shutdown()
    }

    /// Ends the current run of a service without ending the service (see the core's
    /// `restart_run`); resolves with the state once the next run has started, or the service
    /// has ended. Rejects for a process without a restart policy, and for one that has ended.
    #[napi(ts_return_type = "Promise<NativeState>")]
    pub fn restart_run<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeState>> {
        let p = self.inner.clone();
        promise(
            env,
            async move {
                p.restart_run()?;
                Ok(p.wait_next_run().await)
            },
            NativeState::from,
        )
    }

    /// How long a shutdown may take before its SIGKILL, in milliseconds (0 without `shutdown`).
    #[napi(getter)]
    pub fn shutdown_ms(&self) -> f64 {
        self.inner.shutdown.map_or(0.0, |sd| sd.timeout_ms as f64)
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn write_stdin<'env>(&self, env: &'env Env, data: Buffer) -> napi::Result<PromiseRaw<'env, ()>> {
        let (p, bytes) = (self.inner.clone(), bytes::Bytes::copy_from_slice(&data));
        promise(env, async move { p.write_stdin(bytes).await }, |()| ())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close_stdin<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let p = self.inner.clone();
        promise(env, async move { p.close_stdin().await }, |()| ())
    }
}
