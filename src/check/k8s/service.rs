//! `k8s://service/NAME`: ready when the Service's EndpointSlices (`kubernetes.io/service-name`)
//! hold at least one endpoint whose `conditions.ready` is not false (absent counts as ready,
//! as the API documents it).

use serde::Deserialize;

use super::object::{nullable, parse};
use super::request::{get, Query};
use super::Cluster;
use crate::engine::Miss;
use crate::error::Failure;

/// A discovery.k8s.io/v1 EndpointSliceList.
#[derive(Deserialize)]
struct SliceList {
    #[serde(default, deserialize_with = "nullable")]
    items: Vec<Slice>,
}

#[derive(Deserialize)]
struct Slice {
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

/// One attempt: list the Service's EndpointSlices and judge them.
pub async fn check(cluster: &Cluster, namespace: &str, name: &str) -> Result<(), Miss<Failure>> {
    let selector = format!("kubernetes.io/service-name={name}");
    let query = Query::list(
        ("discovery.k8s.io", "v1", "endpointslices"),
        namespace,
        &selector,
    );
    let body = get(cluster, &query).await?.ok_or_else(|| {
        Miss::NotYet("the API server does not serve discovery.k8s.io/v1 EndpointSlices".into())
    })?;
    judge(&parse(&body)?, namespace, name).map_err(Miss::NotYet)
}

fn judge(list: &SliceList, namespace: &str, name: &str) -> Result<(), Failure> {
    let endpoints = list.items.iter().flat_map(|slice| &slice.endpoints);
    let (mut total, mut ready) = (0, 0);
    for endpoint in endpoints {
        total += 1;
        ready += usize::from(endpoint.conditions.ready != Some(false));
    }
    match (list.items.len(), total, ready) {
        (_, _, 1..) => Ok(()),
        (0, _, _) => Err(Failure::Protocol(format!(
            "no EndpointSlice for service {name} in {namespace} (no such service yet, or one \
             without a selector)"
        ))),
        (_, 0, _) => Err(Failure::Protocol(format!("service {name} has no endpoint"))),
        (_, total, _) => Err(Failure::Protocol(format!(
            "service {name} has no ready endpoint ({total} not ready)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(json: &str) -> Result<(), Failure> {
        judge(&parse(json.as_bytes()).unwrap(), "ns", "db")
    }

    #[test]
    fn ready_unknown_and_unready_endpoints() {
        assert!(verdict(r#"{"items":[]}"#)
            .unwrap_err()
            .to_string()
            .starts_with("no EndpointSlice for service db in ns"));
        assert_eq!(
            verdict(r#"{"items":[{"endpoints":null}]}"#),
            Err("service db has no endpoint".into())
        );
        let unready = r#"{"items":[{"endpoints":[{"addresses":["10.0.0.1"],
            "conditions":{"ready":false,"serving":true}}]}]}"#;
        assert_eq!(
            verdict(unready),
            Err("service db has no ready endpoint (1 not ready)".into())
        );
        let unknown = r#"{"items":[{"endpoints":[{"addresses":["10.0.0.1"],"conditions":{}}]}]}"#;
        assert_eq!(verdict(unknown), Ok(()));
        let one_of_two = r#"{"items":[{"endpoints":[{"conditions":{"ready":false}}]},
            {"endpoints":[{"conditions":{"ready":true}}]}]}"#;
        assert_eq!(verdict(one_of_two), Ok(()));
    }
}
