//! The screen of a process on a terminal, as a terminal emulator would show it: a `vt100` parser
//! fed from the same bytes as the output log (in `Output::push`), so a snapshot agrees with what
//! any reader of the log would render, and sized with the terminal.

use std::num::NonZeroU16;

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
        Self { parser: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, Title::default()) }
    }

    pub fn feed(&mut self, data: &[u8]) {
        self.parser.process(data);
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser.set_size(nz(rows), nz(cols));
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
}
