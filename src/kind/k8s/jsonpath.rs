//! `?jsonpath=PATH[=VALUE]`: the subset of kubectl's JSONPath that `kubectl wait --for=jsonpath`
//! is used with — fields (`.status.phase`, `['a.b']`, `a\.b`), indexes (`[0]`) and filters
//! (`[?(@.type=="Ready")]`) — read from the answer's JSON in place: each step skips what it does
//! not need unread, so no tree of the object is built.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::object::{clip, MAX_ITEMS};
use crate::text::quoted;

/// A parsed path, and the text it was written as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
    /// As given, for reasons.
    pub text: String,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A field of an object.
    Field(String),
    /// An element of a list.
    Index(usize),
    /// The elements of a list whose value at `path` equals (or, with `equal` false, does not
    /// equal) `value`.
    Filter {
        path: Vec<Step>,
        equal: bool,
        value: String,
    },
}

/// What a path leads to in an object.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing (or `null`).
    Missing,
    /// A string, number or boolean, as kubectl prints it.
    Scalar(String),
    /// An object or a list, which kubectl compares with no value.
    Nested,
    /// More than one value, which kubectl refuses.
    Many,
}

/// Splits `PATH=VALUE` at the first `=` outside brackets (a filter holds `==`).
pub fn split(text: &str) -> (&str, Option<&str>) {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => return (&text[..at], Some(&text[at + 1..])),
            _ => {}
        }
    }
    (text, None)
}

impl JsonPath {
    /// Reads `{.a.b}`, `.a.b` or `a.b` (kubectl's relaxed forms); anything past the subset is
    /// named.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let fault = |why: &str| {
            format!(
                "invalid jsonpath {}: {why} (supported: .field, ['field'], [N], \
                 [?(@.field==\"value\")])",
                quoted(text)
            )
        };
        let mut inner = text.trim();
        if let Some(rest) = inner.strip_prefix('{') {
            inner = rest
                .strip_suffix('}')
                .ok_or_else(|| fault("no closing }"))?;
        }
        if inner.is_empty() {
            return Err(fault("empty"));
        }
        let relaxed;
        if !inner.starts_with(['.', '[']) {
            relaxed = format!(".{inner}");
            inner = &relaxed;
        }
        let steps = steps(inner).map_err(|why| fault(&why))?;
        Ok(JsonPath {
            steps,
            text: text.to_string(),
        })
    }

    /// What the path leads to in `object`, a JSON text.
    pub fn find(&self, object: &RawValue) -> Result<Found, String> {
        let mut out = Vec::new();
        walk(&self.steps, object, &mut out)?;
        Ok(match out.as_slice() {
            [] => Found::Missing,
            [one] => scalar(one),
            _ => Found::Many,
        })
    }
}

/// The steps of a path that starts with `.` or `[`.
fn steps(mut text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    while !text.is_empty() {
        if let Some(rest) = text.strip_prefix('.') {
            let mut name = String::new();
            let mut chars = rest.char_indices().peekable();
            let mut end = rest.len();
            while let Some((at, c)) = chars.next() {
                match c {
                    '\\' if matches!(chars.peek(), Some((_, '.'))) => {
                        name.push('.');
                        chars.next();
                    }
                    '.' | '[' => {
                        end = at;
                        break;
                    }
                    c => name.push(c),
                }
            }
            if name.is_empty() {
                return Err("an empty field name".into());
            }
            if name == "*" || name.contains(['(', ')', '@', '$', '"', '\'', ' ']) {
                return Err(format!("{} is not a field name", quoted(&name)));
            }
            steps.push(Step::Field(name));
            text = &rest[end..];
        } else if let Some(rest) = text.strip_prefix("[?(") {
            let end = rest.find(")]").ok_or("a filter without its closing )]")?;
            steps.push(filter(&rest[..end])?);
            text = &rest[end + 2..];
        } else if let Some(rest) = text.strip_prefix('[') {
            let end = rest.find(']').ok_or("a [ without its ]")?;
            let inside = rest[..end].trim();
            let step = match literal(inside) {
                Some(name) if !name.is_empty() => Step::Field(name),
                _ => match inside.parse::<usize>() {
                    Ok(index) => Step::Index(index),
                    Err(_) => return Err(format!("{} is not an index", quoted(inside))),
                },
            };
            steps.push(step);
            text = &rest[end + 1..];
        } else {
            return Err(format!("unexpected {}", quoted(text)));
        }
    }
    Ok(steps)
}

