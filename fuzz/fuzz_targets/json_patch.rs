//! Applies an RFC 6902 JSON Patch of the operations the webhook writes (add, replace, remove),
//! as the API server does, refusing one that does not apply.

use serde_json::Value;

/// Applies `ops` to `document` in order; the error says which does not apply.
pub fn apply(document: &mut Value, ops: &[Value]) -> Result<(), String> {
    for op in ops {
        let path = op["path"].as_str().ok_or(format!("no path: {op}"))?;
        let (parent, last) = match path.rsplit_once('/') {
            Some(split) => split,
            None if path.is_empty() => {
                *document = op.get("value").cloned().ok_or(format!("no value: {op}"))?;
                continue;
            }
            None => return Err(format!("a path not starting with '/': {op}")),
        };
        let last = unescape(last);
        let target = document
            .pointer_mut(parent)
            .ok_or(format!("no parent: {op}"))?;
        let value = op.get("value").cloned();
        match (op["op"].as_str(), target) {
            (Some("add"), Value::Object(map)) => {
                map.insert(last, value.ok_or(format!("no value: {op}"))?);
            }
            (Some("add"), Value::Array(items)) => {
                let at = match last.as_str() {
                    "-" => items.len(),
                    index => index_in(index, items.len() + 1).ok_or(format!("bad index: {op}"))?,
                };
                items.insert(at, value.ok_or(format!("no value: {op}"))?);
            }
            (Some("replace"), Value::Object(map)) if map.contains_key(&last) => {
                map.insert(last, value.ok_or(format!("no value: {op}"))?);
            }
            (Some("replace"), Value::Array(items)) => {
                let at = index_in(&last, items.len()).ok_or(format!("bad index: {op}"))?;
                items[at] = value.ok_or(format!("no value: {op}"))?;
            }
            (Some("remove"), Value::Object(map)) => {
                map.remove(&last)
                    .ok_or(format!("nothing to remove: {op}"))?;
            }
            (Some("remove"), Value::Array(items)) => {
                let at = index_in(&last, items.len()).ok_or(format!("bad index: {op}"))?;
                items.remove(at);
            }
            _ => return Err(format!("does not apply: {op}")),
        }
    }
    Ok(())
}

/// A reference token's text (`~1` is `/`, `~0` is `~`).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// An array index below `len`, written without a sign or leading zero.
fn index_in(token: &str, len: usize) -> Option<usize> {
    let canonical = token == "0" || !token.starts_with('0');
    let index: usize = token.parse().ok().filter(|_| canonical)?;
    (token.bytes().all(|b| b.is_ascii_digit()) && index < len).then_some(index)
}
