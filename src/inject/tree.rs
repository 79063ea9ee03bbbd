//! The document tree every manifest is read into and written from: mappings keep their keys
//! in order and scalars keep the text and quoting they were written with, so what inject does
//! not touch comes out as it went in, fields it has never heard of included.

/// One node of a manifest: a scalar, a sequence or a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Keys in the order they were written.
    Map(Vec<(Node, Node)>),
}

/// A scalar as written: its text, and whether it was plain (so YAML or JSON resolves it to a
/// number, a boolean, null or a string) or quoted (always a string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar {
    pub text: String,
    /// Unquoted: `5432`, `true`, `null`, `nginx`; JSON numbers, booleans and null are plain.
    pub plain: bool,
}

impl Node {
    /// A string scalar (quoted: it is a string whatever its text).
    pub fn string(text: impl Into<String>) -> Node {
        Node::Scalar(Scalar {
            text: text.into(),
            plain: false,
        })
    }

    /// A plain scalar such as a number or a boolean, written as `text`.
    pub fn plain(text: impl Into<String>) -> Node {
        Node::Scalar(Scalar {
            text: text.into(),
            plain: true,
        })
    }

    /// An empty mapping.
    pub fn map() -> Node {
        Node::Map(Vec::new())
    }

    /// A sequence of strings.
    pub fn strings<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Node {
        Node::Seq(items.into_iter().map(Node::string).collect())
    }

    /// The scalar's text when this is a string-like scalar (any scalar but null).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Scalar(scalar) if !(scalar.plain && scalar.is_null()) => Some(&scalar.text),
            _ => None,
        }
    }

    /// Whether this is null: a plain `null`, `~` or nothing.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Scalar(scalar) if scalar.plain && scalar.is_null())
    }

    /// The value of mapping key `key`, if this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of mapping key `key`, mutable.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        match self {
            Node::Map(entries) => entries
                .iter_mut()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets mapping key `key` to `value`: in place when the key is there (its position kept),
    /// else at the end. Does nothing on a node that is not a mapping.
    pub fn set(&mut self, key: &str, value: Node) {
        if let Node::Map(entries) = self {
            match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
                Some((_, slot)) => *slot = value,
                None => entries.push((Node::string(key), value)),
            }
        }
    }

    /// Removes mapping key `key`, if there.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let Node::Map(entries) = self else {
            return None;
        };
        let index = entries.iter().position(|(k, _)| k.as_str() == Some(key))?;
        Some(entries.remove(index).1)
    }

    /// Sets mapping key `key` to `value` unless what is there already holds it (see
    /// [`Node::holds`]), so that fields the API server or other webhooks added are kept.
    pub fn ensure(&mut self, key: &str, value: Node) {
        if !self.get(key).is_some_and(|have| have.holds(&value)) {
            self.set(key, value);
        }
    }

    /// Whether this node already says everything `wanted` says: a mapping has every key of
    /// `wanted` with a value that holds its value; a list of named mappings has an item holding
    /// each of `wanted`'s by name (others may be there too); any other list has as many items,
    /// each holding its counterpart; a scalar is the same JSON value (a plain `x` is `"x"`, `1`
    /// is not `"1"`). So what others add to readygate's containers (the API server's defaults,
    /// the service account's mount, a policy webhook's fields) still holds them.
    pub fn holds(&self, wanted: &Node) -> bool {
        match (self, wanted) {
            (Node::Scalar(have), Node::Scalar(wanted)) => super::json::same_value(have, wanted),
            (Node::Map(_), Node::Map(entries)) => entries.iter().all(|(key, value)| {
                let have = key.as_str().and_then(|key| self.get(key));
                have.is_some_and(|have| have.holds(value))
            }),
            (Node::Seq(have), Node::Seq(items)) if named(have) && named(items) => {
                items.iter().all(|item| {
                    let name = item.get("name").and_then(Node::as_str).unwrap_or_default();
                    position_by_name(have, name).is_some_and(|index| have[index].holds(item))
                })
            }
            (Node::Seq(have), Node::Seq(items)) => {
                have.len() == items.len() && have.iter().zip(items).all(|(a, b)| a.holds(b))
            }
            _ => false,
        }
    }

    /// The value at `key`, made a mapping or sequence like `empty` when missing or null, so
    /// that a field can be filled in; `None` when it is there with another shape.
    pub fn entry(&mut self, key: &str, empty: Node) -> Option<&mut Node> {
        if !matches!(self.get(key), Some(value) if !value.is_null()) {
            self.set(key, empty.clone());
        }
        let value = self.get_mut(key)?;
        let same = matches!(
            (&*value, &empty),
            (Node::Map(_), Node::Map(_)) | (Node::Seq(_), Node::Seq(_))
        );
        same.then_some(value)
    }
}

