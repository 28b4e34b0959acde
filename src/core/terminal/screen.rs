//! The screen of a process on a terminal, as a terminal emulator would show it: a `vt100` parser
//! fed from the same bytes as the output log (in `Output::push`), so a snapshot agrees with what
//! any reader of the log would render, and sized with the terminal.

use crate::core::error::{CoreError, CoreResult};
use crate::core::terminal::osc::OscFilter;
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

/// The longest OSC string (`ESC ] …`) the screen's parser sees; a longer one is dropped whole.
/// Titles, hyperlinks and clipboard strings are far shorter.
pub const MAX_OSC_BYTES: usize = 8 * 1024;
/// The longest window title kept, in bytes (cut at a character boundary).
pub const MAX_TITLE_BYTES: usize = 4 * 1024;

/// The window title, the one thing the parser reports through a callback rather than keeps.
#[derive(Default)]
struct Title(String);

impl vt100::Callbacks for Title {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        let mut t = String::from_utf8_lossy(title).into_owned();
        if t.len() > MAX_TITLE_BYTES {
            let mut end = MAX_TITLE_BYTES;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
        self.0 = t;
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
    osc: OscFilter,
    /// The start of a UTF-8 character that the last read cut: given to the parser with the next
    /// read. The parser keeps such a start itself, but then loses the character after it when
    /// what follows is not its continuation (vt100 0.18), so that a screen would depend on
    /// where the kernel's reads cut the output.
    cut: Vec<u8>,
}

/// How many bytes at the end of `b` begin a UTF-8 character that `b` does not finish.
fn unfinished(b: &[u8]) -> usize {
    for back in 1..=b.len().min(3) {
        let byte = b[b.len() - back];
        if byte & 0xc0 == 0x80 {
            continue;
        }
        let len = match byte {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        return if back < len { back } else { 0 };
    }
    0
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    pub fn new(cols: u16, rows: u16) -> Self {
        // No scrollback: the log keeps the history; the screen is only what is visible.
        let (cols, rows) = bounded(cols, rows);
        Self {
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, Title::default()),
            osc: OscFilter::new(MAX_OSC_BYTES),
            cut: Vec::new(),
        }
    }

    pub fn feed(&mut self, data: &[u8]) {
        let parser = &mut self.parser;
        let cut = &mut self.cut;
        self.osc.filter(data, |part| {
            if part.is_empty() {
                return;
            }
            let mut part = part;
            if !cut.is_empty() {
                // The character held back takes its continuation bytes from this read (at most
                // 3), and goes to the parser alone: the rest of the read is not copied.
                let more = part.iter().take(3).take_while(|b| *b & 0xc0 == 0x80).count();
                cut.extend_from_slice(&part[..more]);
                part = &part[more..];
                if part.is_empty() && unfinished(cut) > 0 {
                    return;
                }
                parser.process(cut);
                cut.clear();
            }
            let keep = unfinished(part);
            parser.process(&part[..part.len() - keep]);
            cut.extend_from_slice(&part[part.len() - keep..]);
        });
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
    fn long_titles_are_cut_and_longer_oscs_dropped() {
        let mut s = Screen::new(20, 3);
        let title = "é".repeat(3000); // 6000 bytes
        s.feed(format!("\x1b]2;{title}\x07one").as_bytes());
        let snap = s.snapshot();
        assert_eq!(snap.title, "é".repeat(MAX_TITLE_BYTES / 2));
        assert_eq!(snap.lines[0], "one");
        // Past the OSC bound the title is not set at all, and what follows renders.
        s.feed(b"\x1b]2;");
        for _ in 0..64 {
            s.feed(&[b'x'; 4096]);
        }
        s.feed(b"\x1b\\ two\x1b]0;short\x1b\\!");
        let snap = s.snapshot();
        assert_eq!(snap.title, "short");
        assert_eq!(snap.lines[0], "one two!");
    }

    #[test]
    fn a_character_cut_between_reads_renders_as_in_one_read() {
        // "é" cut after its first byte, then the start of another that is not continued: the
        // parser alone, given these reads, shows "xéa" without the last "a".
        let cases: [&[&[u8]]; 3] =
            [&[b"x\xc3", b"\xa9a\xc3a"], &[b"x\xc3", b"a"], &[b"\xe2\x82", b"\xacz\xf0\x9f", b"\x98\x80!\xe2", b"b"]];
        for reads in cases {
            let mut s = Screen::new(10, 2);
            for r in reads {
                s.feed(r);
            }
            let one: Vec<u8> = reads.concat();
            let mut raw = vt100::Parser::new_with_callbacks(nz(2), nz(10), 0, Title::default());
            raw.process(&one);
            assert_eq!(s.snapshot().lines[0], raw.screen().rows(0, 10).next().unwrap().trim_end(), "{reads:?}");
        }
        assert_eq!(unfinished(b"a\xc3"), 1);
        assert_eq!(unfinished(b"\xc3\xa9"), 0);
        assert_eq!(unfinished(b"\xf0\x9f\x98"), 3);
        assert_eq!(unfinished(b"\xf0\x9f\x98\x80"), 0);
        assert_eq!(unfinished(b"\xa9\xa9\xa9"), 0);
        assert_eq!(unfinished(b"\xff"), 0);
    }

    proptest::proptest! {
        /// Within the OSC bound the filter changes nothing the parser renders, however the
        /// output is cut into reads: the screen fed in two reads shows what the parser fed once
        /// shows.
        #[test]
        fn short_oscs_render_as_without_the_filter(
            data in proptest::collection::vec(
                proptest::sample::select(b"ab]20;\x1b\x07\\\x18\x1a\n\r[1mP_\xc3\xa9".to_vec()),
                0..300,
            ),
            cut in 0usize..300,
        ) {
            let (a, b) = data.split_at(cut.min(data.len()));
            let mut raw = vt100::Parser::new_with_callbacks(nz(4), nz(10), 0, Title::default());
            raw.process(&data);
            let mut s = Screen::new(10, 4);
            s.feed(a);
            s.feed(b);
            let snap = s.snapshot();
            proptest::prop_assert_eq!(snap.lines, raw.screen().rows(0, 10).map(|l| l.trim_end().to_string()).collect::<Vec<_>>());
            proptest::prop_assert_eq!((snap.cursor_row, snap.cursor_col), raw.screen().cursor_position());
            proptest::prop_assert_eq!(snap.title, raw.callbacks().0.clone());
        }
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
