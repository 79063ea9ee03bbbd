//! What mutating admission does to a pod with a built-in sidecar: a server-side dry run
//! (`dryRun=All`: admitted, never stored) of a pod CREATE in the user's namespace, and whether
//! the sidecar's `restartPolicy: Always` came back. If it did not, the mutating webhooks whose
//! rules match pod CREATE there are the suspects.

use std::collections::BTreeMap;

use hyper::Method;
use serde::Deserialize;
use serde_json::{json, Value};

use super::ask::{Answer, Asker};
use super::findings::{Admission, Suspect};

/// The dry-run pod's sidecar, found by this name in the answer.
const SIDECAR: &str = "sidecar";
/// The labels of the dry-run pod: what a webhook's `objectSelector` is matched against.
const POD_LABEL: (&str, &str) = ("app.kubernetes.io/name", "readygate-doctor");

/// The dry-run pod: a built-in sidecar and an app, shaped to pass the `restricted` Pod
/// Security Standard and a quota that demands requests and limits.
fn pod() -> Value {
    let container = |name: &str| {
        json!({
            "name": name,
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "1m", "memory": "8Mi"},
                          "limits": {"cpu": "10m", "memory": "16Mi"}},
            "securityContext": {"allowPrivilegeEscalation": false,
                                "capabilities": {"drop": ["ALL"]}},
        })
    };
    let mut sidecar = container(SIDECAR);
    sidecar["restartPolicy"] = json!("Always");
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "readygate-doctor-", "labels": {POD_LABEL.0: POD_LABEL.1}},
        "spec": {
            "securityContext": {"runAsNonRoot": true, "runAsUser": 65535,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [sidecar],
            "containers": [container("app")],
        },
    })
}

/// The dry run in `namespace`, and the suspects if the sidecar lost its restart policy.
pub async fn check(asker: &Asker<'_>, namespace: &str) -> Admission {
    let path = format!("/api/v1/namespaces/{namespace}/pods?dryRun=All");
    let body = pod().to_string().into_bytes();
    let (survived, note) = match asker.json(Method::POST, &path, Some(body)).await {
        Answer::Ok(answer) => match restart_policy(&answer) {
            Ok(Some(policy)) if policy == "Always" => (Some(true), None),
            Ok(Some(policy)) => {
                let policy = crate::text::peer_text(&policy);
                (
                    Some(false),
                    Some(format!("the sidecar came back with restartPolicy {policy}")),
                )
            }
            Ok(None) if has_sidecar(&answer) => (
                Some(false),
                Some("the sidecar came back without its restartPolicy".into()),
            ),
            Ok(None) => (
                Some(false),
                Some("the sidecar init container was removed".into()),
            ),
            Err(why) => (None, Some(why)),
        },
        Answer::Forbidden(message) if message.contains("cannot create resource") => {
            let who = &asker.cluster.who;
            let grant = format!("grant create on pods in namespace {namespace} to {who}");
            (
                None,
                Some(format!("the dry-run pod CREATE was refused: {grant}")),
            )
        }
        Answer::Forbidden(message) => (
            None,
            Some(format!("admission refused the dry-run pod: {message}")),
        ),
        Answer::NotFound => (None, Some(format!("no namespace {namespace}"))),
        Answer::Failed(why) => (None, Some(format!("the dry-run pod CREATE failed: {why}"))),
    };
    let (suspects, more) = match survived {
        Some(true) => (Vec::new(), None),
        _ => suspects(asker, namespace).await,
    };
    let note = match (note, more) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    Admission {
        namespace: namespace.to_string(),
        restart_policy_survived: survived,
        suspects,
        note,
    }
}

/// The sidecar's `restartPolicy` in the admitted pod.
fn restart_policy(answer: &[u8]) -> Result<Option<String>, String> {
    let pod: Value = serde_json::from_slice(answer)
        .map_err(|e| format!("unexpected answer to the dry-run pod CREATE: {e}"))?;
    let sidecar = sidecar(&pod);
    Ok(sidecar.and_then(|c| c["restartPolicy"].as_str().map(str::to_string)))
}

fn has_sidecar(answer: &[u8]) -> bool {
    serde_json::from_slice::<Value>(answer).is_ok_and(|pod| sidecar(&pod).is_some())
}

fn sidecar(pod: &Value) -> Option<&Value> {
    let init = pod["spec"]["initContainers"].as_array()?;
    init.iter().find(|c| c["name"] == SIDECAR)
}

#[derive(Deserialize)]
struct Configurations {
    #[serde(default)]
    items: Vec<Configuration>,
}

#[derive(Deserialize)]
struct Configuration {
    metadata: Meta,
    #[serde(default)]
    webhooks: Vec<Webhook>,
}

