//! `k8s://TYPE.VERSION[.GROUP]/NAME`: any object, custom resources included, ready as
//! `kubectl wait --for` judges it: a condition of the given type with the given status
//! (`condition=Ready`, `condition=Ready=False`), and a JSON path that is set, or holds a value
//! (`jsonpath={.status.phase}=Running`); given both, both.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::jsonpath::{shown, Found, JsonPath};
use super::object::{conditions, parse, why, ApiObject, StatusCondition};
use super::target::AnyObject;
use crate::error::Failure;

/// What a condition is judged by: the conditions and the generation the status is for.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Conditions {
    observed_generation: Option<i64>,
    #[serde(deserialize_with = "conditions")]
    conditions: Vec<StatusCondition>,
}

pub(super) fn judge(any: &AnyObject, body: &[u8]) -> Result<(), Failure> {
    if let Some((kind, status)) = &any.condition {
        condition(kind, status, &parse(body)?)?;
    }
    if let Some((path, value)) = &any.jsonpath {
        let object: &RawValue = serde_json::from_slice(body).map_err(|e| {
            let why = super::object::clip(&e.to_string());
            Failure::from(format!("unexpected answer from the API server: {why}"))
        })?;
        jsonpath(path, value.as_deref(), object)?;
    }
    Ok(())
}

/// The first condition whose type is `kind` (case aside) must have status `wanted` (case
/// aside), and be of the object's generation where it (or the status) says which it is of.
fn condition(
    kind: &str,
    wanted: &str,
    object: &ApiObject<IgnoredAny, Conditions>,
) -> Result<(), Failure> {
    let folded = kind.to_lowercase();
    let status = &object.status;
    let Some(found) = status
        .conditions
        .iter()
        .find(|c| c.kind.to_lowercase() == folded && !c.status.is_empty())
    else {
        return Err(format!("no {kind} condition yet").into());
    };
    let generation = object.metadata.generation;
    if let Some(observed) = found.observed_generation.or(status.observed_generation) {
        if observed < generation {
            return Err(format!(
                "condition {kind} is of generation {observed}, the object is at {generation}"
            )
            .into());
        }
    }
    if found.status.to_lowercase() == wanted.to_lowercase() {
        return Ok(());
    }
    let why = why(found);
    let colon = if why.is_empty() { "" } else { ": " };
    Err(format!(
        "condition {kind} is {} (waiting for {wanted}){colon}{why}",
        super::object::clip(&found.status)
    )
    .into())
}

/// `path` must lead to one value (equal to `wanted`, trimmed, if given): kubectl's rule.
fn jsonpath(path: &JsonPath, wanted: Option<&str>, object: &RawValue) -> Result<(), Failure> {
    let text = &path.text;
    let found = path.find(object).map_err(Failure::from)?;
    let why = match (found, wanted) {
        (Found::Missing, _) => format!("{text} is not set yet"),
        (Found::Many, _) => format!("{text} leads to more than one value"),
        (_, None) => return Ok(()),
        (Found::Nested, Some(_)) => {
            format!("{text} leads to an object or a list, which no value equals")
        }
        (Found::Scalar(value), Some(wanted)) if value.trim() == wanted.trim() => return Ok(()),
        (Found::Scalar(value), Some(wanted)) => {
            format!(
                "{text} is {} (waiting for {})",
                shown(&value),
                shown(wanted)
            )
        }
    };
    Err(why.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(condition: Option<(&str, &str)>, jsonpath: Option<(&str, Option<&str>)>) -> AnyObject {
        AnyObject {
            type_name: "Certificate".into(),
            version: "v1".into(),
            group: "cert-manager.io".into(),
            name: "web".into(),
            condition: condition.map(|(k, s)| (k.into(), s.into())),
            jsonpath: jsonpath.map(|(p, v)| (JsonPath::parse(p).unwrap(), v.map(str::to_string))),
        }
    }

    const CERT: &str = r#"{"metadata":{"name":"web","generation":2},"status":{
        "conditions":[{"type":"Ready","status":"False","reason":"Issuing","message":"Issuing a\ncertificate","observedGeneration":2},{"type":"Issuing","status":"True","observedGeneration":1}],
        "notAfter":"2027-01-01T00:00:00Z","revision":3}}"#;

    #[test]
    fn conditions_as_kubectl_wait_judges_them() {
        let judge =
            |kind: &str, status: &str| judge(&any(Some((kind, status)), None), CERT.as_bytes());
        assert_eq!(judge("Ready", "False"), Ok(()));
        assert_eq!(judge("ready", "false"), Ok(()));
        assert_eq!(
            judge("Ready", "True"),
            Err(
                "condition Ready is False (waiting for True): Issuing: Issuing a\\ncertificate"
                    .into()
            )
        );
        assert_eq!(
            judge("Issuing", "True"),
            Err("condition Issuing is of generation 1, the object is at 2".into())
        );
        assert_eq!(
            judge("Approved", "True"),
            Err("no Approved condition yet".into())
        );
    }

    #[test]
    fn jsonpaths_as_kubectl_wait_judges_them() {
        let judge = |path: &str, value: Option<&str>| {
            judge(&any(None, Some((path, value))), CERT.as_bytes())
        };
        assert_eq!(judge(".status.revision", Some("3")), Ok(()));
        assert_eq!(judge("{.status.notAfter}", None), Ok(()));
        assert_eq!(
            judge(".status.revision", Some("4")),
            Err(".status.revision is \"3\" (waiting for \"4\")".into())
        );
        assert_eq!(
            judge(".status.renewalTime", None),
            Err(".status.renewalTime is not set yet".into())
        );
        assert_eq!(
            judge(".status.conditions", Some("x")),
            Err(".status.conditions leads to an object or a list, which no value equals".into())
        );
        assert_eq!(judge(".status.conditions", None), Ok(()));
        let both = any(
            Some(("Ready", "False")),
            Some((".status.revision", Some("3"))),
        );
        assert_eq!(judge_both(&both), Ok(()));
    }

    fn judge_both(any: &AnyObject) -> Result<(), Failure> {
        judge(any, CERT.as_bytes())
    }
}
