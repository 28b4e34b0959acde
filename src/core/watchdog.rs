//! The last line against orphans: a tiny `/bin/sh` process, in a group of its own, that holds the
//! read end of a pipe whose write end only we hold (close-on-exec, so no child inherits it). We
//! tell it each group (and cgroup) we start and end; when Node dies in any way, SIGKILL included,
//! the pipe closes and it kills every group and cgroup still listed, then removes the cgroups. No `pre_exec` on the spawn path (which would cost
//! a fork of the whole Node process per spawn), and no thread of ours has to survive.

use std::io::Write;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

// Entries are process group ids; `p dir` names a parent cgroup. At the end: SIGKILL to each
// group and its root (should it have left the group), and to each parent cgroup's whole subtree
// (`cgroup.kill`), then the cgroups are removed once their members are gone.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
pids=''
parents=''
while read -r op p; do
  case "$op" in
    +) pids="$pids $p" ;;
    -) n=''; for q in $pids; do [ "$q" = "$p" ] || n="$n $q"; done; pids=$n ;;
    p) parents="$parents $p" ;;
  esac
done
for d in $parents; do echo 1 > "$d/cgroup.kill" 2>/dev/null; done
for q in $pids; do kill -9 -"$q" "$q" 2>/dev/null; done
gone() { i=0; while ! rmdir "$1" 2>/dev/null && [ -d "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; }
for d in $parents; do for c in "$d"/*/; do [ -d "$c" ] && gone "$c"; done; gone "$d"; done
"#;

fn pipe() -> &'static Mutex<Option<ChildStdin>> {
    static W: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();
    W.get_or_init(|| {
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir("/")
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        Mutex::new(child.ok().and_then(|mut c| c.stdin.take()))
    })
}

fn send(line: &str) {
    let mut w = pipe().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(stdin) = w.as_mut() {
        if stdin.write_all(line.as_bytes()).is_err() {
            *w = None;
        }
    }
}

/// Lists a process group (and its root, whose pid is the group id).
pub fn register(pgid: i32) {
    send(&format!("+ {pgid}\n"));
}

/// A parent cgroup whose subtree is killed, and which is removed, when Node is gone.
pub fn register_parent(dir: &std::path::Path) {
    send(&format!("p {}\n", dir.display()));
}

pub fn unregister(pgid: i32) {
    send(&format!("- {pgid}\n"));
}

/// Starts the watchdog now rather than at the first spawn.
pub fn start() {
    let _ = pipe();
}

use std::os::unix::process::CommandExt as _;
