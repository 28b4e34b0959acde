//! Checkpoints of a sandbox's working directory (see `core::snapshot`): the copy runs on the
//! runtime's blocking pool and its own copying threads, never on the JS thread. A failure is a
//! `SandboxSnapshotError` that names the path it failed on.

use super::error::js_error;
use super::realm::Realm;
// A sandbox's options as the user gave them: the core names a bad value as JS would.
use super::value::value_of;
use crate::core::error::{CoreError, CoreResult};
use crate::core::snapshot::{self, Report};
use napi::bindgen_prelude::{FnArgs, Object, PromiseRaw, Unknown};
use napi::Env;
use napi_derive::napi;
use std::path::PathBuf;

/// An entry a copy skipped: sockets, FIFOs and devices hold no data to copy, and a capture leaves
/// out what a process removed while it read the tree.
#[napi(object, object_from_js = false)]
pub struct NativeSkippedEntry {
    /// Relative to the root of the copy.
    pub path: String,
    /// "socket", "fifo", "character device", "block device" or "vanished".
    pub kind: String,
}

/// What one capture or restore did.
#[napi(object, object_from_js = false)]
pub struct NativeCopyReport {
    pub files: f64,
    pub directories: f64,
    pub symlinks: f64,
    pub bytes: f64,
    /// Files cloned (FICLONE): their data shares extents with the source.
    pub reflinked: f64,
    /// Bytes of data written: not linked from the previous capture, not cloned, not left as
    /// they were by a restore in place.
    pub new_bytes: f64,
    /// A capture: files linked from the previous capture of the same working directory. A
    /// restore in place: files left as they were.
    pub unchanged: f64,
    /// A restore in place: entries of the working directory the checkpoint does not have, removed.
    pub removed: f64,
    /// A capture: when it was put in place (ms since the epoch); 0 otherwise.
    pub created_ms: f64,
    pub skipped: Vec<NativeSkippedEntry>,
    pub duration_ms: f64,
}

impl From<Report> for NativeCopyReport {
    fn from(r: Report) -> Self {
        Self {
            files: r.files as f64,
            directories: r.directories as f64,
            symlinks: r.symlinks as f64,
            bytes: r.bytes as f64,
            reflinked: r.reflinked as f64,
            new_bytes: r.new_bytes as f64,
            unchanged: r.unchanged as f64,
            removed: r.removed as f64,
            created_ms: r.created_ms as f64,
            skipped: r
                .skipped
                .into_iter()
                .map(|s| NativeSkippedEntry { path: s.path, kind: s.kind.to_string() })
                .collect(),
            duration_ms: r.duration_ms,
        }
    }
}

/// The sandbox lifecycle options as the core read them.
#[napi(object, object_from_js = false)]
pub struct NativeLifecycleOptions {
    pub timeout_ms: Option<f64>,
    pub snapshot_on_stop: bool,
    pub persistent: bool,
}

/// Checks a sandbox's `timeoutMs`, `snapshotOnStop` and `persistent` by the core's rule.
#[napi(ts_args_type = "options: unknown")]
pub fn check_lifecycle_options(env: &Env, options: Unknown<'_>) -> napi::Result<NativeLifecycleOptions> {
    let o = snapshot::lifecycle_options(&value_of(&options)?).map_err(|e| js_error(env, e))?;
    Ok(NativeLifecycleOptions {
        timeout_ms: o.timeout_ms,
        snapshot_on_stop: o.snapshot_on_stop,
        persistent: o.persistent,
    })
}

/// Checks a checkpoint name by the rule Mastra's `LocalSandbox` uses for the same directory
/// (`[A-Za-z0-9][A-Za-z0-9._-]*`, no `..`).
#[napi]
pub fn check_checkpoint_name(env: &Env, name: String) -> napi::Result<()> {
    snapshot::check_name(&name).map_err(|e| js_error(env, e))
}

/// Refuses (InvalidProcessOptionError) a checkpoints directory that is the working directory or
/// inside it, compared as absolute paths with links resolved: a capture would copy itself.
#[napi]
pub fn check_checkpoints_directory(
    env: &Env,
    working_directory: String,
    checkpoints_directory: String,
) -> napi::Result<()> {
    snapshot::check_checkpoints_directory(&PathBuf::from(working_directory), &PathBuf::from(checkpoints_directory))
        .map_err(|e| js_error(env, e))
}

/// The typed error of a failed checkpoint, with the path, the system call and the OS error on
/// it, so a program need not read them out of the message.
fn snapshot_error(env: &Env, e: CoreError) -> napi::Error {
    let CoreError::SnapshotFailed { path, syscall, errno, .. } = &e else {
        return js_error(env, e);
    };
    let made = (|| -> napi::Result<napi::Error> {
        let realm = env.get_instance_data::<Realm>()?.ok_or_else(|| napi::Error::from_reason("no realm"))?;
        let factory = realm.error_factory.borrow_back(env)?;
        let obj: Unknown = factory.call(FnArgs::from((e.code().to_string(), e.to_string(), e.os_code(), *errno)))?;
        // SAFETY: the factory returns an Error instance, an object.
        let mut o: Object = unsafe { obj.cast()? };
        o.set("path", path.as_str())?;
        o.set("syscall", syscall.as_str())?;
        Ok(napi::Error::from(obj))
    })();
    made.unwrap_or_else(|_| js_error(env, e))
}

