//! `--contains TEXT` / `--matches REGEX`: what an HTTP body or a file's content must hold.

use regex_lite::{Regex, RegexBuilder};

use crate::text::quoted;

/// Most bytes of a body or file that are ever read to match against (1 MiB).
pub const MAX_BODY: usize = 1 << 20;

/// A content condition, compiled once at parse time.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// The content must contain this text.
    Contains(String),
    /// The content must match this regular expression.
    Matches(Regex),
}

impl Matcher {
    /// Compiles `--matches`, multi-line: `^` and `$` match at each line's start and end (before
    /// `\n` or `\r\n`), so `^ready$` matches what `echo ready` wrote. An invalid expression is a
    /// usage error naming it.
    pub fn regex(pattern: &str) -> Result<Self, String> {
        let mut builder = RegexBuilder::new(pattern);
        builder.multi_line(true).crlf(true);
        builder.build().map(Matcher::Matches).map_err(|e| {
            let e = e.to_string();
            let reason = e.lines().last().unwrap_or_default().trim();
            format!("invalid --matches regex {}: {reason}", quoted(pattern))
        })
    }

    /// Whether `content` satisfies the condition; lossy UTF-8 so binary content cannot fail it.
    pub fn is_match(&self, content: &[u8]) -> bool {
        let text = String::from_utf8_lossy(content);
        match self {
            Matcher::Contains(needle) => text.contains(needle.as_str()),
            Matcher::Matches(regex) => regex.is_match(&text),
        }
    }

    /// The reason given when content does not satisfy the condition.
    pub fn failure(&self, what: &str) -> String {
        match self {
            Matcher::Contains(needle) => format!("{what} did not contain {}", quoted(needle)),
            Matcher::Matches(regex) => format!(
                "{what} did not match {} (multi-line: ^ and $ match at each line)",
                quoted(regex.as_str())
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_and_matches() {
        let contains = Matcher::Contains("ok".into());
        assert!(contains.is_match(b"status: ok"));
        assert!(!contains.is_match(b"status: down"));
        let regex = Matcher::regex(r#""status":\s*"UP""#).unwrap();
        assert!(regex.is_match(br#"{"status": "UP"}"#));
        assert!(!regex.is_match(br#"{"status": "DOWN"}"#));
        assert_eq!(contains.failure("body"), "body did not contain \"ok\"");
    }

    #[test]
    fn anchors_match_at_each_line() {
        let ready = Matcher::regex("^ready$").unwrap();
        for content in [
            &b"ready\n"[..],
            b"ready\r\n",
            b"starting\nready\n",
            b"ready",
        ] {
            assert!(ready.is_match(content), "{content:?}");
        }
        for content in [&b"not ready\n"[..], b"ready now\n", b"\n"] {
            assert!(!ready.is_match(content), "{content:?}");
        }
        // \A and \z still anchor the whole content.
        let whole = Matcher::regex(r"\Aready\z").unwrap();
        assert!(!whole.is_match(b"ready\n") && whole.is_match(b"ready"));
        assert_eq!(
            ready.failure("content"),
            "content did not match \"^ready$\" (multi-line: ^ and $ match at each line)"
        );
    }

    #[test]
    fn bad_regex_is_named() {
        let err = Matcher::regex("(unclosed").unwrap_err();
        assert!(
            err.starts_with("invalid --matches regex \"(unclosed\""),
            "{err}"
        );
        assert!(!err.contains('\n'));
    }
}
