//! From a launch request to a running child: what the request's values mean (`request`, with the
//! rule for each value in `options`, of a service's `restart` in `restart`, of its probes and
//! shutdown in `probes`), what to run and how, checked (`command`), the clone and
//! exec of the child (`spawn`, one file per platform under `spawn/`), the pseudo-terminal of a
//! child on a terminal (`pty`), and the thread that makes launches off the JS thread and the
//! runtime's workers (`launcher`).
//!
//! May use: `error`, `value`, `terminal` (a terminal's size rule), `output` (the log's default
//! bounds, the pattern engine of a log probe), `tree` (the cgroup a child is born in, the rule
//! for signals). It hands back a child with its pipe ends; watching it is `supervise`'s work.

pub mod command;
pub mod launcher;
pub mod options;
pub mod probes;
pub mod pty;
pub mod request;
pub mod restart;
pub mod spawn;
