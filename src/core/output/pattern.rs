//! A pattern to find in a process's output (`waitForLog`, the agent tools' waits), matched in
//! linear time in the length of the text whatever the pattern: JS's own engine backtracks, and
//! `/(a+)+$/` against 25 a's and a `!` held the event loop for four seconds. A pattern comes from
//! a JS `RegExp`'s source and flags; what this engine cannot express (lookaround,
//! backreferences) is refused with a reason, and the caller decides whether JS may run it.

use crate::core::error::{CoreError, CoreResult};

/// The largest compiled program a pattern may make (`a{1000}{1000}` is refused, not built).
const SIZE_LIMIT: usize = 4 * 1024 * 1024;

pub struct Pattern {
    re: regex::Regex,
}

/// Where a pattern matched: the matched text and its start in UTF-16 code units (JS's indices).
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    pub index: usize,
    pub text: String,
}

impl Pattern {
    /// Compiles a RegExp's `source` with its `flags` (`i`, `m`, `s`, `u`, `v`, `d`, `g`, `y`; the
    /// last four change nothing here: every search starts afresh, in Unicode).
    pub fn new(source: &str, flags: &str) -> CoreResult<Self> {
        let mut b = regex::RegexBuilder::new(source);
        for f in flags.chars() {
            match f {
                'i' => b.case_insensitive(true),
                'm' => b.multi_line(true),
                's' => b.dot_matches_new_line(true),
                'u' | 'v' | 'd' | 'g' | 'y' => &mut b,
                other => return Err(CoreError::invalid_option("pattern", format!("unknown flag {other:?}"))),
            };
        }
        let re = b.size_limit(SIZE_LIMIT).dfa_size_limit(SIZE_LIMIT).build().map_err(|e| {
            let why = match e {
                regex::Error::CompiledTooBig(_) => "it is too large to match in bounded memory".to_string(),
                // The first line names the construct; the rest draws it.
                other => other.to_string().lines().last().unwrap_or("").trim().to_string(),
            };
            CoreError::invalid_option(
                "pattern",
                format!(
                    "/{source}/ cannot be matched in linear time ({why}); lookaround and backreferences \
                     are not supported"
                ),
            )
        })?;
        Ok(Self { re })
    }

    /// The first match in `text` (leftmost, as JS's `exec` finds it), or none.
    pub fn find(&self, text: &str) -> Option<Found> {
        self.re
            .find(text)
            .map(|m| Found { index: text[..m.start()].encode_utf16().count(), text: m.as_str().to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catastrophic_patterns_match_in_linear_time() {
        let p = Pattern::new("(a+)+$", "").unwrap();
        let text = format!("{}!", "a".repeat(100_000));
        let t = std::time::Instant::now();
        assert_eq!(p.find(&text), None);
        // Backtracking would take longer than the universe has left; a linear engine, milliseconds.
        assert!(t.elapsed().as_secs() < 5);
    }

    #[test]
    fn flags_and_indices_as_js_has_them() {
        let p = Pattern::new("^ready on (\\d+)$", "im").unwrap();
        assert_eq!(p.find("x\nREADY ON 3000\n"), Some(Found { index: 2, text: "READY ON 3000".into() }));
        // Indices count UTF-16 units, as JS strings do.
        let p = Pattern::new("b", "").unwrap();
        assert_eq!(p.find("😀é b").unwrap().index, 4);
        assert!(Pattern::new("a.b", "s").unwrap().find("a\nb").is_some());
        assert!(Pattern::new("a.b", "").unwrap().find("a\nb").is_none());
    }

    #[test]
    fn what_needs_backtracking_is_refused_with_a_reason() {
        for src in ["(a)\\1", "a(?=b)", "(?<!x)y"] {
            let e = Pattern::new(src, "").err().expect(src);
            assert_eq!(e.code(), "INVALID_PROCESS_OPTION");
            assert!(e.to_string().contains("linear time"), "{e}");
        }
        let e = Pattern::new("a{1000}{1000}", "").err().unwrap();
        assert!(e.to_string().contains("too large"), "{e}");
    }
}
