//! Showing user-supplied text safely: control characters escaped, secrets never shown.

/// Quotes `text` for a one-line message, escaping control characters so a value can never
/// break the line or inject terminal sequences.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.escape_debug())
}

/// Escapes control characters in a message that is about to be printed on one line.
pub fn one_line(text: &str) -> String {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_debug().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(quoted("a\nb"), "\"a\\nb\"");
        assert_eq!(one_line("x\u{1b}[31my\r"), "x\\u{1b}[31my\\r");
        assert_eq!(one_line("plain"), "plain");
    }
}
