//! `--json-field PATH[=VALUE]` and `--header-matches "Name: REGEX"`: what an HTTP answer must
//! hold besides its status and body text, parsed once at start (the check is in `kind/http/`).

use std::fmt;

use hyper::header::HeaderName;
use regex_lite::Regex;

use crate::text::quoted;

/// `--json-field`: the value at a path of a JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonField {
    /// The keys (or array indices, counted from 0) from the top of the document, in order.
    pub path: Vec<String>,
    /// The text the value must have (a string's content, or a number, `true`, `false` or `null`
    /// as written); `None`: present and neither `false` nor `null`.
    pub value: Option<String>,
}

impl JsonField {
    /// Parses `PATH` or `PATH=VALUE`, PATH dotted (`components.db.status`, `items.0.ready`).
    pub fn parse(text: &str) -> Result<JsonField, String> {
        let (path, value) = match text.split_once('=') {
            Some((path, value)) => (path, Some(value.to_string())),
            None => (text, None),
        };
        if path.is_empty() {
            return Err("expected PATH or PATH=VALUE, as in status=UP".into());
        }
        let path: Vec<String> = path.split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(format!(
                "empty key in {}: keys are separated by single dots, as in components.db.status",
                quoted(&path.join("."))
            ));
        }
        Ok(JsonField { path, value })
    }
}

/// The path as typed.
impl fmt::Display for JsonField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path.join("."))
    }
}

/// `--header-matches`: a response header whose value must match a regular expression.
#[derive(Debug, Clone)]
pub struct HeaderMatch {
    pub name: HeaderName,
    pub regex: Regex,
}

impl HeaderMatch {
    /// Parses `Name: REGEX` (the regex unanchored, as `--matches`).
    pub fn parse(text: &str) -> Result<HeaderMatch, String> {
        let (name, pattern) = text
            .split_once(':')
            .ok_or("expected \"Name: REGEX\", as in \"Content-Type: ^application/json\"")?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("invalid header name {}", quoted(name.trim())))?;
        let pattern = pattern.trim();
        let regex = Regex::new(pattern).map_err(|e| {
            let e = e.to_string();
            let reason = e.lines().last().unwrap_or_default().trim();
            format!("invalid regex {}: {reason}", quoted(pattern))
        })?;
        Ok(HeaderMatch { name, regex })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_fields_and_their_faults() {
        let field = JsonField::parse("components.db.status=UP").unwrap();
        assert_eq!(field.path, ["components", "db", "status"]);
        assert_eq!(field.value.as_deref(), Some("UP"));
        assert_eq!(field.to_string(), "components.db.status");
        let field = JsonField::parse("items.0.ready").unwrap();
        assert_eq!((field.path.len(), field.value), (3, None));
        // Only the first '=' ends the path; an empty VALUE is an empty string.
        let field = JsonField::parse("q=a=b").unwrap();
        assert_eq!(field.value.as_deref(), Some("a=b"));
        assert_eq!(JsonField::parse("s=").unwrap().value.as_deref(), Some(""));
        for (text, fault) in [
            ("", "PATH"),
            ("=UP", "PATH"),
            ("a..b", "empty key"),
            (".a", ""),
        ] {
            let err = JsonField::parse(text).unwrap_err();
            assert!(err.contains(fault), "{text}: {err}");
        }
    }

    #[test]
    fn header_matches_and_their_faults() {
        let header = HeaderMatch::parse("Content-Type: ^application/json").unwrap();
        assert_eq!(header.name, "content-type");
        assert_eq!(header.regex.as_str(), "^application/json");
        for (text, fault) in [
            ("Content-Type", "Name: REGEX"),
            ("Bad Name: x", "invalid header name \"Bad Name\""),
            ("X: (", "invalid regex \"(\""),
        ] {
            let err = HeaderMatch::parse(text).unwrap_err();
            assert!(err.contains(fault), "{text}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