impl Scalar {
    /// YAML's null forms (core schema).
    pub fn is_null(&self) -> bool {
        matches!(self.text.as_str(), "" | "~" | "null" | "Null" | "NULL")
    }
}

/// The mapping entries of a container list: a sequence whose items are each a mapping with a
/// `name`; used to find containers and volumes by name.
pub fn position_by_name(list: &[Node], name: &str) -> Option<usize> {
    list.iter()
        .position(|item| item.get("name").and_then(Node::as_str) == Some(name))
}

/// Whether `items` is a list of named mappings (containers, volumes, mounts, env), whose
/// items are told apart by name; an empty list is not, so it holds only an empty list.
fn named(items: &[Node]) -> bool {
    !items.is_empty()
        && items.iter().all(|item| {
            matches!(item, Node::Map(_)) && item.get("name").and_then(Node::as_str).is_some()
        })
}

/// Puts `item` into sequence `list`: in place of the item of the same name if there is one
/// and it does not already hold `item` (one that does is left as it is, with whatever others
/// added to it), else at `at` (clamped to the end). Inserting twice is inserting once.
pub fn upsert(list: &mut Vec<Node>, item: Node, at: usize) {
    let name = item.get("name").and_then(Node::as_str).map(str::to_owned);
    match name.and_then(|name| position_by_name(list, &name)) {
        Some(index) if list[index].holds(&item) => {}
        Some(index) => list[index] = item,
        None => list.insert(at.min(list.len()), item),
    }
}

/// Builds a mapping from `(key, value)` pairs, in that order.
pub fn map_of<const N: usize>(entries: [(&str, Node); N]) -> Node {
    Node::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Node::string(k), v))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: &str) -> Node {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
    }

    fn holds(have: &str, wanted: &str) -> bool {
        node(have).holds(&node(wanted))
    }

    #[test]
    fn what_others_add_still_holds_what_readygate_changes_does_not() {
        let wait = r#"{"name":"w","command":["wait","a"],"volumeMounts":[{"name":"s","mountPath":"/s"}],"securityContext":{"readOnlyRootFilesystem":true}}"#;
        assert!(holds(wait, wait));
        // Keys added anywhere, named items added, keys in another order.
        assert!(holds(
            r#"{"securityContext":{"seccompProfile":{"type":"RuntimeDefault"},"readOnlyRootFilesystem":true},"imagePullPolicy":"IfNotPresent","command":["wait","a"],"name":"w","volumeMounts":[{"name":"token","readOnly":true},{"mountPath":"/s","name":"s"}]}"#,
            wait
        ));
        // A changed command, a command with one more or one less item, a mount gone, a
        // changed value, a key gone.
        for have in [
            r#"{"name":"w","command":["wait","b"],"volumeMounts":[{"name":"s","mountPath":"/s"}],"securityContext":{"readOnlyRootFilesystem":true}}"#,
            r#"{"name":"w","command":["wait","a","b"],"volumeMounts":[{"name":"s","mountPath":"/s"}],"securityContext":{"readOnlyRootFilesystem":true}}"#,
            r#"{"name":"w","command":["wait"],"volumeMounts":[{"name":"s","mountPath":"/s"}],"securityContext":{"readOnlyRootFilesystem":true}}"#,
            r#"{"name":"w","command":["wait","a"],"volumeMounts":[{"name":"t","mountPath":"/s"}],"securityContext":{"readOnlyRootFilesystem":true}}"#,
            r#"{"name":"w","command":["wait","a"],"volumeMounts":[{"name":"s","mountPath":"/s"}],"securityContext":{"readOnlyRootFilesystem":false}}"#,
            r#"{"name":"w","command":["wait","a"],"volumeMounts":[{"name":"s","mountPath":"/s"}]}"#,
        ] {
            assert!(!holds(have, wait), "{have}");
        }
        // Scalars by value: a plain YAML string is the quoted one, a number is not a string.
        assert!(Node::plain("10m").holds(&Node::string("10m")));
        assert!(Node::plain("yes").holds(&Node::plain("true")));
        assert!(!Node::string("1").holds(&Node::plain("1")));
        assert!(!holds("null", "{}"));
        // An empty list holds only an empty list; unnamed items go by position.
        assert!(holds("[]", "[]"));
        assert!(!holds(r#"[{"name":"a"}]"#, "[]"));
        assert!(holds(r#"[{"k":1,"x":2}]"#, r#"[{"k":1}]"#));
        assert!(!holds(r#"[{"k":1},{"k":2}]"#, r#"[{"k":1}]"#));
    }
}
