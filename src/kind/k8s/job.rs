//! `k8s://job/NAME`: ready when the Job is `Complete`; a Job that has `Failed` (or is about to,
//! `FailureTarget`) never will be, so the wait ends at once. A Job that says both has failed:
//! what depends on it must not start on a contradiction.

use serde::Deserialize;

use super::object::{conditions, true_condition, why, ApiObject, StatusCondition};
use super::request::Resource;
use crate::error::Failure;

pub(super) const JOBS: Resource = Resource::namespaced("batch", "v1", "jobs");

/// A batch/v1 Job, read as far as says whether it is done.
pub(super) type Job = ApiObject<JobSpec, JobStatus>;

#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct JobSpec {
    /// A suspended Job starts no pod until resumed.
    suspend: bool,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct JobStatus {
    #[serde(deserialize_with = "conditions")]
    conditions: Vec<StatusCondition>,
    active: u32,
    succeeded: u32,
    failed: u32,
}

pub(super) fn judge(job: &Job) -> Result<(), Failure> {
    let JobStatus {
        conditions,
        active,
        succeeded,
        failed,
    } = &job.status;
    let failure = true_condition(conditions, "Failed")
        .or_else(|| true_condition(conditions, "FailureTarget"));
    if let Some(failure) = failure {
        return Err(Failure::Never(format!("job failed: {}", why(failure))));
    }
    if true_condition(conditions, "Complete").is_some() {
        return Ok(());
    }
    Err(match job.spec.suspend {
        true => "job suspended".into(),
        false => {
            format!("job not complete: {active} active, {succeeded} succeeded, {failed} failed")
                .into()
        }
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
    fn null_conditions_and_a_complete_condition_not_true() {
        assert_eq!(
            verdict(r#"{"spec":{"suspend":true},"status":{"conditions":null}}"#),
            Err(Failure::Text("job suspended".into()))
        );
        let not_yet = r#"{"status":{"conditions":[{"type":"Complete","status":"False"}]}}"#;
        assert!(matches!(verdict(not_yet), Err(Failure::Text(_))));
    }

    #[test]
    fn a_failure_condition_wins_over_complete() {
        for failure in ["Failed", "FailureTarget"] {
            let both = format!(
                r#"{{"status":{{"conditions":[{{"type":"Complete","status":"True"}},
                   {{"type":"{failure}","status":"True","reason":"DeadlineExceeded"}}]}}}}"#
            );
            let failed = Failure::Never("job failed: DeadlineExceeded".into());
            assert_eq!(verdict(&both), Err(failed), "{failure}");
        }
    }

    /// The verdict on a running Job with these `(type, status)` conditions.
    fn with_conditions(conditions: &[(&str, &str)]) -> Result<(), Failure> {
        let conditions: Vec<String> = conditions
            .iter()
            .map(|(kind, status)| {
                format!(
                    r#"{{"type":"{kind}","status":"{status}","reason":"BackoffLimitExceeded",
                        "message":"Job has reached the specified backoff limit"}}"#
                )
            })
            .collect();
        let status = r#""active":1,"succeeded":0,"failed":7"#;
        verdict(&format!(
            r#"{{"status":{{{status},"conditions":[{}]}}}}"#,
            conditions.join(",")
        ))
    }

    #[test]
    fn a_failed_or_failing_job_is_never_ready() {
        let failed =
            "job failed: BackoffLimitExceeded: Job has reached the specified backoff limit";
        for conditions in [
            // Out of retries, pods gone: what the Job controller leaves at the end.
            &[("FailureTarget", "True"), ("Failed", "True")][..],
            // Out of retries, its pods still terminating: `Failed` comes only after them.
            &[("FailureTarget", "True")],
            &[("Failed", "True")],
            &[("Complete", "False"), ("FailureTarget", "True")],
        ] {
            let verdict = with_conditions(conditions);
            assert_eq!(
                verdict,
                Err(Failure::Never(failed.into())),
                "{conditions:?}"
            );
        }
    }

    #[test]
    fn conditions_that_are_not_true_leave_a_job_running() {
        let running = "job not complete: 1 active, 0 succeeded, 7 failed";
        for conditions in [
            &[][..],
            &[("Failed", "False")],
            &[("FailureTarget", "Unknown"), ("Failed", "False")],
            &[("Suspended", "False")],
        ] {
            let verdict = with_conditions(conditions);
            assert_eq!(
                verdict,
                Err(Failure::Text(running.into())),
                "{conditions:?}"
            );
        }
        assert_eq!(with_conditions(&[("Complete", "True")]), Ok(()));
    }
}
