//! The screen of a process on a terminal, as a terminal emulator would show it: a `vt100` parser
//! fed from the same bytes as the output log (in `Output::push`), so a snapshot agrees with what
//! any reader of the log would render, and sized with the terminal.

use crate::core::error::{CoreError, CoreResult};
use std::num::NonZeroU16;

/// The most cells (cols × rows) a screen holds. The emulator allocates every cell of the window
/// up front (32 bytes each, twice once a program switches to the alternate screen), so a window
/// of 65535 × 65535 would ask for 137 GB and end the process; this bounds a screen to 32 MiB a
/// grid. A process on a terminal without a screen keeps any size: only the kernel holds it.
pub const MAX_CELLS: u32 = 1 << 20;

/// Refuses a window whose screen would pass [`MAX_CELLS`].
pub fn check_size(cols: u16, rows: u16) -> CoreResult<()> {
    if u32::from(cols) * u32::from(rows) <= MAX_CELLS {
        return Ok(());
    }
    Err(CoreError::invalid_option(
        "cols × rows",
        format!("a terminal that keeps a screen holds at most {MAX_CELLS} cells, got {cols} × {rows}"),
    ))
}

/// The size within the bound, for a caller that did not check: fewer rows, never an allocation
/// that cannot succeed.
fn bounded(cols: u16, rows: u16) -> (NonZeroU16, NonZeroU16) {
    let cols = nz(cols);
    let most_rows = (MAX_CELLS / u32::from(cols.get())).min(u32::from(u16::MAX)) as u16;
    (cols, nz(rows.min(most_rows)))
}

/// The window title, the one thing the parser reports through a callback rather than keeps.
#[derive(Default)]
struct Title(String);

impl vt100::Callbacks for Title {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0 = String::from_utf8_lossy(title).into_owned();
    }
}

/// What a terminal shows now. Rows and columns are 0-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub cols: u16,
    pub rows: u16,
    /// One string per row, trailing blanks removed.
    pub lines: Vec<String>,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub title: String,
}

pub struct Screen {
    parser: vt100::Parser<Title>,
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    pub fn new(cols: u16, rows: u16) -> Self {
        // No scrollback: the log keeps the history; the screen is only what is visible.
        let (cols, rows) = bounded(cols, rows);
        Self { parser: vt100::Parser::new_with_callbacks(rows, cols, 0, Title::default()) }
    }

    pub fn feed(&mut self, data: &[u8]) {
        self.parser.process(data);
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = bounded(cols, rows);
        self.parser.set_size(rows, cols);
    }

    pub fn snapshot(&self) -> Snapshot {
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        Snapshot {
            cols: cols.get(),
            rows: rows.get(),
            lines: screen.rows(0, cols.get()).map(|l| l.trim_end().to_string()).collect(),
            cursor_row,
            cursor_col,
            title: self.parser.callbacks().0.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_addressing_clearing_and_titles_are_rendered() {
        let mut s = Screen::new(20, 5);
        s.feed(b"\x1b]2;my title\x07\x1b[2J\x1b[Hgarbage\x1b[2J\x1b[3;5Hmid\x1b[1;1Htop\r\n");
        let snap = s.snapshot();
        assert_eq!(snap.lines, vec!["top", "", "    mid", "", ""]);
        assert_eq!((snap.cursor_row, snap.cursor_col), (1, 0));
        assert_eq!(snap.title, "my title");
        s.resize(30, 3);
        let snap = s.snapshot();
        assert_eq!((snap.cols, snap.rows, snap.lines.len()), (30, 3, 3));
    }

    #[test]
    fn a_screen_never_passes_its_cells() {
        assert!(check_size(1024, 1024).is_ok());
        assert!(check_size(65535, 16).is_ok());
        assert_eq!(check_size(1025, 1024).unwrap_err().code(), "INVALID_PROCESS_OPTION");
        assert!(check_size(65535, 65535).is_err());
        let mut s = Screen::new(65535, 65535);
        let snap = s.snapshot();
        assert_eq!((snap.cols, snap.rows), (65535, 16));
        s.resize(1, 65535);
        let snap = s.snapshot();
        assert_eq!((snap.cols, snap.rows), (1, 65535));
    }
}
