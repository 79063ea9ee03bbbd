//! Secrets hidden by their shape, wherever they show and whoever wrote them: the userinfo of
//! anything URL-shaped and the values of query parameters whose names say they are secret.

use super::names::looks_secret;

/// Hides whatever looks like a secret anywhere in `text`, whatever produced it: the userinfo
/// of anything URL-shaped (`scheme://user:***@host`, also malformed ones such as `http:/u:p@h`
/// or a password holding an unencoded `/`, `?` or `#`), and the values of query parameters
/// whose names say they are secret (`?token=***`). Every line readygate writes passes here.
pub fn hide_by_shape(text: &str) -> String {
    if !text.contains(['@', '?']) {
        return text.to_string();
    }
    let mut shown = String::with_capacity(text.len());
    let (mut start, mut previous) = (0, '\0');
    for (i, c) in text.char_indices() {
        // A word ends at white space or an unescaped double quote (JSON and Rust string
        // quoting); an escaped quote stays inside, as it would in a password.
        if c.is_whitespace() || (c == '"' && previous != '\\') {
            shown.push_str(&word_secrets(&text[start..i]));
            shown.push(c);
            start = i + c.len_utf8();
        }
        previous = c;
    }
    shown.push_str(&word_secrets(&text[start..]));
    shown
}

/// [`secrets`] for one word.
fn word_secrets(word: &str) -> String {
    let word = match hidden_range(word) {
        // `PASSWORD` is the placeholder of readygate's own hints (`redis://:PASSWORD@HOST`); a
        // password that really is `PASSWORD` is a known secret, hidden before this pass.
        Some(range) if &word[range.clone()] != PLACEHOLDER => {
            format!("{}***{}", &word[..range.start], &word[range.end..])
        }
        _ => word.to_string(),
    };
    query_hidden(&word)
}

/// What hints write where a password goes.
const PLACEHOLDER: &str = "PASSWORD";

/// The userinfo of every URL in `text` (an argument, a variable's value): what follows a
/// scheme's `:/` up to the last `@` before the next URL, whatever it holds (white space too),
/// when it holds a `:` (`user:password`) or is a lone token without a `/` (not a path's `@`).
pub fn userinfos(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for url in urls(text) {
        let Some(at) = url.rfind('@') else {
            continue;
        };
        let userinfo = &url[..at];
        let lone_token = !userinfo.is_empty() && !userinfo.contains('/');
        if userinfo.contains(':') || lone_token {
            found.push(userinfo);
        }
    }
    found
}

/// The values of the secret-looking query parameters of every URL in `text` (an argument, a
/// variable's value), whatever they hold up to the next `&`, `;` or `#`.
pub fn query_secrets(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for url in urls(text) {
        let host_on = url.rfind('@').map_or(0, |at| at + 1);
        let Some(question) = url[host_on..].find('?').map(|q| host_on + q) else {
            continue;
        };
        let query = url[question + 1..].split('#').next().unwrap_or_default();
        for pair in query.split(['&', ';']) {
            match pair.split_once('=') {
                Some((name, value)) if looks_secret(name) && !value.is_empty() => {
                    found.push(value);
                }
                _ => {}
            }
        }
    }
    found
}

/// Each URL of `text` after its scheme's `:/` and slashes, up to the next URL: one starts a
/// word or follows a list's or an option's separator (a `x:/` inside a password starts none).
fn urls(text: &str) -> Vec<&str> {
    let starts: Vec<(usize, usize)> = text
        .match_indices(":/")
        .filter_map(|(colon, _)| scheme_at(text, colon))
        .filter(|&(start, _)| {
            let before = text[..start].chars().next_back();
            before.map_or(true, |c| c.is_whitespace() || ",;=\"'(<".contains(c))
        })
        .collect();
    let ends = starts.iter().skip(1).map(|&(next, _)| next);
    let ends = ends.chain(std::iter::once(text.len()));
    starts
        .iter()
        .zip(ends)
        .map(|(&(_, after), end)| &text[after..end.max(after)])
        .collect()
}

/// The userinfo `word` holds before its last `@`, if it looks like one: the password of
/// `user:pass@`, or after a scheme a lone token (`https://token@`).
fn hidden_range(word: &str) -> Option<std::ops::Range<usize>> {
    let at = word.rfind('@')?;
    let before = &word[..at];
    let scheme = scheme_end(before);
    let start = scheme.unwrap_or_else(|| {
        let userinfo = before.find(|c: char| c.is_alphanumeric() || c == ':');
        userinfo.unwrap_or(before.len())
    });
    let userinfo = &before[start..];
    match userinfo.find(':') {
        Some(colon) => Some(start + colon + 1..at),
        // A bare `user@host` without a scheme is an e-mail address; after a scheme a lone
        // userinfo is a token, unless it holds a `/` (then the `@` is in a path).
        None if scheme.is_some() && !userinfo.is_empty() && !userinfo.contains('/') => {
            Some(start..at)
        }
        None => None,
    }
}

