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

/// Hides whatever looks like a secret anywhere in `text`, whatever produced it: the userinfo
/// of anything URL-shaped (`scheme://user:***@host`, also malformed ones such as `http:/u:p@h`
/// or a password holding an unencoded `/`, `?` or `#`), and the values of query parameters
/// whose names say they are secret (`?token=***`). Every line readygate writes passes here.
pub fn secrets(text: &str) -> String {
    if !text.contains(['@', '?']) {
        return text.to_string();
    }
    let mut shown = String::with_capacity(text.len());
    let mut word = String::new();
    let mut previous = '\0';
    for c in text.chars() {
        // A word ends at white space or an unescaped double quote (JSON and Rust string
        // quoting); an escaped quote stays inside, as it would in a password.
        if c.is_whitespace() || (c == '"' && previous != '\\') {
            shown.push_str(&word_secrets(&word));
            word.clear();
            shown.push(c);
        } else {
            word.push(c);
        }
        previous = c;
    }
    shown.push_str(&word_secrets(&word));
    shown
}

/// [`secrets`] for one word.
fn word_secrets(word: &str) -> String {
    let word = match word.rfind('@') {
        Some(at) => userinfo_hidden(word, at),
        None => word.to_string(),
    };
    match word.find('?') {
        Some(question) => query_hidden(&word, question),
        None => word,
    }
}

/// `word` with what stands before its last `@` hidden, when that looks like a userinfo:
/// `user:***@` for one with a password; `***@` after a scheme for a lone token.
fn userinfo_hidden(word: &str, at: usize) -> String {
    match hidden_range(word, at) {
        Some(range) => format!("{}***{}", &word[..range.start], &word[range.end..]),
        None => word.to_string(),
    }
}

/// The bytes of `word` that [`userinfo_hidden`] hides, given its last `@` at `at`.
fn hidden_range(word: &str, at: usize) -> Option<std::ops::Range<usize>> {
    let before = &word[..at];
    let (start, scheme) = match scheme_end(before) {
        Some(end) => (end, true),
        None => (
            before
                .find(|c: char| c.is_alphanumeric() || c == ':')
                .unwrap_or(before.len()),
            false,
        ),
    };
    let userinfo = &before[start..];
    match userinfo.find(':') {
        Some(colon) => Some(start + colon + 1..at),
        // A bare `user@host` without a scheme is an e-mail address; after a scheme a lone
        // userinfo is a token, unless it holds a `/` (then the `@` is in a path).
        None if scheme && !userinfo.is_empty() && !userinfo.contains('/') => Some(start..at),
        None => None,
    }
}

/// `reason` (a parser's complaint about `text`) with every piece of the secret that
/// [`secrets`] hides in `text` hidden too: a password holding an unencoded `#`, `/` or `?`
/// ends the authority early, and the parser may then quote part of it as a port or a path.
pub fn secret_pieces_hidden(text: &str, reason: &str) -> String {
    let pieces: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '"')
        .filter_map(|word| hidden_range(word, word.rfind('@')?).map(|range| &word[range]))
        .flat_map(|hidden| hidden.split(['#', '/', '?', '@', ':']))
        .filter(|p| !p.is_empty())
        .collect();
    if pieces.is_empty() {
        return reason.to_string();
    }
    // What a parser quotes from its input is between double quotes: a quoted value holding
    // a piece of the secret is hidden whole.
    let mut shown = String::with_capacity(reason.len());
    for (i, part) in reason.split('"').enumerate() {
        if i > 0 {
            shown.push('"');
        }
        let quoted = i % 2 == 1;
        if quoted && pieces.iter().any(|piece| part.contains(piece)) {
            shown.push_str("***");
        } else {
            shown.push_str(part);
        }
    }
    shown
}

/// Where the userinfo starts after a `scheme:` and its slashes (one, two or none), if any.
fn scheme_end(text: &str) -> Option<usize> {
    let colon = text.find(":/")?;
    // The character before the scheme may take several bytes: start right after all of them.
    let scheme_start = text[..colon]
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let scheme = &text[scheme_start..colon];
    if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let after = &text[colon + 1..];
    Some(colon + 1 + (after.len() - after.trim_start_matches('/').len()))
}

/// `word` with the values of its secret-looking query parameters (after `?`) hidden.
fn query_hidden(word: &str, question: usize) -> String {
    let (head, query) = word.split_at(question + 1);
    let mut shown = head.to_string();
    let mut rest = query;
    loop {
        let end = rest.find(['&', ';', '#', '\'']).unwrap_or(rest.len());
        let (pair, tail) = rest.split_at(end);
        match pair.split_once('=') {
            Some((name, value)) if is_secret_name(name) && !value.is_empty() => {
                shown.push_str(name);
                shown.push_str("=***");
                // The colon of `TARGET: reason` ends the last word, not the secret.
                if tail.is_empty() && value.ends_with(':') {
                    shown.push(':');
                }
            }
            _ => shown.push_str(pair),
        }
        let Some(separator) = tail.chars().next() else {
            return shown;
        };
        shown.push(separator);
        if separator == '#' || separator == '\'' {
            shown.push_str(&tail[1..]);
            return shown;
        }
        rest = &tail[1..];
    }
}

