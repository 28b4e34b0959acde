//! The output of one process: the bounded, sequenced log that every byte view reads (`log`, in
//! recycled blocks of memory: `block`), the text each stream retains for the Mastra view
//! (`decoder`, `retained`, `text`), the one place a process's reads arrive (`process_output`),
//! the consumers that must lose nothing, how output reaches them and the pipes lent to them
//! (`consumers`, `delivery`, `loan`), the cursors that name a position in the log (`cursor`),
//! the log's files for a manager with a log directory (`disk`, `disk_frame`, `disk_read`), and
//! the same output in shared memory for the clients of a persistent sandbox (`shared`, the
//! format and its writer; `shared_read`, the reader that maps it).
//!
//! May use: `error`, `exit` (the log's terminal event), `terminal` (a process on a terminal
//! feeds its screen). It knows nothing of how the process runs: the supervisor pushes reads in
//! and closes the log. Inside, `delivery` builds on `process_output`, which builds on
//! `consumers`, never the other way.

pub mod block;
pub mod consumers;
pub mod cursor;
pub mod decoder;
pub mod delivery;
pub mod disk;
mod disk_frame;
mod disk_options;
mod disk_read;
mod disk_writer;
pub mod loan;
pub mod log;
pub mod pattern;
pub mod process_output;
pub mod retained;
pub mod shared;
pub mod shared_read;
pub mod text;
