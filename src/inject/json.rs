//! JSON in and out: manifests written as JSON, the webhook's pods, and the values of a JSON
//! Patch. Mappings keep their order both ways; a plain scalar read from YAML becomes the JSON
//! value Kubernetes reads it as (a number, a boolean, null), any other a string.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::tree::{Node, Scalar};

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Reads any JSON value into a [`Node`], in order.
struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        let number = serde_json::Number::from_f64(v).ok_or_else(|| E::custom("not a number"))?;
        Ok(Node::plain(number.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::string(v))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::string(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::plain("null"))
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::plain("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries: Vec<(Node, Node)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            if entries.iter().any(|(k, _)| k.as_str() == Some(&key)) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            entries.push((Node::string(key), value));
        }
        Ok(Node::Map(entries))
    }
}

/// A node written as JSON (`serde_json::to_string(&Json(&node))`).
pub struct Json<'a>(pub &'a Node);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Node::Scalar(scalar) => serialize_scalar(scalar, serializer),
            Node::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Json(item))?;
                }
                seq.end()
            }
            Node::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    let key = match key {
                        Node::Scalar(scalar) => scalar.text.as_str(),
                        _ => return Err(serde::ser::Error::custom("a key that is not a scalar")),
                    };
                    map.serialize_entry(key, &Json(value))?;
                }
                map.end()
            }
        }
    }
}

/// A scalar as the JSON value Kubernetes reads it as.
fn serialize_scalar<S: Serializer>(scalar: &Scalar, serializer: S) -> Result<S::Ok, S::Error> {
    if !scalar.plain {
        return serializer.serialize_str(&scalar.text);
    }
    match resolve(&scalar.text) {
        Resolved::Null => serializer.serialize_unit(),
        Resolved::Bool(b) => serializer.serialize_bool(b),
        Resolved::Number(n) => n.serialize(serializer),
        Resolved::String => serializer.serialize_str(&scalar.text),
    }
}

/// Whether two scalars are the same JSON value as Kubernetes reads them: a plain `x` and a
/// quoted `"x"`, `yes` and `true`; not `1` and `"1"`.
pub fn same_value(a: &Scalar, b: &Scalar) -> bool {
    value(a) == value(b)
}

/// The JSON value of a scalar.
fn value(scalar: &Scalar) -> serde_json::Value {
    if !scalar.plain {
        return serde_json::Value::String(scalar.text.clone());
    }
    match resolve(&scalar.text) {
        Resolved::Null => serde_json::Value::Null,
        Resolved::Bool(b) => serde_json::Value::Bool(b),
        Resolved::Number(n) => serde_json::Value::Number(n),
        Resolved::String => serde_json::Value::String(scalar.text.clone()),
    }
}

/// What a plain scalar means.
enum Resolved {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String,
}

/// Resolves a plain scalar as Kubernetes' YAML reader does: null, booleans (YAML 1.1's
/// yes/no/on/off too), decimal, hex and octal integers, and floats; anything else is a string.
fn resolve(text: &str) -> Resolved {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Resolved::Null;
    }
    for (words, value) in [
        (
            [
                "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON",
            ],
            true,
        ),
        (
            [
                "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF",
            ],
            false,
        ),
    ] {
        if words.contains(&text) {
            return Resolved::Bool(value);
        }
    }
    if let Ok(number) = serde_json::from_str::<serde_json::Number>(text) {
        if !text.starts_with(char::is_whitespace) && !text.ends_with(char::is_whitespace) {
            return Resolved::Number(number);
        }
    }
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let radix = [("0x", 16), ("0o", 8)]
        .into_iter()
        .find_map(|(prefix, radix)| digits.strip_prefix(prefix).map(|d| (d, radix)));
    if let Some(Ok(value)) = radix.map(|(d, radix)| i64::from_str_radix(d, radix)) {
        return Resolved::Number(if negative { -value } else { value }.into());
    }
    let float_like = !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'));
    match text.parse::<f64>().ok().filter(|_| float_like) {
        Some(value) => {
            serde_json::Number::from_f64(value).map_or(Resolved::String, Resolved::Number)
        }
        None => Resolved::String,
    }
}

/// `node` as pretty JSON (two spaces), ending with a newline.
pub fn emit(node: &Node) -> Result<String, String> {
    let mut text = serde_json::to_string_pretty(&Json(node)).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// The JSON documents of a stream, each with its byte range in `text`; the error names the
/// document and where it broke.
pub fn load_stream(text: &str) -> Result<Vec<(std::ops::Range<usize>, Node)>, String> {
    let mut documents = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Node>();
    let mut end = 0;
    loop {
        let start = end + (text[end..].len() - text[end..].trim_start().len());
        match stream.next() {
            None => return Ok(documents),
            Some(Ok(node)) => {
                end = stream.byte_offset();
                documents.push((start..end, node));
            }
            Some(Err(e)) => return Err(format!("document {}: not JSON: {e}", documents.len() + 1)),
        }
    }
}
