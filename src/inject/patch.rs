//! The RFC 6902 JSON Patch that turns a document into its injected form: what
//! `--output patch` writes and what the webhook answers with. Mappings are compared key by key;
//! a sequence that only gained items gets `add`s, any other changed sequence is replaced whole.

use super::json::{same_value, Json};
use super::tree::Node;

/// One operation of a JSON Patch.
pub enum Op<'a> {
    Add(String, &'a Node),
    Replace(String, &'a Node),
    Remove(String),
}

/// The operations that turn `before` into `after`, in an order that applies.
pub fn diff<'a>(before: &Node, after: &'a Node) -> Vec<Op<'a>> {
    let mut ops = Vec::new();
    walk(before, after, String::new(), &mut ops);
    ops
}

fn walk<'a>(before: &Node, after: &'a Node, path: String, ops: &mut Vec<Op<'a>>) {
    if before == after {
        return;
    }
    match (before, after) {
        (Node::Map(old), Node::Map(new)) => {
            for (key, _) in old {
                let key = key.as_str().unwrap_or_default();
                if after.get(key).is_none() {
                    ops.push(Op::Remove(pointer(&path, key)));
                }
            }
            for (key, value) in new {
                let key = key.as_str().unwrap_or_default();
                match before.get(key) {
                    Some(old) => walk(old, value, pointer(&path, key), ops),
                    None => ops.push(Op::Add(pointer(&path, key), value)),
                }
            }
        }
        // `proxy` read from YAML and `"proxy"` from JSON are one value: no operation.
        (Node::Scalar(old), Node::Scalar(new)) if same_value(old, new) => {}
        (Node::Seq(old), Node::Seq(new)) if old.len() == new.len() => {
            for (index, (old, new)) in old.iter().zip(new).enumerate() {
                walk(old, new, pointer(&path, &index.to_string()), ops);
            }
        }
        (Node::Seq(old), Node::Seq(new)) if inserted_only(old, new) => {
            let prefix = common_prefix(old, new);
            let added = new.len() - old.len();
            for (offset, item) in new[prefix..prefix + added].iter().enumerate() {
                ops.push(Op::Add(
                    pointer(&path, &(prefix + offset).to_string()),
                    item,
                ));
            }
        }
        _ => ops.push(Op::Replace(path, after)),
    }
}

/// How many leading items `old` and `new` share.
fn common_prefix(old: &[Node], new: &[Node]) -> usize {
    old.iter().zip(new).take_while(|(a, b)| a == b).count()
}

/// Whether `new` is `old` with items inserted in one run (at the start, middle or end).
fn inserted_only(old: &[Node], new: &[Node]) -> bool {
    if new.len() <= old.len() {
        return false;
    }
    let prefix = common_prefix(old, new);
    let suffix = (old[prefix..].iter().rev())
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    prefix + suffix == old.len()
}

/// `path` with one more reference token, escaped (`~` as `~0`, `/` as `~1`).
fn pointer(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// The patch as a JSON array, on one line.
pub fn to_json(ops: &[Op]) -> String {
    let items: Vec<String> = ops
        .iter()
        .map(|op| {
            let (name, path, value) = match op {
                Op::Add(path, value) => ("add", path, Some(value)),
                Op::Replace(path, value) => ("replace", path, Some(value)),
                Op::Remove(path) => ("remove", path, None),
            };
            let path = serde_json::to_string(path).unwrap_or_default();
            match value {
                Some(value) => {
                    let value = serde_json::to_string(&Json(value)).unwrap_or_default();
                    format!(r#"{{"op":"{name}","path":{path},"value":{value}}}"#)
                }
                None => format!(r#"{{"op":"{name}","path":{path}}}"#),
            }
        })
        .collect();
    format!("[{}]", items.join(","))
}
