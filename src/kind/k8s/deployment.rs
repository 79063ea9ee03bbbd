//! `k8s://deployment/NAME`: ready when the rollout is observed (`status.observedGeneration ≥
//! metadata.generation`), every replica is updated (`updatedReplicas == spec.replicas`) and the
//! Deployment is `Available`.

use serde::Deserialize;

use super::object::{conditions, true_condition, why, ApiObject, StatusCondition};
use super::request::Resource;
use crate::error::Failure;

pub(super) const DEPLOYMENTS: Resource = Resource::namespaced("apps", "v1", "deployments");

/// An apps/v1 Deployment, read as far as says whether it is rolled out.
pub(super) type Deployment = ApiObject<DeploymentSpec, DeploymentStatus>;

#[derive(Default, Deserialize)]
pub(super) struct DeploymentSpec {
    /// Absent means 1, as the API defaults it.
    replicas: Option<i32>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct DeploymentStatus {
    observed_generation: i64,
    updated_replicas: i32,
    #[serde(deserialize_with = "conditions")]
    conditions: Vec<StatusCondition>,
}

pub(super) fn judge(deployment: &Deployment) -> Result<(), Failure> {
    let generation = deployment.metadata.generation;
    let DeploymentStatus {
        observed_generation: observed,
        updated_replicas: updated,
        conditions,
    } = &deployment.status;
    if *observed < generation {
        let seen = format!("generation {generation}, observed {observed}");
        return Err(format!("rollout not observed yet ({seen})").into());
    }
    let wanted = deployment.spec.replicas.unwrap_or(1);
    if *updated != wanted {
        return Err(format!("{updated} of {wanted} replicas updated").into());
    }
    if true_condition(conditions, "Available").is_some() {
        return Ok(());
    }
    Err(match conditions.iter().find(|c| c.kind == "Available") {
        Some(condition) => format!("not available: {}", why(condition)).into(),
        None => "not available yet".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::object::parse;
    use super::*;

    fn verdict(json: &str) -> Result<(), Failure> {
        judge(&parse(json).unwrap())
    }

    #[test]
    fn generations_defaults_and_availability() {
        let default_one = r#"{"metadata":{"generation":1},"spec":{},"status":{"observedGeneration":1,
            "updatedReplicas":1,"conditions":[{"type":"Available","status":"True"}]}}"#;
        assert_eq!(verdict(default_one), Ok(()));
        let stale = r#"{"metadata":{"generation":3},"spec":{"replicas":1},
            "status":{"observedGeneration":2,"updatedReplicas":1}}"#;
        assert_eq!(
            verdict(stale),
            Err("rollout not observed yet (generation 3, observed 2)".into())
        );
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
