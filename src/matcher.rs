//! `--contains TEXT` / `--matches REGEX`: what an HTTP body or a file's content must hold.

use regex_lite::Regex;

use crate::redact::quoted;

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
    /// Compiles `--matches`; an invalid expression is a usage error naming it.
    pub fn regex(pattern: &str) -> Result<Self, String> {
        Regex::new(pattern).map(Matcher::Matches).map_err(|e| {
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
        let (verb, text) = match self {
            Matcher::Contains(needle) => ("contain", needle.as_str()),
            Matcher::Matches(regex) => ("match", regex.as_str()),
        };
        format!("{what} did not {verb} {}", quoted(text))
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
    fn bad_regex_is_named() {
        let err = Matcher::regex("(unclosed").unwrap_err();
        assert!(
            err.starts_with("invalid --matches regex \"(unclosed\""),
            "{err}"
        );
        assert!(!err.contains('\n'));
    }
}