#[derive(Default, Deserialize)]
struct Meta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Webhook {
    name: String,
    #[serde(default)]
    rules: Vec<Rule>,
    namespace_selector: Option<Selector>,
    object_selector: Option<Selector>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    operations: Vec<String>,
    #[serde(default)]
    api_groups: Vec<String>,
    #[serde(default)]
    api_versions: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
    scope: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Selector {
    #[serde(default)]
    match_labels: BTreeMap<String, String>,
    #[serde(default)]
    match_expressions: Vec<Requirement>,
}

#[derive(Deserialize)]
struct Requirement {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

/// The mutating webhooks whose rules match a pod CREATE in `namespace` and whose selectors
/// take the dry-run pod, with a note when that could not be told.
async fn suspects(asker: &Asker<'_>, namespace: &str) -> (Vec<Suspect>, Option<String>) {
    let who = &asker.cluster.who;
    let path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
    let configurations = match asker.json(Method::GET, path, None).await {
        Answer::Ok(body) => match serde_json::from_slice::<Configurations>(&body) {
            Ok(list) => list.items,
            Err(e) => return (Vec::new(), Some(format!("unexpected webhook list: {e}"))),
        },
        Answer::Forbidden(_) => {
            let grant = "grant list on mutatingwebhookconfigurations (apiGroup \
                         \"admissionregistration.k8s.io\")";
            return (
                Vec::new(),
                Some(format!(
                    "the webhooks could not be listed: {grant} to {who}"
                )),
            );
        }
        Answer::NotFound => return (Vec::new(), None),
        Answer::Failed(why) => return (Vec::new(), Some(format!("listing webhooks: {why}"))),
    };
    let ns_path = format!("/api/v1/namespaces/{namespace}");
    let (labels, note) = match asker.json(Method::GET, &ns_path, None).await {
        Answer::Ok(body) => match serde_json::from_slice::<Configuration>(&body) {
            Ok(ns) => (Some(ns.metadata.labels), None),
            Err(_) => (None, Some("unexpected namespace object".to_string())),
        },
        Answer::Forbidden(_) => {
            let grant = format!("grant get on namespaces to {who}");
            let why = format!("namespace selectors not applied: {grant}");
            (None, Some(why))
        }
        _ => (
            None,
            Some("namespace selectors not applied: no namespace object".into()),
        ),
    };
    let pod = BTreeMap::from([(POD_LABEL.0.to_string(), POD_LABEL.1.to_string())]);
    let mut suspects = Vec::new();
    for configuration in configurations {
        for webhook in configuration.webhooks {
            let in_namespace = match (&webhook.namespace_selector, &labels) {
                (Some(selector), Some(labels)) => selector.matches(labels),
                _ => true,
            };
            let takes_pod = webhook
                .object_selector
                .as_ref()
                .map_or(true, |selector| selector.matches(&pod));
            if in_namespace && takes_pod && webhook.rules.iter().any(Rule::pod_create) {
                suspects.push(Suspect {
                    configuration: configuration.metadata.name.clone(),
                    webhook: webhook.name,
                });
            }
        }
    }
    (suspects, note)
}

impl Rule {
    /// Whether the rule takes a `v1` pod CREATE (a namespaced resource).
    fn pod_create(&self) -> bool {
        let any =
            |list: &[String], wanted: &[&str]| list.iter().any(|v| wanted.contains(&v.as_str()));
        any(&self.operations, &["CREATE", "*"])
            && any(&self.api_groups, &["", "*"])
            && any(&self.api_versions, &["v1", "*"])
            && any(&self.resources, &["pods", "*", "*/*"])
            && matches!(self.scope.as_deref(), None | Some("*") | Some("Namespaced"))
    }
}

impl Selector {
    /// A label selector's verdict on `labels`; an empty one takes everything.
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let labelled = self
            .match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v));
        labelled
            && self.match_expressions.iter().all(|r| {
                let value = labels.get(&r.key);
                match r.operator.as_str() {
                    "In" => value.is_some_and(|v| r.values.contains(v)),
                    "NotIn" => value.map_or(true, |v| !r.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    // An operator the API server would not accept: take the webhook as matching.
                    _ => true,
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_rules_match_as_the_api_server_does() {
        let labels = BTreeMap::from([("env".to_string(), "prod".to_string())]);
        let selector: Selector = serde_json::from_value(json!({
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]},
                                 {"key": "skip", "operator": "DoesNotExist"}]
        }))
        .unwrap();
        assert!(selector.matches(&labels));
        let not: Selector = serde_json::from_value(json!({
            "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]
        }))
        .unwrap();
        assert!(!not.matches(&labels));
        let rule: Rule = serde_json::from_value(json!({"operations": ["CREATE"],
            "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}))
        .unwrap();
        assert!(rule.pod_create());
        let update: Rule = serde_json::from_value(json!({"operations": ["UPDATE"],
            "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}))
        .unwrap();
        assert!(!update.pod_create());
    }
}
