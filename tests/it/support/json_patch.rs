//! Applies an RFC 6902 JSON Patch as the API server does with a webhook's answer: `add`,
//! `replace` and `remove` on JSON pointers (what readygate's patches use); any other operation,
//! or a path that does not apply, fails the test.

use serde_json::Value;

/// `document` with `patch` (a JSON array of operations) applied.
pub fn apply(document: &Value, patch: &[u8]) -> Value {
    let ops: Vec<Value> = serde_json::from_slice(patch)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(patch)));
    let mut document = document.clone();
    for op in &ops {
        let path = op["path"]
            .as_str()
            .unwrap_or_else(|| panic!("no path: {op}"));
        let tokens: Vec<String> = path
            .split('/')
            .skip(1)
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .collect();
        let Some((last, parents)) = tokens.split_last() else {
            panic!("an op on the whole document: {op}");
        };
        let mut at = &mut document;
        for token in parents {
            at = match at {
                Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
                Value::Object(members) => members.get_mut(token),
                _ => None,
            }
            .unwrap_or_else(|| panic!("{path} does not apply: no {token}"));
        }
        let value = || op["value"].clone();
        match (op["op"].as_str().unwrap_or_default(), at) {
            ("add", Value::Array(items)) if last == "-" => items.push(value()),
            ("add", Value::Array(items)) => match last.parse::<usize>() {
                Ok(index) if index <= items.len() => items.insert(index, value()),
                _ => panic!("{path} does not apply: {} items", items.len()),
            },
            ("add", Value::Object(members)) => {
                members.insert(last.clone(), value());
            }
            ("replace", Value::Array(items)) => {
                let slot = last.parse::<usize>().ok().and_then(|i| items.get_mut(i));
                *slot.unwrap_or_else(|| panic!("{path} does not apply")) = value();
            }
            ("replace", Value::Object(members)) if members.contains_key(last) => {
                members.insert(last.clone(), value());
            }
            ("remove", Value::Array(items)) => match last.parse::<usize>() {
                Ok(index) if index < items.len() => drop(items.remove(index)),
                _ => panic!("{path} does not apply: {} items", items.len()),
            },
            ("remove", Value::Object(members)) => {
                members
                    .remove(last)
                    .unwrap_or_else(|| panic!("{path} does not apply"));
            }
            (name, _) => panic!(
                "an op this applier does not know, or a path that does not apply: {name} {path}"
            ),
        }
    }
    document
}
