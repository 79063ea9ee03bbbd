//! `k8s://service/NAME`: ready when the Service's EndpointSlices (`kubernetes.io/service-name`)
//! hold at least one endpoint whose `conditions.ready` is not false (absent counts as ready,
//! as the API documents it).

use serde::Deserialize;

use super::object::{nullable, List};
use super::request::Resource;
use crate::error::Failure;

pub(super) const SLICES: Resource = ("discovery.k8s.io", "v1", "endpointslices");

/// Why a list of them finds nothing (404).
pub(super) const UNSERVED: &str =
    "the API server does not serve discovery.k8s.io/v1 EndpointSlices";

#[derive(Deserialize)]
pub(super) struct Slice {
    /// Sent as `null` when the slice is empty.
    #[serde(default, deserialize_with = "nullable")]
    endpoints: Vec<Endpoint>,
}

#[derive(Deserialize)]
struct Endpoint {
    #[serde(default)]
    conditions: Conditions,
}

#[derive(Default, Deserialize)]
struct Conditions {
    /// `None` (unknown) is to be read as ready.
    ready: Option<bool>,
}

pub(super) fn judge(slices: &List<Slice>, namespace: &str, name: &str) -> Result<(), Failure> {
    let mut endpoints = slices.items.iter().flat_map(|slice| &slice.endpoints);
    let total = endpoints.clone().count();
    if endpoints.any(|endpoint| endpoint.conditions.ready != Some(false)) {
        return Ok(());
    }
    Err(match (slices.items.len(), total) {
        (0, _) => format!(
            "no EndpointSlice for service {name} in {namespace} (no such service yet, or one \
             without a selector)"
        ),
        (_, 0) => format!("service {name} has no endpoint"),
        (_, total) => format!("service {name} has no ready endpoint ({total} not ready)"),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::super::object::parse;
    use super::*;

    #[test]
    fn a_ready_endpoint_in_any_slice_is_enough() {
        let one_of_two = r#"{"items":[{"endpoints":[{"conditions":{"ready":false}}]},
            {"endpoints":[{"conditions":{"ready":true}}]}]}"#;
        assert_eq!(judge(&parse(one_of_two).unwrap(), "ns", "db"), Ok(()));
    }
}