/// `reason` (a parser's complaint about `text`) with every piece of the secret that
/// [`hide_by_shape`] hides in `text` hidden too: a password holding an unencoded `#`, `/` or `?`
/// ends the authority early, and the parser may then quote part of it as a port or a path.
pub fn secret_pieces_hidden(text: &str, reason: &str) -> String {
    let pieces: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '"')
        .filter_map(|word| hidden_range(word).map(|range| &word[range]))
        .flat_map(|hidden| hidden.split(['#', '/', '?', '@', ':']))
        .filter(|p| !p.is_empty())
        .collect();
    if pieces.is_empty() {
        return reason.to_string();
    }
    // What a parser quotes from its input is between double quotes: a quoted value holding
    // a piece of the secret is hidden whole.
    let parts: Vec<&str> = reason
        .split('"')
        .enumerate()
        .map(
            |(i, part)| match i % 2 == 1 && pieces.iter().any(|p| part.contains(p)) {
                true => "***",
                false => part,
            },
        )
        .collect();
    parts.join("\"")
}

/// Where the userinfo starts after a `scheme:` and its slashes (one, two or none), if any.
fn scheme_end(text: &str) -> Option<usize> {
    scheme_at(text, text.find(":/")?).map(|(_, after)| after)
}

/// The start of the scheme ending at the `:` at `colon`, and where its userinfo starts after
/// the slashes; `None` if no scheme ends there.
fn scheme_at(text: &str, colon: usize) -> Option<(usize, usize)> {
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
    Some((
        scheme_start,
        colon + 1 + (after.len() - after.trim_start_matches('/').len()),
    ))
}

/// `word` with the values of its secret-looking query parameters hidden; the query ends at a
/// fragment or a closing quote.
fn query_hidden(word: &str) -> String {
    let Some(question) = word.find('?') else {
        return word.to_string();
    };
    let end = word[question..]
        .find(['#', '\''])
        .map_or(word.len(), |i| question + i);
    let mut shown = word[..=question].to_string();
    for pair in word[question + 1..end].split_inclusive(['&', ';']) {
        let (pair, separator) = pair.split_at(pair.trim_end_matches(['&', ';']).len());
        match pair.split_once('=') {
            Some((name, value)) if looks_secret(name) && !value.is_empty() => {
                shown.push_str(name);
                shown.push_str("=***");
                // The colon of `TARGET: reason` ends the last word, not the secret.
                if end == word.len() && separator.is_empty() && value.ends_with(':') {
                    shown.push(':');
                }
            }
            _ => shown.push_str(pair),
        }
        shown.push_str(separator);
    }
    shown + &word[end..]
}

/// Replaces a URL password (`user:secret@`) by `***` so the text can be shown.
pub fn redact_userinfo(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some(at) = authority.rfind('@') else {
        return text.to_string();
    };
    let shown = match authority[..at].split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!("{scheme}://{shown}{}", &rest[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_of_userinfo() {
        assert_eq!(redact_userinfo("http://u:p@h/x@y"), "http://u:***@h/x@y");
        assert_eq!(redact_userinfo("http://token@h/"), "http://***@h/");
        assert_eq!(redact_userinfo("http://h/a@b"), "http://h/a@b");
        assert_eq!(redact_userinfo("h:1"), "h:1");
    }

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
            assert_eq!(hide_by_shape(text), expected, "{text}");
            let line = format!("invalid target \"{text}\": reason");
            assert!(!hide_by_shape(&line).contains("pw"), "{line}");
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
            assert_eq!(hide_by_shape(text), text);
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
            assert_eq!(hide_by_shape(text), expected, "{text}");
        }
        let json = "{\"fields\":{\"message\":\"ready: http://u:pw@h/?token=t\"}}";
        assert_eq!(
            hide_by_shape(json),
            "{\"fields\":{\"message\":\"ready: http://u:***@h/?token=***\"}}"
        );
    }

    #[test]
    fn userinfo_runs_to_the_last_at_before_the_host() {
        let cases: [(&str, &[&str]); 9] = [
            ("http://u:p w@h/x", &["u:p w"]),
            ("--timeout=http://u:p\u{2003}w@@h", &["u:p\u{2003}w@"]),
            ("redis://:a b@h1,http://t@h2", &[":a b", "t"]),
            ("http://u:a:/b@h", &["u:a:/b"]),
            ("http:/u:p@h", &["u:p"]),
            ("http://h/a@b", &[]),
            ("http://h:80/a@b", &["h:80/a"]),
            ("mail ops@example.com", &[]),
            ("http://h/ and x@y", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(userinfos(text), expected, "{text}");
        }
    }

    #[test]
    fn secret_query_values_run_to_the_next_parameter() {
        let text = "http://h/?a=1&token=x y z&b=2 https://u:p@h?sig=s s#f";
        assert_eq!(query_secrets(text), ["x y z", "s s"]);
        assert!(query_secrets("http://h/?page=2").is_empty());
    }

    #[test]
    fn the_placeholder_of_a_hint_stays() {
        let hint = "give it as redis://:PASSWORD@HOST)";
        assert_eq!(hide_by_shape(hint), hint);
        assert_eq!(hide_by_shape("redis://:PASSWORDS@h"), "redis://:***@h");
    }
}
