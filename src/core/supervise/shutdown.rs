//! How a process is asked to end: its `shutdown` signal, then SIGKILL once the wait is over, for
//! `close()`, a sandbox's stop and `stop()`. Without `shutdown` it is SIGKILL at once, as it has
//! always been. The SIGKILL is sent by the supervisor (`kill_after` in the state), so it comes
//! with nobody attached too, and never reaches a tree that is already gone.

use crate::core::supervise::process::{Process, SignalIntent};
use std::time::{Duration, Instant};

impl Process {
    /// Ends the process through its shutdown; a kill (the outcome is `killed`, a service ends for
    /// good). False when the signal reached no process.
    pub fn shutdown(&self) -> bool {
        let Some(sd) = self.shutdown else {
            return self.signal(libc::SIGKILL, SignalIntent::Kill);
        };
        if sd.signal == libc::SIGKILL {
            return self.signal(libc::SIGKILL, SignalIntent::Kill);
        }
        let reached = self.signal(sd.signal, SignalIntent::Kill);
        if reached {
            self.kill_after(Duration::from_millis(sd.timeout_ms));
        }
        reached
    }

    /// Has the supervisor send SIGKILL to the tree after `wait`, unless it is gone by then. An
    /// earlier SIGKILL already due stays.
    pub(crate) fn kill_after(&self, wait: Duration) {
        let at = Instant::now().checked_add(wait);
        self.update(|s| {
            if s.done.is_none() {
                if let Some(at) = at {
                    s.kill_after = Some(s.kill_after.map_or(at, |due| due.min(at)));
                }
            }
        });
    }
}
