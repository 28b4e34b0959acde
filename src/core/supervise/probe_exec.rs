//! An `exec` probe's command: launched as every child is (its own process group, exactly the
//! env given, in the process's cwd), passed when it exits 0 within the probe's timeout, and
//! never left behind: its group is killed past the timeout, once its root has exited, and when
//! the probe is stopped midway.

use crate::core::launch::command::{SpawnSpec, StdinMode};
use crate::core::launch::spawn::{self, Placement};
use crate::core::supervise::pipe::AsyncPipe;
use crate::core::tree::group::ProcessGroup;
use crate::core::tree::{reaper, watchdog};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Bytes of the command's output a failure quotes (its last ones, where the error usually is).
const QUOTED: usize = 200;

/// The command's group until its root is reaped; dropped earlier (the probe stopped), it kills
/// the group and reaps the root on the runtime, so that no zombie stays.
struct Running {
    pid: u32,
    pidfd: Option<Arc<OwnedFd>>,
    listed: Option<watchdog::Entry>,
    reaped: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(entry) = self.listed.take() {
            watchdog::unregister(entry);
        }
        if self.reaped {
            return;
        }
        ProcessGroup::new(self.pid as i32).signal(libc::SIGKILL);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(reaper::wait(self.pid, self.pidfd.take()));
        }
    }
}

/// Reads a pipe to its end, keeping its last `QUOTED` bytes.
async fn drain(fd: Option<OwnedFd>) -> Vec<u8> {
    let mut tail = Vec::new();
    let Some(mut pipe) = fd.and_then(|fd| AsyncPipe::new(fd).ok()) else { return tail };
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = pipe.read(&mut buf).await {
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > QUOTED * 4 {
            tail.drain(..tail.len() - QUOTED);
        }
    }
    tail
}

/// Runs `argv` in `cwd` with `env`: `Ok` when it exits 0 within `limit`, else why not.
pub(super) async fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    limit: Duration,
) -> Result<String, String> {
    let shown = argv.join(" ");
    let mut spec = SpawnSpec::new(argv.to_vec(), cwd);
    spec.env = env.to_vec();
    spec.stdin = StdinMode::Ignore;
    let launched = spawn::launch(&spec, Placement { cgroup: None }).map_err(|e| format!("{shown}: {e}"))?;
    let mut running = Running {
        pid: launched.pid,
        pidfd: launched.pidfd.clone(),
        listed: Some(watchdog::register(launched.pid as i32)),
        reaped: false,
    };
    let group = ProcessGroup::new(launched.pid as i32);
    let exit = reaper::wait(launched.pid, launched.pidfd.clone());
    tokio::pin!(exit);
    // Both pipes are read, so that a command that prints much never blocks on a full pipe; its
    // end is its root's exit, not the pipes' (a background child may hold them).
    let (stdout, stderr) = (launched.stdout, launched.stderr);
    let output = async move { tokio::join!(drain(Some(stdout)), drain(stderr)) };
    tokio::pin!(output);
    let mut tails = None;
    let status = tokio::time::timeout(limit, async {
        loop {
            tokio::select! {
                status = &mut exit => return status,
                read = &mut output, if tails.is_none() => tails = Some(read),
            }
        }
    })
    .await;
    let status = match status {
        Ok(status) => status,
        Err(_) => {
            group.signal(libc::SIGKILL);
            let _ = exit.await;
            running.reaped = true;
            return Err(format!("{shown} did not exit within {}ms; it was killed", limit.as_millis()));
        }
    };
    running.reaped = true;
    // What the root left behind goes with it; then its pipes end, unless something that left
    // the group holds them, which is not waited for.
    group.signal(libc::SIGKILL);
    drop(running);
    if tails.is_none() {
        tails = tokio::time::timeout(Duration::from_millis(100), &mut output).await.ok();
    }
    match status {
        Ok(st) if st.code() == Some(0) => Ok(format!("{shown} exited 0")),
        Ok(st) => {
            let how = match (st.code(), st.signal()) {
                (Some(code), _) => format!("exited with code {code}"),
                (None, Some(sig)) => format!("was ended by signal {sig}"),
                _ => "ended".to_string(),
            };
            let (out, err) = tails.unwrap_or_default();
            let quoted = if err.is_empty() { out } else { err };
            let quoted = String::from_utf8_lossy(&quoted[quoted.len().saturating_sub(QUOTED)..]).trim().to_string();
            Err(if quoted.is_empty() { format!("{shown} {how}") } else { format!("{shown} {how}: {quoted}") })
        }
        Err(e) => Err(format!("{shown}: {e}")),
    }
}
