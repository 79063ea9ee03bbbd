//! Text helpers. Showing text safely on one line: control characters escaped, a peer's text cut
//! to size, cuts on character boundaries; and [`percent`]-encoding. Hiding secrets is
//! [`crate::secrets`]'s.

pub mod percent;

/// Quotes `text` for a one-line message, escaping control characters so a value can never
/// break the line or inject terminal sequences.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.escape_debug())
}

/// Escapes control characters in a message that is about to be printed on one line, and the
/// invisible ones that would end a line in some viewers or reorder what a terminal shows.
pub fn one_line(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else if invisible(c) {
            shown.extend(c.escape_unicode());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Line and paragraph separators (U+2028, U+2029), bidirectional controls (U+202A–U+202E,
/// U+2066–U+2069, U+200E, U+200F, U+061C), zero-width characters and the byte-order mark.
fn invisible(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Most characters of a peer's text kept in a reason, once escaped.
pub const PEER_TEXT: usize = 300;

/// A peer's text (a server's message, a name it sent) fit for a reason: on one line and at
/// most [`PEER_TEXT`] characters, with a marker saying how many more were cut.
pub fn peer_text(text: &str) -> String {
    let mut shown = one_line(text);
    if let Some((cut, _)) = shown.char_indices().nth(PEER_TEXT) {
        let more = shown[cut..].chars().count();
        shown.truncate(cut);
        shown.push_str(&format!("… ({more} more characters)"));
    }
    shown
}

/// The start of `text`, at most `max` bytes, ending on a character boundary.
pub fn head(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The end of `text`, at most `max` bytes, starting on a character boundary.
pub fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(quoted("a\nb"), "\"a\\nb\"");
        assert_eq!(one_line("x\u{1b}[31my\r"), "x\\u{1b}[31my\\r");
        assert_eq!(one_line("plain"), "plain");
        let forged = "ok\u{2028}ready\u{2029}\u{202E}gnp.exe\u{2066}\u{feff}";
        let shown = "ok\\u{2028}ready\\u{2029}\\u{202e}gnp.exe\\u{2066}\\u{feff}";
        assert_eq!(one_line(forged), shown);
    }

    #[test]
    fn peer_text_is_escaped_then_cut_with_a_count() {
        assert_eq!(peer_text("short\n"), "short\\n");
        let long = format!("{}\u{1}", "é".repeat(PEER_TEXT + 50));
        let shown = peer_text(&long);
        assert!(shown.ends_with("é… (55 more characters)"), "{shown}");
        assert_eq!(
            shown.chars().count(),
            PEER_TEXT + "… (55 more characters)".len() - 2
        );
    }
}