/// Whether a query parameter's name says its value is a secret: it contains `token`, `secret`,
/// `passw`, `pwd`, `auth`, `credential`, `signature`, `apikey` or `session`, or one of its
/// `_`/`-`/`.`-separated parts is `key`, `sig` or `pass`.
fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const WITHIN: [&str; 9] = [
        "token",
        "secret",
        "passw",
        "pwd",
        "auth",
        "credential",
        "signature",
        "apikey",
        "session",
    ];
    WITHIN.iter().any(|word| name.contains(word))
        || name
            .split(['_', '-', '.'])
            .any(|part| matches!(part, "key" | "sig" | "pass"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_hidden_in_any_url_shaped_word() {
        let cases = [
            ("http://user:pw@h/", "http://user:***@h/"),
            // A scheme after a character of several bytes.
            ("¡http://user:pw@h/", "¡http://user:***@h/"),
            (
                "http://user:p#ss@127.0.0.1:1/",
                "http://user:***@127.0.0.1:1/",
            ),
            ("http://user:p/ss@h/x", "http://user:***@h/x"),
            ("http://user:p?ss@h/x", "http://user:***@h/x"),
            ("http://user:p@ss@h", "http://user:***@h"),
            ("http:/user:pw@h", "http:/user:***@h"),
            ("http:user:pw@h", "http:***@h"),
            ("https://ghp_token@h/x", "https://***@h/x"),
            ("'http://u:secret@h:1/'", "'http://u:***@h:1/'"),
            ("(redis://:pw@cache)", "(redis://:***@cache)"),
            ("user:pw@db:5432", "user:***@db:5432"),
            ("\"http://u:p\\\"w@h\"", "\"http://u:***@h\""),
        ];
        for (text, expected) in cases {
            assert_eq!(secrets(text), expected, "{text}");
            let line = format!("invalid target \"{text}\": reason");
            assert!(!secrets(&line).contains("pw"), "{line}");
        }
    }

    #[test]
    fn a_reason_quoting_part_of_a_password_hides_it() {
        let text = "http://user:pa/ss#word@h:1/";
        let reason = "invalid port \"pa\", path \"ss#word\"";
        let shown = secret_pieces_hidden(text, reason);
        assert_eq!(shown, "invalid port \"***\", path \"***\"");
        assert_eq!(secret_pieces_hidden("http://h/x", "bad x"), "bad x");
        // A secret query value before the userinfo changes nothing of the pieces.
        let text = "h/?token=tttttttt http://u:pppp@h";
        let shown = secret_pieces_hidden(text, "bad \"pppp\" and \"tttt\"");
        assert_eq!(shown, "bad \"***\" and \"tttt\"");
    }

    #[test]
    fn words_that_are_not_userinfo_stay() {
        for text in [
            "mail ops@example.com now",
            "http://h/a@b",
            "http://h/x?y=1&z=2",
            "status 503 @ 10:00",
            "{\"message\":\"waiting for http://h/ to be ready\"}",
        ] {
            assert_eq!(secrets(text), text);
        }
    }

    #[test]
    fn secret_query_values_are_hidden() {
        let cases = [
            ("http://h/?token=abc&x=1", "http://h/?token=***&x=1"),
            (
                "https://h/p?X-Amz-Signature=ff&X-Amz-Credential=c&a=b#frag",
                "https://h/p?X-Amz-Signature=***&X-Amz-Credential=***&a=b#frag",
            ),
            ("h/?api_key=1;sig=2;page=3", "h/?api_key=***;sig=***;page=3"),
            ("http://h/?access_token=t'", "http://h/?access_token=***'"),
            ("http://h/?Password=p", "http://h/?Password=***"),
            (
                "http://h/?token=abc: connection refused",
                "http://h/?token=***: connection refused",
            ),
            (
                "http://h/?monkey=1&keyboard=2",
                "http://h/?monkey=1&keyboard=2",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(secrets(text), expected, "{text}");
        }
        let json = "{\"fields\":{\"message\":\"ready: http://u:pw@h/?token=t\"}}";
        assert_eq!(
            secrets(json),
            "{\"fields\":{\"message\":\"ready: http://u:***@h/?token=***\"}}"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(quoted("a\nb"), "\"a\\nb\"");
        assert_eq!(one_line("x\u{1b}[31my\r"), "x\\u{1b}[31my\\r");
        assert_eq!(one_line("plain"), "plain");
    }
}
