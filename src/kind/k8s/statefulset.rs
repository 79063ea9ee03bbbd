//! `k8s://statefulset/NAME`: ready when rolled out, as `kubectl rollout status` judges: the spec
//! observed, every replica ready, and then the partition's pods updated (a `rollingUpdate`
//! given) or the update revision the current one. `OnDelete` has no rollout to wait for.

use serde::Deserialize;

use super::object::ApiObject;
use super::request::Resource;
use crate::error::Failure;

pub(super) const STATEFULSETS: Resource = Resource::namespaced("apps", "v1", "statefulsets");

/// An apps/v1 StatefulSet, read as far as says whether it is rolled out.
pub(super) type StatefulSet = ApiObject<Spec, Status>;

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Spec {
    /// Absent means 1, as the API defaults it.
    replicas: Option<i64>,
    update_strategy: Strategy,
}

/// `spec.updateStrategy` (also a DaemonSet's).
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Strategy {
    /// `RollingUpdate` (the API's default) or `OnDelete`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub rolling_update: Option<RollingUpdate>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct RollingUpdate {
    /// Pods with an ordinal below it keep the old revision.
    partition: Option<i64>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Status {
    observed_generation: i64,
    ready_replicas: i64,
    updated_replicas: i64,
    current_revision: String,
    update_revision: String,
}

/// `Never` unless the strategy is `RollingUpdate` (absent: the API's default), as kubectl ends
/// its wait with an error for any other; `kind` names the object in the reason.
pub(super) fn rolling(strategy: &Strategy, kind: &str) -> Result<(), Failure> {
    match strategy.kind.as_deref() {
        None | Some("RollingUpdate") => Ok(()),
        Some(other) => Err(Failure::Never(format!(
            "rollout status is only available for the RollingUpdate strategy, and this {kind}'s \
             is {}",
            super::object::clip(other)
        ))),
    }
}

pub(super) fn judge(set: &StatefulSet) -> Result<(), Failure> {
    rolling(&set.spec.update_strategy, "statefulset")?;
    let generation = set.metadata.generation;
    let status = &set.status;
    let observed = status.observed_generation;
    if observed == 0 || generation > observed {
        let seen = format!("generation {generation}, observed {observed}");
        return Err(format!("rollout not observed yet ({seen})").into());
    }
    let wanted = set.spec.replicas.unwrap_or(1);
    if status.ready_replicas < wanted {
        let ready = status.ready_replicas;
        return Err(format!("{ready} of {wanted} pods ready").into());
    }
    if let Some(rolling) = &set.spec.update_strategy.rolling_update {
        if let Some(partition) = rolling.partition {
            let due = wanted - partition;
            if status.updated_replicas < due {
                let updated = status.updated_replicas;
                return Err(format!(
                    "partitioned rollout: {updated} of {due} new pods updated (partition \
                     {partition})"
                )
                .into());
            }
        }
        return Ok(());
    }
    if status.update_revision != status.current_revision {
        return Err(format!(
            "rolling update: {} pods at revision {}, not yet all",
            status.updated_replicas,
            super::object::clip(&status.update_revision)
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::object::parse;
    use super::*;

    fn verdict(spec: &str, status: &str) -> Result<(), Failure> {
        let json = format!(r#"{{"metadata":{{"generation":2}},"spec":{spec},"status":{status}}}"#);
        judge(&parse(&json).unwrap())
    }

    #[test]
    fn rules_of_kubectl_rollout_status() {
        let rolling = r#"{"replicas":3,"updateStrategy":{"type":"RollingUpdate",
            "rollingUpdate":{"partition":0}}}"#;
        let done = r#"{"observedGeneration":2,"readyReplicas":3,"updatedReplicas":3}"#;
        assert_eq!(verdict(rolling, done), Ok(()));
        assert_eq!(
            verdict(rolling, r#"{"observedGeneration":1,"readyReplicas":3}"#),
            Err("rollout not observed yet (generation 2, observed 1)".into())
        );
        assert_eq!(
            verdict(rolling, r#"{"readyReplicas":3}"#),
            Err("rollout not observed yet (generation 2, observed 0)".into())
        );
        assert_eq!(
            verdict(
                rolling,
                r#"{"observedGeneration":2,"readyReplicas":2,"updatedReplicas":3}"#
            ),
            Err("2 of 3 pods ready".into())
        );
        assert_eq!(
            verdict(
                rolling,
                r#"{"observedGeneration":2,"readyReplicas":3,"updatedReplicas":2}"#
            ),
            Err("partitioned rollout: 2 of 3 new pods updated (partition 0)".into())
        );
        let partitioned = r#"{"replicas":3,"updateStrategy":{"rollingUpdate":{"partition":2}}}"#;
        let one = r#"{"observedGeneration":2,"readyReplicas":3,"updatedReplicas":1}"#;
        assert_eq!(verdict(partitioned, one), Ok(()));
        // No rollingUpdate: the revisions decide.
        let bare = r#"{"replicas":1,"updateStrategy":{"type":"RollingUpdate"}}"#;
        let moving = r#"{"observedGeneration":2,"readyReplicas":1,"updatedReplicas":0,
            "currentRevision":"db-1","updateRevision":"db-2"}"#;
        assert_eq!(
            verdict(bare, moving),
            Err("rolling update: 0 pods at revision db-2, not yet all".into())
        );
        let settled = r#"{"observedGeneration":2,"readyReplicas":1,"currentRevision":"db-2",
            "updateRevision":"db-2"}"#;
        assert_eq!(verdict(bare, settled), Ok(()));
        let on_delete = r#"{"updateStrategy":{"type":"OnDelete"}}"#;
        assert_eq!(
            verdict(on_delete, done),
            Err(Failure::Never(
                "rollout status is only available for the RollingUpdate strategy, and this \
                 statefulset's is OnDelete"
                    .into()
            ))
        );
    }
}
