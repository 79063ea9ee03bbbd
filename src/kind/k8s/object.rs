//! What the judges share: the shape of an object and a list, conditions, JSON reading, and
//! server text made short.

use std::marker::PhantomData;

use serde::de::{DeserializeOwned, Error, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::error::Failure;

/// An object as the API sends it, read as far as a kind's `Spec` and `Status` need; a part
/// left out of the answer reads as its default.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct ApiObject<Spec, Status> {
    pub metadata: Metadata,
    pub spec: Spec,
    pub status: Status,
}

/// What is read of an object's `metadata`.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct Metadata {
    pub name: String,
    /// The spec's version; `status.observedGeneration` says which one the controller has seen.
    pub generation: i64,
}

/// A list answer (`PodList`, `EndpointSliceList`); its `items` may be `null`.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de>")]
pub struct List<T> {
    #[serde(default)]
    pub metadata: ListMetadata,
    #[serde(default, deserialize_with = "items")]
    pub items: Vec<T>,
}

/// What is read of a list's `metadata`.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ListMetadata {
    /// Where a watch of the list starts.
    pub resource_version: String,
}

/// Most items of a list kept: a real list this long is past the answer's size cap anyway.
pub const MAX_ITEMS: usize = 1000;
/// Most conditions of an object kept: real objects have a handful.
pub const MAX_CONDITIONS: usize = 32;
/// Starts the message of a list refused for its length (see [`parse`]).
const TOO_LONG: &str = "too large: more than";

/// One entry of `status.conditions`, as every kind here has them.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct StatusCondition {
    /// `Complete`, `Ready`, `Available`…
    #[serde(rename = "type")]
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase word saying why, e.g. `BackoffLimitExceeded`.
    pub reason: String,
    /// A sentence saying why.
    pub message: String,
    /// The generation the condition was set for, where the controller says.
    #[serde(rename = "observedGeneration")]
    pub observed_generation: Option<i64>,
}

/// The condition of this type, if it is `True`.
pub fn true_condition<'a>(
    conditions: &'a [StatusCondition],
    kind: &str,
) -> Option<&'a StatusCondition> {
    conditions
        .iter()
        .find(|c| c.kind == kind && c.status == "True")
}

/// `Failure: message` of a condition, or what there is of them.
pub fn why(condition: &StatusCondition) -> String {
    match (clip(&condition.reason), clip(&condition.message)) {
        (reason, message) if reason.is_empty() => message,
        (reason, message) if message.is_empty() => reason,
        (reason, message) => format!("{reason}: {message}"),
    }
}

/// Reads an answer's JSON into `T`; fields readygate does not use are skipped unread.
pub fn parse<T: DeserializeOwned>(body: impl AsRef<[u8]>) -> Result<T, Failure> {
    serde_json::from_slice(body.as_ref()).map_err(|e| {
        let message = e.to_string();
        match message.strip_prefix("too large: ") {
            // The position says nothing to a person; the list's length does.
            Some(too_long) if message.starts_with(TOO_LONG) => {
                let too_long = too_long.split(" at line ").next().unwrap_or(too_long);
                format!("the API server's answer is too large: {too_long}").into()
            }
            _ => format!("unexpected answer from the API server: {}", clip(&message)).into(),
        }
    })
}

/// `items` of a list, `null` read as empty, refused past [`MAX_ITEMS`].
pub fn items<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    d.deserialize_option(AtMost(MAX_ITEMS, "items in a list", PhantomData))
}

/// `status.conditions`, `null` read as empty, refused past [`MAX_CONDITIONS`].
pub fn conditions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<StatusCondition>, D::Error> {
    d.deserialize_option(AtMost(MAX_CONDITIONS, "conditions", PhantomData))
}

/// A list field the API may send as `null` (EndpointSlice's `endpoints`): read as empty, and
/// refused past [`MAX_ITEMS`].
pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    d.deserialize_option(AtMost(MAX_ITEMS, "entries in a list", PhantomData))
}

/// Reads a JSON array (or `null`) of at most `.0` entries. Past it the answer is refused while
/// it is read, so an answer of a million `{}` never becomes a million structs; what a kind does
/// not read is skipped with [`serde::de::IgnoredAny`], which keeps nothing.
struct AtMost<T>(usize, &'static str, PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for AtMost<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a list of at most {} {}", self.0, self.1)
    }

    fn visit_none<E: Error>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E: Error>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut kept = Vec::new();
        while let Some(entry) = seq.next_element()? {
            if kept.len() == self.0 {
                return Err(A::Error::custom(format!(
                    "{TOO_LONG} {} {}",
                    self.0, self.1
                )));
            }
            kept.push(entry);
        }
        Ok(kept)
    }
}

/// Server text (a reason, a name, a phase) escaped and cut to a length that fits a line.
pub fn clip(text: &str) -> String {
    crate::text::peer_text(text)
}
