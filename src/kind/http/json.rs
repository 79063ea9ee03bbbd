//! `--json-field`: finds the value at a path in a JSON body in one streaming pass. Nothing but
//! the path's current key is held: the rest of the document is skipped as it is read (serde's
//! `IgnoredAny`) and the value found is a slice of the body, so a hostile megabyte costs no
//! tree of values; serde_json's nesting limit (128) bounds the stack.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::grammar::expect::JsonField;
use crate::text::{peer_text, quoted};

/// Whether `body` holds `field`; the error is the reason, in words.
pub fn judge(body: &[u8], field: &JsonField) -> Result<(), String> {
    let walk = Walk {
        path: &field.path,
        depth: 0,
    };
    let mut reader = serde_json::Deserializer::from_slice(body);
    let found = walk
        .deserialize(&mut reader)
        .and_then(|found| reader.end().map(|()| found))
        .map_err(|e| format!("body is not JSON ({e})"))?;
    let raw = match found {
        Found::Value(raw) => raw.get(),
        Found::Missing { depth, why } => {
            let parent = match depth {
                0 => "the top level".to_string(),
                _ => field.path[..depth].join("."),
            };
            return Err(format!("no JSON field {field} ({parent} {why})"));
        }
    };
    match (&field.value, raw.as_bytes()[0]) {
        (None, _) if raw == "null" || raw == "false" => Err(format!("JSON field {field} is {raw}")),
        (None, _) => Ok(()),
        (Some(_), b'{' | b'[') => Err(format!(
            "JSON field {field} is {}, not a string, number, true, false or null",
            Shape::of(raw)
        )),
        (Some(expected), b'"') => {
            // Read as a value only here: a lone UTF-16 surrogate (`"\ud800"`) is not JSON text.
            let text: String = serde_json::from_str(raw).map_err(|e| {
                format!(
                    "JSON field {field} is not JSON: {}",
                    peer_text(&e.to_string())
                )
            })?;
            match text == *expected {
                true => Ok(()),
                false => Err(format!(
                    "JSON field {field} is \"{}\", not {}",
                    peer_text(&text),
                    quoted(expected)
                )),
            }
        }
        (Some(expected), _) if raw == expected => Ok(()),
        (Some(expected), _) => Err(format!(
            "JSON field {field} is {}, not {}",
            peer_text(raw),
            quoted(expected)
        )),
    }
}

/// What the walk found at the end of the path.
enum Found<'de> {
    /// The value, as written in the body.
    Value(&'de RawValue),
    /// The path ends early: the first `depth` keys led to a value that `why` it goes no further.
    Missing { depth: usize, why: Why },
}

/// Why a path goes no further.
enum Why {
    /// An object without the next key.
    NoKey(String),
    /// An array shorter than the index, or the next key is no index.
    NoIndex { key: String, length: usize },
    /// A string, number, true, false or null.
    Scalar(Shape),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::NoKey(key) => write!(f, "has no key {}", quoted(key)),
            Why::NoIndex { key, length } => {
                write!(
                    f,
                    "is an array of {length}, with no element {}",
                    quoted(key)
                )
            }
            Why::Scalar(shape) => write!(f, "is {shape}"),
        }
    }
}

/// A JSON value's kind, for reasons.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Object,
    Array,
    String,
    Number,
    Boolean,
    Null,
}

impl Shape {
    /// The kind of a value as written (non-empty, as serde_json hands it over).
    fn of(raw: &str) -> Shape {
        match raw.as_bytes()[0] {
            b'{' => Shape::Object,
            b'[' => Shape::Array,
            b'"' => Shape::String,
            b't' | b'f' => Shape::Boolean,
            b'n' => Shape::Null,
            _ => Shape::Number,
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Shape::Object => "an object",
            Shape::Array => "an array",
            Shape::String => "a string",
            Shape::Number => "a number",
            Shape::Boolean => "a boolean",
            Shape::Null => "null",
        })
    }
}

