//! What the judges share: the shape of an object and a list, conditions, JSON reading, and
//! server text made short.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::error::Failure;

/// An object as the API sends it, read as far as a kind's `Spec` and `Status` need; a part
/// left out of the answer reads as its default.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct Object<Spec, Status> {
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
    #[serde(default, deserialize_with = "nullable")]
    pub items: Vec<T>,
}

/// One entry of `status.conditions`, as every kind here has them.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Condition {
    /// `Complete`, `Ready`, `Available`…
    #[serde(rename = "type")]
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase word saying why, e.g. `BackoffLimitExceeded`.
    pub reason: String,
    /// A sentence saying why.
    pub message: String,
}

/// The condition of this type, if it is `True`.
pub fn true_condition<'a>(conditions: &'a [Condition], kind: &str) -> Option<&'a Condition> {
    conditions
        .iter()
        .find(|c| c.kind == kind && c.status == "True")
}

/// `Failure: message` of a condition, or what there is of them.
pub fn why(condition: &Condition) -> String {
    match (condition.reason.as_str(), condition.message.as_str()) {
        ("", message) => clip(message),
        (reason, "") => reason.to_string(),
        (reason, message) => format!("{reason}: {}", clip(message)),
    }
}

/// Reads an answer's JSON into `T`; fields readygate does not use are skipped unread.
pub fn parse<T: DeserializeOwned>(body: impl AsRef<[u8]>) -> Result<T, Failure> {
    serde_json::from_slice(body.as_ref())
        .map_err(|e| format!("unexpected answer from the API server: {e}").into())
}

/// A list field the API may send as `null` (EndpointSlice's `endpoints`): read as empty.
pub fn nullable<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// Server text cut to a length that fits a log line.
pub fn clip(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}
