//! Label selectors (`app=web,tier!=db,env in (a,b),!canary`): checked at parse time, so a typo
//! is a usage error rather than a `400` on every attempt.

use std::collections::BTreeMap;

use crate::text::quoted;

/// Checks `text` against the API's label selector grammar: requirements separated by commas,
/// each `KEY`, `!KEY`, `KEY=V`, `KEY==V`, `KEY!=V`, `KEY in (V,…)` or `KEY notin (V,…)`.
pub fn validate(text: &str) -> Result<(), String> {
    let fault = |what: &str| format!("invalid label selector {}: {what}", quoted(text));
    if text.trim().is_empty() {
        return Err(fault("empty"));
    }
    for requirement in split_top_level(text).map_err(fault)? {
        requirement_ok(requirement.trim()).map_err(|e| fault(&e))?;
    }
    Ok(())
}

/// Splits at the commas outside parentheses.
fn split_top_level(text: &str) -> Result<Vec<&str>, &'static str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0u32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' if depth == 0 => depth = 1,
            '(' => return Err("nested '('"),
            ')' if depth == 1 => depth = 0,
            ')' => return Err("')' without '('"),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unclosed '('");
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn requirement_ok(requirement: &str) -> Result<(), String> {
    if let Some(key) = requirement.strip_prefix('!') {
        return key_ok(key.trim());
    }
    for operator in ["!=", "==", "="] {
        if let Some((key, value)) = requirement.split_once(operator) {
            key_ok(key.trim())?;
            return value_ok(value.trim());
        }
    }
    for operator in [" notin ", " in "] {
        if let Some((key, values)) = requirement.split_once(operator) {
            key_ok(key.trim())?;
            let list = values
                .trim()
                .strip_prefix('(')
                .and_then(|v| v.strip_suffix(')'))
                .ok_or_else(|| format!("expected KEY{operator}(V1,V2)"))?;
            return list.split(',').try_for_each(|v| value_ok(v.trim()));
        }
    }
    key_ok(requirement)
}

/// Whether an object with `labels` is one `selector` (validated) picks, as the API server
/// decides it: `KEY!=V` and `KEY notin (…)` also pick an object without KEY.
pub fn matches(selector: &str, labels: &BTreeMap<String, String>) -> bool {
    let Ok(requirements) = split_top_level(selector) else {
        return false;
    };
    requirements.iter().all(|r| meets(r.trim(), labels))
}

/// Whether `labels` meet one requirement of a selector.
fn meets(requirement: &str, labels: &BTreeMap<String, String>) -> bool {
    if let Some(key) = requirement.strip_prefix('!') {
        return !labels.contains_key(key.trim());
    }
    let value_of = |key: &str| labels.get(key.trim()).map(String::as_str);
    for (operator, equal) in [("!=", false), ("==", true), ("=", true)] {
        if let Some((key, value)) = requirement.split_once(operator) {
            return (value_of(key) == Some(value.trim())) == equal;
        }
    }
    for (operator, inside) in [(" notin ", false), (" in ", true)] {
        if let Some((key, values)) = requirement.split_once(operator) {
            let values = values.trim().trim_start_matches('(').trim_end_matches(')');
            let listed = value_of(key).is_some_and(|v| values.split(',').any(|x| x.trim() == v));
            return listed == inside;
        }
    }
    labels.contains_key(requirement)
}

/// `[PREFIX/]NAME`: PREFIX a DNS subdomain, NAME a label name.
fn key_ok(key: &str) -> Result<(), String> {
    let (prefix, name) = key.rsplit_once('/').unwrap_or(("", key));
    let prefix_ok =
        prefix.is_empty() || (prefix.len() <= 253 && prefix.split('.').all(|l| dns_label(l, 63)));
    if !prefix_ok || name.is_empty() || !name_ok(name) {
        return Err(format!("invalid label key {}", quoted(key)));
    }
    Ok(())
}

/// A label value: empty, or a label name.
fn value_ok(value: &str) -> Result<(), String> {
    match value.is_empty() || name_ok(value) {
        true => Ok(()),
        false => Err(format!("invalid label value {}", quoted(value))),
    }
}

/// At most 63 of letters, digits, `-`, `_` and `.`, beginning and ending alphanumeric.
fn name_ok(name: &str) -> bool {
    word(name, 63, b"-_.")
}

/// Letters, digits and inner `-`, at most `max` long: an RFC 1123 label.
pub(super) fn dns_label(label: &str, max: usize) -> bool {
    word(label, max, b"-")
}

/// 1 to `max` letters, digits and `inner` bytes, beginning and ending alphanumeric.
fn word(text: &str, max: usize, inner: &[u8]) -> bool {
    let alphanumeric = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    let bytes = text.as_bytes();
    bytes.len() <= max
        && alphanumeric(bytes.first())
        && alphanumeric(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || inner.contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_is_accepted() {
        for ok in [
            "app=web",
            "app==web,tier!=db",
            "app.kubernetes.io/name=api",
            "env in (prod, staging),!canary",
            "tier notin (a,b),track",
            "app=",
        ] {
            validate(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn objects_are_picked_as_the_api_server_picks_them() {
        let labels: BTreeMap<String, String> = [("app", "web"), ("env", "prod")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
        for (selector, picked) in [
            ("app=web", true),
            ("app==web,env=prod", true),
            ("app=db", false),
            ("app!=db", true),
            ("tier!=db", true),
            ("app!=web", false),
            ("env in (prod, staging)", true),
            ("env in (staging)", false),
            ("env notin (staging)", true),
            ("tier notin (a)", true),
            ("env notin (prod)", false),
            ("app", true),
            ("tier", false),
            ("!tier", true),
            ("!app", false),
            ("app=web,tier", false),
        ] {
            assert_eq!(matches(selector, &labels), picked, "{selector}");
        }
    }

    #[test]
    fn mistakes_are_refused() {
        for bad in [
            "",
            "app web",
            "app=web=x",
            "-app=web",
            "env in prod",
            "env in (a,(b))",
            "env in (a",
            "a)",
            "app=we b",
            "x/y/z=1",
        ] {
            assert!(validate(bad).is_err(), "{bad} accepted");
        }
    }
}
