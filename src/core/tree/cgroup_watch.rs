//! Waiting for a cgroup to empty: an inotify watch on its `cgroup.events`, one inotify
//! descriptor and one thread for every cgroup of this Node process, so that waiting costs nothing.

use crate::core::tree::cgroup::populated;
use std::collections::HashMap;
use std::os::fd::OwnedFd;
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;
#[cfg(target_os = "linux")]
use std::sync::OnceLock;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// Resolves once no live process is a member of the cgroup at `dir`: an inotify event on
/// `cgroup.events`, shared by every cgroup of this Node process, so that waiting costs nothing.
pub async fn wait_empty(dir: &Path, events: &OwnedFd) {
    if !populated(dir, events) {
        return;
    }
    let Some(w) = watcher() else {
        // No inotify: poll, slowly.
        while populated(dir, events) {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        return;
    };
    let watch = w.watch(&dir.join("cgroup.events"));
    // The kernel sends at most one `cgroup.events` notification per file every 10 ms, so an event
    // can come late; a tree that is about to end (its root already reaped) is looked at a few
    // more times early on, then only the event is awaited.
    let mut look = Some(std::time::Duration::from_millis(1));
    loop {
        let notified = watch.as_ref().map(|(_, n)| n.notified());
        tokio::pin!(notified);
        if let Some(n) = notified.as_mut().as_pin_mut() {
            n.enable();
        }
        if !populated(dir, events) {
            break;
        }
        let pause = look.unwrap_or(std::time::Duration::from_secs(3600));
        look = look.map(|d| d * 2).filter(|d| *d <= std::time::Duration::from_millis(64));
        match notified.as_pin_mut() {
            Some(n) => {
                tokio::select! {
                    _ = n => {}
                    _ = tokio::time::sleep(pause) => {}
                }
            }
            None => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
    if let Some((wd, _)) = watch {
        w.unwatch(wd);
    }
}

/// One inotify descriptor for every `cgroup.events` watched, read by one thread of its own (not
/// a task: a runtime can shut down, napi-rs's when the last JS environment that used it goes
/// away, and a task of it stopped reading for good; every later wait for a tree to empty then
/// saw its end only at its hourly look). cgroups are Linux's; elsewhere there is no watcher (and
/// no cgroup to watch).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Watcher {
    fd: Arc<OwnedFd>,
    waiters: Mutex<HashMap<i32, Arc<Notify>>>,
}

#[cfg(not(target_os = "linux"))]
fn watcher() -> Option<&'static Watcher> {
    None
}

#[cfg(not(target_os = "linux"))]
impl Watcher {
    fn watch(&self, _file: &Path) -> Option<(i32, Arc<Notify>)> {
        None
    }

    fn unwatch(&self, _wd: i32) {}
}

#[cfg(target_os = "linux")]
fn watcher() -> Option<&'static Watcher> {
    static W: OnceLock<Option<Watcher>> = OnceLock::new();
    W.get_or_init(|| {
        // Blocking: its thread waits in `read`.
        // SAFETY: inotify_init1 returns a new descriptor or -1.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a fresh descriptor we own.
        let fd = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
        let w = Watcher { fd: fd.clone(), waiters: Mutex::new(HashMap::new()) };
        // Without its thread there is no watcher: the waits poll.
        std::thread::Builder::new().name("procvisor-cgrp".into()).spawn(move || read_events(&fd)).ok()?;
        Some(w)
    })
    .as_ref()
}

#[cfg(target_os = "linux")]
impl Watcher {
    fn watch(&self, file: &Path) -> Option<(i32, Arc<Notify>)> {
        let c = std::ffi::CString::new(file.as_os_str().as_encoded_bytes()).ok()?;
        // SAFETY: a valid path; the watch lives until `unwatch`.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), libc::IN_MODIFY) };
        if wd < 0 {
            return None;
        }
        let n = self.waiters.lock().unwrap_or_else(|e| e.into_inner()).entry(wd).or_default().clone();
        Some((wd, n))
    }

    fn unwatch(&self, wd: i32) {
        self.waiters.lock().unwrap_or_else(|e| e.into_inner()).remove(&wd);
        // SAFETY: removes our own watch (harmless if the cgroup is already gone).
        unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
    }
}

#[cfg(target_os = "linux")]
fn read_events(fd: &OwnedFd) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: reads into our buffer, blocking until events come.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let mut at = 0usize;
        let header = std::mem::size_of::<libc::inotify_event>();
        while at + header <= n as usize {
            // SAFETY: the kernel wrote whole events; read the header unaligned.
            let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) };
            if let Some(w) = watcher() {
                if let Some(n) = w.waiters.lock().unwrap_or_else(|e| e.into_inner()).get(&ev.wd) {
                    n.notify_waiters();
                }
            }
            at += header + ev.len as usize;
        }
    }
}
