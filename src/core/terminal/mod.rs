//! The screen of a process on a terminal, as a terminal emulator would show it, fed with the
//! process's output, and the bound on the OSC strings that the emulator keeps.
//!
//! May use: `error`.

pub mod osc;
pub mod screen;
