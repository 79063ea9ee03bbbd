//! The last line a command wrote on one stream, kept in bounded memory however much it writes:
//! the start of the line in progress and of the last whole one, and a count of what was cut.

use crate::text::{one_line, PEER_TEXT};

/// Bytes kept of a line: enough for [`PEER_TEXT`] characters of up to four bytes each.
const KEEP: usize = 4 * PEER_TEXT + 4;

/// One line's start, and how many characters of it were not kept.
#[derive(Debug, Default, Clone)]
struct Line {
    kept: Vec<u8>,
    /// Characters past [`KEEP`] bytes (UTF-8 sequences counted by their first byte).
    more: usize,
}

impl Line {
    fn push(&mut self, bytes: &[u8]) {
        let room = KEEP.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
        self.more += bytes[room..].iter().filter(|&&b| b & 0xC0 != 0x80).count();
    }

    /// Whether the line holds only white space (a blank line is no reason).
    fn is_blank(&self) -> bool {
        self.more == 0 && self.kept.iter().all(u8::is_ascii_whitespace)
    }
}

/// The last line of a stream, fed as it is read.
#[derive(Debug, Default)]
pub struct LastLine {
    /// The line being written.
    open: Line,
    /// The last whole line that was not blank.
    last: Option<Line>,
}

impl LastLine {
    /// Takes the next bytes the stream gave.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(at) = bytes.iter().position(|&b| b == b'\n') {
            self.open.push(&bytes[..at]);
            let line = std::mem::take(&mut self.open);
            if !line.is_blank() {
                self.last = Some(line);
            }
            bytes = &bytes[at + 1..];
        }
        self.open.push(bytes);
    }

    /// The last line that is not blank, escaped and cut as any peer's text is; `None` when the
    /// stream said nothing.
    pub fn shown(&self) -> Option<String> {
        let line = match self.open.is_blank() {
            true => self.last.as_ref()?,
            false => &self.open,
        };
        let text = String::from_utf8_lossy(&line.kept);
        let text = match line.more {
            0 => text.trim(),
            _ => text.trim_start(),
        };
        let mut shown = one_line(text);
        let cut = shown.char_indices().nth(PEER_TEXT).map(|(at, _)| at);
        let more = cut.map_or(0, |at| shown[at..].chars().count()) + line.more;
        if more > 0 {
            shown.truncate(cut.unwrap_or(shown.len()));
            shown.push_str(&format!("… ({more} more characters)"));
        }
        Some(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(chunks: &[&[u8]]) -> Option<String> {
        let mut line = LastLine::default();
        chunks.iter().for_each(|chunk| line.feed(chunk));
        line.shown()
    }

    #[test]
    fn the_last_line_that_is_not_blank_whatever_the_chunks() {
        assert_eq!(last(&[]), None);
        assert_eq!(last(&[b"\n \n\r\n"]), None);
        assert_eq!(last(&[b"one\ntwo\n"]).as_deref(), Some("two"));
        assert_eq!(last(&[b"one\ntw", b"o\n\n  \n"]).as_deref(), Some("two"));
        assert_eq!(
            last(&[b"one\n", b"no newline"]).as_deref(),
            Some("no newline")
        );
        assert_eq!(
            last(&[b"db:5432 - no response\r\n"]).as_deref(),
            Some("db:5432 - no response")
        );
        assert_eq!(
            last(&[b"\x1b[31mred\x1b[0m\n"]).as_deref(),
            Some("\\u{1b}[31mred\\u{1b}[0m")
        );
        assert_eq!(
            last(&[b"bad \xff byte"]).as_deref(),
            Some("bad \u{fffd} byte")
        );
    }

    #[test]
    fn a_long_line_is_cut_with_a_count_in_bounded_memory() {
        let mut line = LastLine::default();
        for _ in 0..1000 {
            line.feed(&[b'x'; 1000]);
        }
        assert!(line.open.kept.len() <= KEEP);
        let shown = line.shown().unwrap();
        let more = 1000 * 1000 - PEER_TEXT;
        assert_eq!(
            shown,
            format!("{}… ({more} more characters)", "x".repeat(PEER_TEXT))
        );
        // Characters of several bytes are counted as characters.
        let long = "é".repeat(PEER_TEXT + 1000);
        let shown = last(&[long.as_bytes()]).unwrap();
        assert!(shown.ends_with("é… (1000 more characters)"), "{shown}");
        // Short of the cut, the count is exact as peer_text's.
        let text = format!("{}\u{1}", "a".repeat(PEER_TEXT));
        assert_eq!(
            last(&[text.as_bytes()]),
            Some(crate::text::peer_text(&text))
        );
    }
}