/// Runs `work` on the blocking pool and settles the promise on the JS thread. `work` owns
/// everything it uses.
fn off_thread<'env, T, V>(
    env: &'env Env,
    work: impl FnOnce() -> CoreResult<T> + Send + 'static,
    convert: impl FnOnce(T) -> V + 'static,
) -> napi::Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: napi::bindgen_prelude::ToNapiValue,
{
    env.spawn_future_with_callback(async move { Ok(tokio::task::spawn_blocking(work).await) }, move |env, r| match r {
        Ok(Ok(v)) => Ok(convert(v)),
        Ok(Err(e)) => Err(snapshot_error(env, e)),
        Err(join) => Err(napi::Error::from_reason(format!("checkpoint copy stopped: {join}"))),
    })
}

fn threads(n: Option<u32>) -> usize {
    n.filter(|n| *n > 0).map_or_else(snapshot::default_threads, |n| n.min(64) as usize)
}

/// Captures `workingDirectory` as checkpoint `name` under `checkpointsDirectory` (a copy to a
/// temporary sibling, renamed into place; the previous checkpoint stays intact on any failure),
/// recorded as made by `owner` when given. A checkpoints directory inside the working directory
/// is refused with InvalidProcessOptionError before anything is written.
#[napi(ts_return_type = "Promise<NativeCopyReport>")]
pub fn capture_checkpoint<'env>(
    env: &'env Env,
    working_directory: String,
    checkpoints_directory: String,
    name: String,
    owner: Option<String>,
    threads_count: Option<u32>,
) -> napi::Result<PromiseRaw<'env, NativeCopyReport>> {
    let n = threads(threads_count);
    off_thread(
        env,
        move || {
            let (wd, cps) = (PathBuf::from(working_directory), PathBuf::from(checkpoints_directory));
            snapshot::capture(&wd, &cps, &name, owner.as_deref(), n)
        },
        NativeCopyReport::from,
    )
}

/// Restores the checkpoint directory into `workingDirectory`, which must exist and be empty; on
/// failure it is left empty again.
#[napi(ts_return_type = "Promise<NativeCopyReport>")]
pub fn restore_checkpoint<'env>(
    env: &'env Env,
    checkpoint_directory: String,
    working_directory: String,
    threads_count: Option<u32>,
) -> napi::Result<PromiseRaw<'env, NativeCopyReport>> {
    let n = threads(threads_count);
    off_thread(
        env,
        move || snapshot::restore(&PathBuf::from(checkpoint_directory), &PathBuf::from(working_directory), n),
        NativeCopyReport::from,
    )
}

/// Deletes the checkpoints under `checkpointsDirectory` that `owner` made and that nobody has
/// captured over since; resolves with their names.
#[napi(ts_return_type = "Promise<string[]>")]
pub fn remove_owned_checkpoints<'env>(
    env: &'env Env,
    checkpoints_directory: String,
    owner: String,
) -> napi::Result<PromiseRaw<'env, Vec<String>>> {
    off_thread(env, move || snapshot::remove_owned(&PathBuf::from(checkpoints_directory), &owner), |v| v)
}

/// Restores checkpoint `name` under `checkpointsDirectory` into `workingDirectory` in place
/// (made if missing), writing only what differs; the result is what a restore into an empty
/// directory makes. An unknown name rejects with SandboxSnapshotError (ENOENT) naming it.
#[napi(ts_return_type = "Promise<NativeCopyReport>")]
pub fn restore_checkpoint_in_place<'env>(
    env: &'env Env,
    checkpoints_directory: String,
    name: String,
    working_directory: String,
    threads_count: Option<u32>,
) -> napi::Result<PromiseRaw<'env, NativeCopyReport>> {
    let n = threads(threads_count);
    off_thread(
        env,
        move || {
            let (cps, wd) = (PathBuf::from(checkpoints_directory), PathBuf::from(working_directory));
            snapshot::restore_in_place(&cps, &name, &wd, n)
        },
        NativeCopyReport::from,
    )
}

/// One checkpoint under a checkpoints directory.
#[napi(object, object_from_js = false)]
pub struct NativeListedCheckpoint {
    pub name: String,
    /// When it was captured, in ms since the epoch.
    pub created_ms: f64,
    pub files: f64,
    pub bytes: f64,
    /// Bytes its capture wrote; absent for a checkpoint procvisor has no record of.
    pub new_bytes: Option<f64>,
}

/// Every checkpoint under `checkpointsDirectory`, oldest first (none when it does not exist).
#[napi(ts_return_type = "Promise<NativeListedCheckpoint[]>")]
pub fn list_checkpoints<'env>(
    env: &'env Env,
    checkpoints_directory: String,
) -> napi::Result<PromiseRaw<'env, Vec<NativeListedCheckpoint>>> {
    off_thread(
        env,
        move || snapshot::list(&PathBuf::from(checkpoints_directory)),
        |v| {
            v.into_iter()
                .map(|l| NativeListedCheckpoint {
                    name: l.name,
                    created_ms: l.created_ms as f64,
                    files: l.files as f64,
                    bytes: l.bytes as f64,
                    new_bytes: l.new_bytes.map(|n| n as f64),
                })
                .collect::<Vec<_>>()
        },
    )
}

/// Deletes checkpoint `name` under `checkpointsDirectory`, whoever captured it; the checkpoints
/// that share files with it keep them. An unknown name rejects with SandboxSnapshotError (ENOENT).
#[napi(ts_return_type = "Promise<void>")]
pub fn delete_checkpoint<'env>(
    env: &'env Env,
    checkpoints_directory: String,
    name: String,
) -> napi::Result<PromiseRaw<'env, ()>> {
    off_thread(env, move || snapshot::delete(&PathBuf::from(checkpoints_directory), &name), |v| v)
}
