//! `k8s://deployment/NAME`: ready when the rollout is observed (`status.observedGeneration ≥
//! metadata.generation`), every replica is updated (`updatedReplicas == spec.replicas`) and the
//! Deployment is `Available`.

use serde::Deserialize;

use super::object::{nullable, parse, true_condition, why, Condition};
use super::request::{get, Query};
use super::Cluster;
use crate::engine::Miss;
use crate::error::Failure;

/// The parts of an apps/v1 Deployment that say whether it is rolled out.
#[derive(Deserialize)]
struct Deployment {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    spec: Spec,
    #[serde(default)]
    status: Status,
}

#[derive(Default, Deserialize)]
struct Metadata {
    #[serde(default)]
    generation: i64,
}

#[derive(Default, Deserialize)]
struct Spec {
    /// Absent means 1, as the API defaults it.
    replicas: Option<i32>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Status {
    observed_generation: i64,
    updated_replicas: i32,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<Condition>,
}

/// One attempt: GET the Deployment and judge it.
pub async fn check(cluster: &Cluster, namespace: &str, name: &str) -> Result<(), Miss<Failure>> {
    let query = Query::get(("apps", "v1", "deployments"), namespace, name);
    match get(cluster, &query).await? {
        Some(body) => judge(&parse(&body)?).map_err(Miss::NotYet),
        None => Err(Miss::NotYet(Failure::Protocol(format!(
            "no deployment {name} in {namespace} (yet)"
        )))),
    }
}

fn judge(deployment: &Deployment) -> Result<(), Failure> {
    let (status, generation) = (&deployment.status, deployment.metadata.generation);
    if status.observed_generation < generation {
        return Err(Failure::Protocol(format!(
            "rollout not observed yet (generation {generation}, observed {})",
            status.observed_generation
        )));
    }
    let wanted = deployment.spec.replicas.unwrap_or(1);
    if status.updated_replicas != wanted {
        return Err(Failure::Protocol(format!(
            "{} of {wanted} replicas updated",
            status.updated_replicas
        )));
    }
    if true_condition(&status.conditions, "Available").is_none() {
        let available = status.conditions.iter().find(|c| c.kind == "Available");
        return Err(match available {
            Some(condition) => Failure::Protocol(format!("not available: {}", why(condition))),
            None => "not available yet".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(json: &str) -> Result<(), Failure> {
        judge(&parse(json.as_bytes()).unwrap())
    }

    #[test]
    fn rolled_out_and_not() {
        let available =
            r#"{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}"#;
        let ok = format!(
            r#"{{"metadata":{{"generation":2}},"spec":{{"replicas":3}},
               "status":{{"observedGeneration":2,"updatedReplicas":3,"conditions":[{available}]}}}}"#
        );
        assert_eq!(verdict(&ok), Ok(()));
        let default_one = format!(
            r#"{{"metadata":{{"generation":1}},"spec":{{}},
               "status":{{"observedGeneration":1,"updatedReplicas":1,"conditions":[{available}]}}}}"#
        );
        assert_eq!(verdict(&default_one), Ok(()));
        let stale = r#"{"metadata":{"generation":3},"spec":{"replicas":1},
            "status":{"observedGeneration":2,"updatedReplicas":1}}"#;
        assert_eq!(
            verdict(stale),
            Err("rollout not observed yet (generation 3, observed 2)".into())
        );
        let updating = r#"{"metadata":{"generation":1},"spec":{"replicas":3},
            "status":{"observedGeneration":1,"updatedReplicas":1}}"#;
        assert_eq!(verdict(updating), Err("1 of 3 replicas updated".into()));
        let unavailable = r#"{"metadata":{"generation":1},"spec":{"replicas":1},
            "status":{"observedGeneration":1,"updatedReplicas":1,"conditions":[{"type":
            "Available","status":"False","reason":"MinimumReplicasUnavailable","message":
            "Deployment does not have minimum availability."}]}}"#;
        assert_eq!(
            verdict(unavailable),
            Err(
                "not available: MinimumReplicasUnavailable: Deployment does not have \
                 minimum availability."
                    .into()
            )
        );
        let zero = r#"{"metadata":{"generation":1},"spec":{"replicas":0},
            "status":{"observedGeneration":1,"conditions":[{"type":"Available","status":"True"}]}}"#;
        assert_eq!(verdict(zero), Ok(()));
    }
}
