//! `k8s://job/NAME`: ready when the Job is `Complete`; a Job that has `Failed` (or is about to,
//! `FailureTarget`) never will be, so the wait ends at once.

use serde::Deserialize;

use super::object::{nullable, parse, true_condition, why, Condition};
use super::request::{get, Query};
use super::Cluster;
use crate::engine::Miss;
use crate::error::Failure;

/// The parts of a batch/v1 Job that say whether it is done.
#[derive(Deserialize)]
struct Job {
    #[serde(default)]
    spec: Spec,
    #[serde(default)]
    status: Status,
}

#[derive(Default, Deserialize)]
struct Spec {
    /// A suspended Job starts no pod until resumed.
    #[serde(default)]
    suspend: bool,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Status {
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<Condition>,
    active: u32,
    succeeded: u32,
    failed: u32,
}

/// One attempt: GET the Job and judge it.
pub async fn check(cluster: &Cluster, namespace: &str, name: &str) -> Result<(), Miss<Failure>> {
    let query = Query::get(("batch", "v1", "jobs"), namespace, name);
    match get(cluster, &query).await? {
        Some(body) => judge(&parse(&body)?),
        None => Err(Miss::NotYet(Failure::Protocol(format!(
            "no job {name} in {namespace} (yet)"
        )))),
    }
}

fn judge(job: &Job) -> Result<(), Miss<Failure>> {
    let conditions = &job.status.conditions;
    if true_condition(conditions, "Complete").is_some() {
        return Ok(());
    }
    let failed = true_condition(conditions, "Failed")
        .or_else(|| true_condition(conditions, "FailureTarget"));
    if let Some(failed) = failed {
        return Err(Miss::Never(Failure::Protocol(format!(
            "job failed: {}",
            why(failed)
        ))));
    }
    let status = &job.status;
    let (active, succeeded, failed) = (status.active, status.succeeded, status.failed);
    Err(Miss::NotYet(match job.spec.suspend {
        true => "job suspended".into(),
        false => Failure::Protocol(format!(
            "job not complete: {active} active, {succeeded} succeeded, {failed} failed"
        )),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(json: &str) -> Result<(), Miss<Failure>> {
        judge(&parse(json.as_bytes()).unwrap())
    }

    #[test]
    fn complete_failed_and_running() {
        let complete = r#"{"kind":"Job","spec":{"suspend":false},"status":{"succeeded":1,
            "conditions":[{"type":"SuccessCriteriaMet","status":"True"},
                          {"type":"Complete","status":"True","lastProbeTime":null}]}}"#;
        assert_eq!(verdict(complete), Ok(()));
        let failed = r#"{"status":{"failed":4,"conditions":[{"type":"Failed","status":"True",
            "reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"}]}}"#;
        assert_eq!(
            verdict(failed),
            Err(Miss::Never(
                "job failed: BackoffLimitExceeded: Job has reached the specified backoff limit"
                    .into()
            ))
        );
        assert_eq!(
            verdict(r#"{"status":{"active":1}}"#),
            Err(Miss::NotYet(
                "job not complete: 1 active, 0 succeeded, 0 failed".into()
            ))
        );
        assert_eq!(
            verdict(r#"{"spec":{"suspend":true},"status":{"conditions":null}}"#),
            Err(Miss::NotYet("job suspended".into()))
        );
        let not_yet = r#"{"status":{"conditions":[{"type":"Complete","status":"False"}]}}"#;
        assert!(matches!(verdict(not_yet), Err(Miss::NotYet(_))));
    }
}
