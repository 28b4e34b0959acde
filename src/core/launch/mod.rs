//! From a launch request to a running child: what the request's values mean (`request`, with the
//! rule for each value in `options`, and of a service's `restart` in `restart`), what to run and how, checked (`command`), the clone and
//! exec of the child (`spawn`, one file per platform under `spawn/`), the pseudo-terminal of a
//! child on a terminal (`pty`), and the thread that makes launches off the JS thread and the
//! runtime's workers (`launcher`).
//!
//! May use: `error`, `value`, `terminal` (a terminal's size rule), `output` (the log's default
//! bounds), `tree` (the cgroup a child is born in). It hands back a child with its pipe ends;
//! watching it is `supervise`'s work.

pub mod command;
pub mod launcher;
pub mod options;
pub mod pty;
pub mod request;
pub mod restart;
pub mod spawn;
