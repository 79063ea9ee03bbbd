//! `k8s://daemonset/NAME`: ready when rolled out, as `kubectl rollout status` judges: the spec
//! observed, then every node's pod updated and available. `OnDelete` has no rollout to wait for.

use serde::Deserialize;

use super::object::ApiObject;
use super::request::Resource;
use super::statefulset::{rolling, Strategy};
use crate::error::Failure;

pub(super) const DAEMONSETS: Resource = Resource::namespaced("apps", "v1", "daemonsets");

/// An apps/v1 DaemonSet, read as far as says whether it is rolled out.
pub(super) type DaemonSet = ApiObject<Spec, Status>;

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Spec {
    update_strategy: Strategy,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Status {
    observed_generation: i64,
    desired_number_scheduled: i64,
    updated_number_scheduled: i64,
    number_available: i64,
}

pub(super) fn judge(set: &DaemonSet) -> Result<(), Failure> {
    rolling(&set.spec.update_strategy, "daemonset")?;
    let generation = set.metadata.generation;
    let status = &set.status;
    let (observed, desired) = (status.observed_generation, status.desired_number_scheduled);
    if generation > observed {
        let seen = format!("generation {generation}, observed {observed}");
        return Err(format!("rollout not observed yet ({seen})").into());
    }
    if status.updated_number_scheduled < desired {
        let updated = status.updated_number_scheduled;
        return Err(format!("{updated} of {desired} new pods updated").into());
    }
    if status.number_available < desired {
        let available = status.number_available;
        return Err(format!("{available} of {desired} updated pods available").into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::object::parse;
    use super::*;

    fn verdict(spec: &str, status: &str) -> Result<(), Failure> {
        let json = format!(r#"{{"metadata":{{"generation":4}},"spec":{spec},"status":{status}}}"#);
        judge(&parse(&json).unwrap())
    }

    #[test]
    fn rules_of_kubectl_rollout_status() {
        let rolling = r#"{"updateStrategy":{"type":"RollingUpdate"}}"#;
        let count = |observed: i64, updated: i64, available: i64| {
            format!(
                r#"{{"observedGeneration":{observed},"desiredNumberScheduled":3,
                "updatedNumberScheduled":{updated},"numberAvailable":{available}}}"#
            )
        };
        assert_eq!(verdict(rolling, &count(4, 3, 3)), Ok(()));
        assert_eq!(
            verdict(rolling, &count(3, 3, 3)),
            Err("rollout not observed yet (generation 4, observed 3)".into())
        );
        assert_eq!(
            verdict(rolling, &count(4, 2, 3)),
            Err("2 of 3 new pods updated".into())
        );
        assert_eq!(
            verdict(rolling, &count(4, 3, 1)),
            Err("1 of 3 updated pods available".into())
        );
        let none_desired = r#"{"observedGeneration":4}"#;
        assert_eq!(verdict("{}", none_desired), Ok(()));
        let on_delete = r#"{"updateStrategy":{"type":"OnDelete"}}"#;
        assert!(matches!(
            verdict(on_delete, &count(4, 3, 3)),
            Err(Failure::Never(_))
        ));
    }
}
