//! The last line against orphans: a tiny `/bin/sh` process, in a group of its own, that holds the
//! read end of a pipe whose write end only we hold (close-on-exec, so no child inherits it). When
//! Node dies in any way, SIGKILL included, the pipe closes and it kills every group and cgroup
//! still listed, then removes the cgroups. No `pre_exec` on the spawn path (which would cost a fork
//! of the whole Node process per spawn), and no thread of ours has to survive.
//!
//! The list of live groups is a table in a file the watchdog shares with us (a `memfd` on Linux,
//! an unlinked temporary file elsewhere), written with `pwrite` into fixed-size slots. The
//! watchdog reads it only once Node is gone, so a launch costs one system call here and no
//! wake-up of another process: a line per launch down the pipe cost the watchdog's shell a
//! `read` system call per byte, two wake-ups per process, and a CPU the launches needed.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt as _;
use std::os::unix::process::CommandExt as _;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

// A line in the pipe is `p dir` (a parent cgroup, rare) or, without a table, `+ pgid`/`- pgid`.
// A table slot is `+ pgid` padded to `SLOT` bytes, or spaces once freed. At the end: SIGKILL to
// each parent cgroup's whole subtree (`cgroup.kill`), then to each group and its root (should it
// have left the group), then the cgroups are removed once their members are gone.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
exec 3<&1 >/dev/null
pids=''
parents=''
while read -r op p; do
  case "$op" in
    +) pids="$pids $p" ;;
    -) n=''; for q in $pids; do [ "$q" = "$p" ] || n="$n $q"; done; pids=$n ;;
    p) parents="$parents $p" ;;
  esac
done
while read -r op p; do [ "$op" = + ] && pids="$pids $p"; done <&3
for d in $parents; do echo 1 > "$d/cgroup.kill" 2>/dev/null; done
for q in $pids; do kill -9 -"$q" "$q" 2>/dev/null; done
gone() { i=0; while ! rmdir "$1" 2>/dev/null && [ -d "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; }
for d in $parents; do for c in "$d"/*/; do [ -d "$c" ] && gone "$c"; done; gone "$d"; done
"#;

/// Bytes per table slot: `+ `, a pid of up to 10 digits, padding, and a newline.
const SLOT: usize = 16;

struct Watchdog {
    pipe: Option<ChildStdin>,
    table: Option<Table>,
}

struct Table {
    file: File,
    /// Slots freed by ended groups, taken again before the file grows.
    free: Vec<u64>,
    next: u64,
}

/// A group's place in the watchdog's list, given back by `unregister` when the group has ended.
#[derive(Debug)]
pub struct Entry(Inner);

#[derive(Debug)]
enum Inner {
    Slot(u64),
    Line(i32),
}

fn watchdog() -> &'static Mutex<Watchdog> {
    static W: OnceLock<Mutex<Watchdog>> = OnceLock::new();
    W.get_or_init(|| {
        let table = table_file();
        // The shell gets the table as its stdout (any file works there; it moves it to fd 3).
        let out = match table.as_ref().map(File::try_clone) {
            Some(Ok(f)) => Stdio::from(f),
            _ => Stdio::null(),
        };
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir("/")
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(Stdio::null())
            .spawn();
        let pipe = child.ok().and_then(|mut c| c.stdin.take());
        let table = table.filter(|_| pipe.is_some()).map(|file| Table { file, free: Vec::new(), next: 0 });
        Mutex::new(Watchdog { pipe, table })
    })
}

/// A close-on-exec file, readable and writable, that no other process can open by name.
fn table_file() -> Option<File> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::FromRawFd as _;
        // SAFETY: a NUL-terminated name and valid flags; a non-negative result is a new descriptor
        // owned by nothing else.
        let fd = unsafe { libc::memfd_create(c"procvisor-watchdog".as_ptr(), libc::MFD_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: see above.
            return Some(unsafe { File::from_raw_fd(fd) });
        }
    }
    let path = std::env::temp_dir().join(format!(
        "procvisor-watchdog-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ));
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).ok()?;
    std::fs::remove_file(&path).ok()?;
    Some(file)
}

fn send(w: &mut Watchdog, line: &str) {
    if let Some(stdin) = w.pipe.as_mut() {
        if stdin.write_all(line.as_bytes()).is_err() {
            w.pipe = None;
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Watchdog> {
    watchdog().lock().unwrap_or_else(|e| e.into_inner())
}

/// Lists a process group (and its root, whose pid is the group id) until `unregister`.
pub fn register(pgid: i32) -> Entry {
    let mut w = lock();
    let Some(t) = w.table.as_mut() else {
        send(&mut w, &format!("+ {pgid}\n"));
        return Entry(Inner::Line(pgid));
    };
    let slot = t.free.pop().unwrap_or_else(|| {
        t.next += 1;
        t.next - 1
    });
    let mut line = [b' '; SLOT];
    let _ = write!(&mut line[..SLOT - 1], "+ {pgid}");
    line[SLOT - 1] = b'\n';
    if t.file.write_all_at(&line, slot * SLOT as u64).is_err() {
        // Never seen (the file is in memory); the pipe still carries the entry.
        t.free.push(slot);
        send(&mut w, &format!("+ {pgid}\n"));
        return Entry(Inner::Line(pgid));
    }
    Entry(Inner::Slot(slot))
}

/// Takes a group off the list once it has ended.
pub fn unregister(entry: Entry) {
    let mut w = lock();
    match entry.0 {
        Inner::Slot(slot) => {
            let Some(t) = w.table.as_mut() else { return };
            let mut line = [b' '; SLOT];
            line[SLOT - 1] = b'\n';
            if t.file.write_all_at(&line, slot * SLOT as u64).is_ok() {
                t.free.push(slot);
            }
        }
        Inner::Line(pgid) => send(&mut w, &format!("- {pgid}\n")),
    }
}

/// A parent cgroup whose subtree is killed, and which is removed, when Node is gone.
pub fn register_parent(dir: &std::path::Path) {
    send(&mut lock(), &format!("p {}\n", dir.display()));
}

/// Starts the watchdog now rather than at the first spawn.
pub fn start() {
    let _ = watchdog();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups the watchdog would kill now, as it will read them.
    fn listed() -> Vec<i32> {
        let w = lock();
        let t = w.table.as_ref().expect("a table on this platform");
        let mut bytes = vec![0; t.next as usize * SLOT];
        t.file.read_exact_at(&mut bytes, 0).unwrap();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("+ ").map(|p| p.trim().parse().unwrap()))
            .collect()
    }

    #[test]
    fn slots_are_listed_until_unregistered_and_then_reused() {
        // Pids above any real one, so that the other tests' launches cannot collide with them.
        let (a, b) = (2_000_000_001, 2_000_000_002);
        let ea = register(a);
        let eb = register(b);
        assert!(listed().contains(&a) && listed().contains(&b));
        let Entry(Inner::Slot(slot_a)) = ea else { panic!("a table slot") };
        unregister(ea);
        assert!(!listed().contains(&a) && listed().contains(&b));
        // The freed slot is taken again before the file grows (unless another test took it first).
        let ec = register(a);
        assert!(listed().contains(&a));
        let before = lock().table.as_ref().unwrap().next;
        if let Entry(Inner::Slot(s)) = &ec {
            assert!(*s == slot_a || *s < before, "slot {s} reused within {before}");
        }
        unregister(ec);
        unregister(eb);
        assert!(!listed().contains(&a) && !listed().contains(&b));
    }
}