/// Reads one value, following `path` from the `depth`-th key into it.
struct Walk<'p> {
    path: &'p [String],
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Found<'de>;

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<Found<'de>, D::Error> {
        if self.depth == self.path.len() {
            return <&RawValue>::deserialize(reader).map(Found::Value);
        }
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found<'de>, A::Error> {
        let key = &self.path[self.depth];
        let mut found = None;
        // Every entry is read, to the end of the object: a later duplicate key wins, as in
        // JavaScript, and the document must be well-formed to the end.
        while let Some(hit) = map.next_key_seed(KeyIs(key))? {
            match hit {
                true => {
                    let next = Walk {
                        path: self.path,
                        depth: self.depth + 1,
                    };
                    found = Some(map.next_value_seed(next)?);
                }
                false => _ = map.next_value::<IgnoredAny>()?,
            }
        }
        Ok(found.unwrap_or_else(|| self.missing(Why::NoKey(key.clone()))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Found<'de>, A::Error> {
        let key = &self.path[self.depth];
        let index = key
            .parse::<usize>()
            .ok()
            .filter(|_| key.bytes().all(|b| b.is_ascii_digit()));
        let (mut found, mut length) = (None, 0);
        loop {
            let more = if Some(length) == index {
                let next = Walk {
                    path: self.path,
                    depth: self.depth + 1,
                };
                seq.next_element_seed(next)?
                    .map(|value| found = Some(value))
            } else {
                seq.next_element::<IgnoredAny>()?.map(drop)
            };
            if more.is_none() {
                break;
            }
            length += 1;
        }
        let key = key.clone();
        Ok(found.unwrap_or_else(|| self.missing(Why::NoIndex { key, length })))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Found<'de>, E> {
        Ok(self.missing(Why::Scalar(Shape::Boolean)))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Found<'de>, E> {
        Ok(self.missing(Why::Scalar(Shape::Number)))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Found<'de>, E> {
        Ok(self.missing(Why::Scalar(Shape::Number)))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Found<'de>, E> {
        Ok(self.missing(Why::Scalar(Shape::Number)))
    }

    fn visit_str<E>(self, _: &str) -> Result<Found<'de>, E> {
        Ok(self.missing(Why::Scalar(Shape::String)))
    }

    fn visit_unit<E>(self) -> Result<Found<'de>, E> {
        Ok(self.missing(Why::Scalar(Shape::Null)))
    }
}

impl Walk<'_> {
    fn missing<'de>(&self, why: Why) -> Found<'de> {
        Found::Missing {
            depth: self.depth,
            why,
        }
    }
}

/// Reads an object's key and says whether it is this one, without keeping it.
struct KeyIs<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<bool, D::Error> {
        reader.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, field: &str) -> Result<(), String> {
        judge(body.as_bytes(), &JsonField::parse(field).unwrap())
    }

    const HEALTH: &str = r#"{"status":"UP","components":{"db":{"status":"DOWN","details":
        {"error":"timeout"}},"ping":{"status":"UP"}},"items":[{"ready":false},{"ready":true,
        "n":3,"ratio":0.50,"nothing":null,"empty":""}],"esc":"a\"b\u00e9","dup":1,"dup":2}"#;

    #[test]
    fn values_are_compared_as_their_text() {
        for ok in [
            "status=UP",
            "components.ping.status=UP",
            "items.1.ready=true",
            "items.1.n=3",
            "items.1.ratio=0.50",
            "items.1.nothing=null",
            "items.1.empty=",
            "esc=a\"bé",
            "dup=2",
            // Present and neither false nor null: 0, "" and objects count.
            "items.1.ready",
            "items.1.empty",
            "components",
        ] {
            assert_eq!(check(HEALTH, ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn each_miss_says_why() {
        for (field, reason) in [
            ("status=DOWN", r#"JSON field status is "UP", not "DOWN""#),
            ("items.1.n=3.0", r#"JSON field items.1.n is 3, not "3.0""#),
            ("items.0.ready", "JSON field items.0.ready is false"),
            ("items.1.nothing", "JSON field items.1.nothing is null"),
            (
                "components.db=UP",
                "JSON field components.db is an object, not a string, number, true, false or null",
            ),
            (
                "components.cache.status=UP",
                r#"no JSON field components.cache.status (components has no key "cache")"#,
            ),
            (
                "health",
                r#"no JSON field health (the top level has no key "health")"#,
            ),
            (
                "items.2.ready",
                r#"no JSON field items.2.ready (items is an array of 2, with no element "2")"#,
            ),
            (
                "items.first",
                r#"no JSON field items.first (items is an array of 2, with no element "first")"#,
            ),
            (
                "status.code",
                "no JSON field status.code (status is a string)",
            ),
        ] {
            assert_eq!(check(HEALTH, field), Err(reason.to_string()), "{field}");
        }
    }

    #[test]
    fn a_body_that_is_not_json_says_so() {
        for body in [
            "",
            "<html>",
            r#"{"status":"UP"} trailing"#,
            r#"{"status":"UP""#,
        ] {
            let err = check(body, "status").unwrap_err();
            assert!(err.starts_with("body is not JSON ("), "{body}: {err}");
        }
        // Nesting beyond serde_json's limit is refused, not followed down the stack.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let path = vec!["0"; 200].join(".");
        assert!(check(&deep, &path).unwrap_err().contains("recursion limit"));
        assert!(check(&deep, "0").is_ok(), "skipped over without recursing");
    }

    #[test]
    fn long_values_are_clipped_and_escaped() {
        let body = format!(r#"{{"s":"\n{}"}}"#, "x".repeat(500));
        let err = check(&body, "s=y").unwrap_err();
        assert!(err.starts_with(r#"JSON field s is "\nxxx"#), "{err}");
        assert!(
            err.ends_with(r#"x… (202 more characters)", not "y""#),
            "{err}"
        );
    }
}