/// `@.path==value` or `@.path!=value` inside `[?( … )]`.
fn filter(text: &str) -> Result<Step, String> {
    let (at, equal) = match (text.find("=="), text.find("!=")) {
        (Some(at), _) => (at, true),
        (None, Some(at)) => (at, false),
        (None, None) => return Err("a filter needs == or !=".into()),
    };
    let (left, right) = (text[..at].trim(), text[at + 2..].trim());
    let path = left
        .strip_prefix('@')
        .filter(|path| path.starts_with(['.', '[']))
        .ok_or("a filter compares @.field")?;
    let path = steps(path)?;
    if path.iter().any(|step| matches!(step, Step::Filter { .. })) {
        return Err("a filter within a filter".into());
    }
    let value = literal(right).unwrap_or_else(|| right.to_string());
    if value.is_empty() {
        return Err("a filter compares with nothing".into());
    }
    Ok(Step::Filter { path, equal, value })
}

/// The text of a quoted literal (`'a'` or `"a"`); `None` if `text` is not quoted.
fn literal(text: &str) -> Option<String> {
    ['\'', '"'].into_iter().find_map(|quote| {
        let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
        (!inner.contains(quote)).then(|| inner.to_string())
    })
}

/// Follows `steps` from `value`, adding what they lead to (never `null`) to `out`.
fn walk<'a>(
    steps: &[Step],
    value: &'a RawValue,
    out: &mut Vec<&'a RawValue>,
) -> Result<(), String> {
    let Some((step, rest)) = steps.split_first() else {
        if value.get() != "null" {
            if out.len() == MAX_ITEMS {
                return Err(format!(
                    "the jsonpath leads to more than {MAX_ITEMS} values"
                ));
            }
            out.push(value);
        }
        return Ok(());
    };
    let text = value.get();
    let mut reader = serde_json::Deserializer::from_str(text);
    let broken = |e: serde_json::Error| format!("unexpected answer from the API server: {e}");
    match step {
        Step::Field(name) if text.starts_with('{') => {
            if let Some(inner) = reader.deserialize_map(FieldOf(name)).map_err(broken)? {
                walk(rest, inner, out)?;
            }
        }
        Step::Index(index) if text.starts_with('[') => {
            if let Some(inner) = reader.deserialize_seq(ElementOf(*index)).map_err(broken)? {
                walk(rest, inner, out)?;
            }
        }
        Step::Filter { path, equal, value } if text.starts_with('[') => {
            for element in reader.deserialize_seq(Elements).map_err(broken)? {
                let mut seen = Vec::new();
                walk(path, element, &mut seen)?;
                let holds = match seen.as_slice() {
                    [one] => matches!(scalar(one), Found::Scalar(s) if s == *value),
                    _ => false,
                };
                if holds == *equal && !seen.is_empty() {
                    walk(rest, element, out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// A value as kubectl prints it to compare: a string's text, a number as written, `true` or
/// `false`; an object or list is [`Found::Nested`].
fn scalar(value: &RawValue) -> Found {
    let text = value.get();
    match text.as_bytes().first() {
        Some(b'{' | b'[') => Found::Nested,
        Some(b'"') => match serde_json::from_str::<String>(text) {
            Ok(string) => Found::Scalar(string),
            Err(_) => Found::Missing,
        },
        Some(_) if text == "null" => Found::Missing,
        Some(_) => Found::Scalar(text.to_string()),
        None => Found::Missing,
    }
}

/// A value found, shortened for a reason.
pub fn shown(value: &str) -> String {
    quoted(&clip(value))
}

/// Reads an object, keeping only the value of one field, unparsed.
struct FieldOf<'n>(&'n str);

impl<'de> Visitor<'de> for FieldOf<'_> {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if found.is_none() && key == self.0 {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Reads a list, keeping only one element, unparsed.
struct ElementOf(usize);

impl<'de> Visitor<'de> for ElementOf {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut at = 0;
        loop {
            if at == self.0 {
                found = seq.next_element::<&'de RawValue>()?;
                if found.is_none() {
                    break;
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            at += 1;
        }
        Ok(found)
    }
}

/// Reads a list's elements, unparsed, up to [`MAX_ITEMS`] of them.
struct Elements;

impl<'de> Visitor<'de> for Elements {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        while let Some(element) = seq.next_element::<&'de RawValue>()? {
            if kept.len() == MAX_ITEMS {
                return Err(serde::de::Error::custom(format!(
                    "more than {MAX_ITEMS} entries in a list"
                )));
            }
            kept.push(element);
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(path: &str, json: &str) -> Found {
        let raw: &RawValue = serde_json::from_str(json).unwrap();
        JsonPath::parse(path).unwrap().find(raw).unwrap()
    }

    const POD: &str = r#"{"metadata":{"name":"web","labels":{"app.kubernetes.io/name":"web"}},
        "status":{"phase":"Running","replicas":3,"ready":true,"gone":null,
        "conditions":[{"type":"Scheduled","status":"True"},{"type":"Ready","status":"False"}],
        "loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}}"#;

    #[test]
    fn fields_indexes_and_filters() {
        let scalar = |s: &str| Found::Scalar(s.into());
        assert_eq!(find("{.status.phase}", POD), scalar("Running"));
        assert_eq!(find(".status.replicas", POD), scalar("3"));
        assert_eq!(find("status.ready", POD), scalar("true"));
        assert_eq!(find(".status.gone", POD), Found::Missing);
        assert_eq!(find(".status.absent.deeper", POD), Found::Missing);
        assert_eq!(find(".status.conditions[1].type", POD), scalar("Ready"));
        assert_eq!(find(".status.conditions[5].type", POD), Found::Missing);
        assert_eq!(
            find(r#"{.status.conditions[?(@.type=="Ready")].status}"#, POD),
            scalar("False")
        );
        assert_eq!(
            find(".status.conditions[?(@.type!='Ready')].status", POD),
            scalar("True")
        );
        assert_eq!(
            find(".status.conditions[?(@.status=='Maybe')].type", POD),
            Found::Missing
        );
        assert_eq!(find(".status.loadBalancer.ingress", POD), Found::Nested);
        assert_eq!(
            find(".status.loadBalancer.ingress[0].ip", POD),
            scalar("10.0.0.1")
        );
        assert_eq!(
            find(r".metadata.labels.app\.kubernetes\.io/name", POD),
            scalar("web")
        );
        assert_eq!(
            find(".metadata.labels['app.kubernetes.io/name']", POD),
            scalar("web")
        );
        assert_eq!(
            find(".status.conditions[?(@.status!='x')].type", POD),
            Found::Many
        );
        assert_eq!(find(".status.phase.deeper", POD), Found::Missing);
    }

    #[test]
    fn what_is_past_the_subset_is_named() {
        for text in [
            "",
            "{.a",
            ".a..b",
            ".items[*].x",
            "$.a",
            ".a[-1]",
            ".a[?(@.x>1)]",
        ] {
            assert!(JsonPath::parse(text).is_err(), "{text}");
        }
        assert_eq!(
            split(r#"{.a[?(@.t=="R")].s}=True"#),
            (r#"{.a[?(@.t=="R")].s}"#, Some("True"))
        );
        assert_eq!(split(".a.b"), (".a.b", None));
        assert_eq!(split(".a=x=y"), (".a", Some("x=y")));
    }
}
