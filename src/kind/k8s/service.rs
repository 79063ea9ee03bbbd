//! `k8s://service/NAME`: ready when the Service's EndpointSlices (`kubernetes.io/service-name`)
//! hold at least one endpoint whose `conditions.ready` is not false (absent counts as ready,
//! as the API documents it).

use serde::Deserialize;

use super::list::{Item, Items, Listed};
use super::object::{nullable, Metadata};
use super::request::Resource;
use crate::error::Failure;

pub(super) const SLICES: Resource =
    Resource::namespaced("discovery.k8s.io", "v1", "endpointslices");

/// Why a list of them finds nothing (404).
pub(super) const UNSERVED: &str =
    "the API server does not serve discovery.k8s.io/v1 EndpointSlices";

#[derive(Deserialize)]
pub(super) struct Slice {
    #[serde(default)]
    metadata: Metadata,
    /// Sent as `null` when the slice is empty.
    #[serde(default, deserialize_with = "nullable")]
    endpoints: Vec<SliceEndpoint>,
}

#[derive(Deserialize)]
struct SliceEndpoint {
    #[serde(default)]
    conditions: Conditions,
}

#[derive(Default, Deserialize)]
struct Conditions {
    /// `None` (unknown) is to be read as ready.
    ready: Option<bool>,
}

impl Listed for Slice {
    fn name(&self) -> &str {
        &self.metadata.name
    }

    fn item(&self) -> Item {
        let ready = self.endpoints.iter();
        let ready = ready.filter(|endpoint| endpoint.conditions.ready != Some(false));
        Item {
            ready: ready.count(),
            total: self.endpoints.len(),
            why: String::new(),
        }
    }
}

pub(super) fn judge(slices: &Items, namespace: &str, name: &str) -> Result<(), Failure> {
    if slices.values().any(|slice| slice.ready > 0) {
        return Ok(());
    }
    let total: usize = slices.values().map(|slice| slice.total).sum();
    Err(match (slices.len(), total) {
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
    use super::super::list::read;
    use super::*;

    #[test]
    fn a_ready_endpoint_in_any_slice_is_enough() {
        let one_of_two = br#"{"items":[{"metadata":{"name":"a"},"endpoints":[{"conditions":
            {"ready":false}}]}, {"metadata":{"name":"b"},"endpoints":[{"conditions":{"ready":true}}]}]}"#;
        let (_, slices) = read::<Slice>(one_of_two).unwrap();
        assert_eq!(judge(&slices, "ns", "db"), Ok(()));
    }
}
