//! `k8s://statefulset/`, `k8s://daemonset/` and `k8s://TYPE.VERSION.GROUP/NAME` against the
//! stand-in API server: rollouts as `kubectl rollout status` judges them, conditions and JSON
//! paths as `kubectl wait --for` does, discovery mapping a type to its resource (custom,
//! cluster-scoped, installed late), and each watched.

use serde_json::{json, Value};

use crate::support::kube::{ApiServer, OWN_NAMESPACE};
use crate::support::run::RunExt;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";

/// `wait -t 20s` with quick retries, then `target`.
fn wait_args(target: &str) -> [&str; 8] {
    [
        "wait",
        "-t",
        "20s",
        "--interval",
        "20ms",
        "--max-interval",
        "100ms",
        target,
    ]
}

/// An apps/v1 StatefulSet of 3 replicas at generation 2, with this strategy and status.
fn statefulset(strategy: Value, status: Value) -> Value {
    json!({"kind": "StatefulSet", "apiVersion": "apps/v1",
        "metadata": {"name": "db", "namespace": OWN_NAMESPACE, "generation": 2,
            "uid": "0c7e5a2b-6f0d-4c1e-9e8a-2b4d7f1a3c55", "labels": {"app": "db"}},
        "spec": {"replicas": 3, "serviceName": "db", "updateStrategy": strategy,
            "selector": {"matchLabels": {"app": "db"}}, "podManagementPolicy": "OrderedReady"},
        "status": status})
}

/// An apps/v1 DaemonSet at generation 4 wanting 3 pods, with this strategy and counts.
fn daemonset(strategy: &str, observed: u32, updated: u32, available: u32) -> Value {
    json!({"kind": "DaemonSet", "apiVersion": "apps/v1",
        "metadata": {"name": "agent", "namespace": OWN_NAMESPACE, "generation": 4,
            "uid": "7d1f3e9a-2c4b-4d8e-a1f6-5b3c9e7d2a14"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"type": strategy}, "revisionHistoryLimit": 10},
        "status": {"observedGeneration": observed, "currentNumberScheduled": 3,
            "desiredNumberScheduled": 3, "numberMisscheduled": 0, "numberReady": available,
            "updatedNumberScheduled": updated, "numberAvailable": available}})
}

#[test]
fn a_statefulset_is_ready_when_rolled_out_as_kubectl_judges() {
    let api = ApiServer::start(TOKEN);
    let target = "k8s://statefulset/db";
    let rolling = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}});
    let status = |observed: u32, ready: u32, updated: u32| {
        json!({"observedGeneration": observed, "replicas": 3, "readyReplicas": ready,
            "currentReplicas": 3, "updatedReplicas": updated, "availableReplicas": ready,
            "currentRevision": "db-6d4f8b7c5", "updateRevision": "db-6d4f8b7c5"})
    };
    for (status, reason) in [
        (
            status(1, 3, 3),
            "rollout not observed yet (generation 2, observed 1)",
        ),
        (status(2, 2, 3), "2 of 3 pods ready"),
        (
            status(2, 3, 1),
            "partitioned rollout: 1 of 3 new pods updated (partition 0)",
        ),
    ] {
        api.put(statefulset(rolling.clone(), status));
        api.readygate(["probe", target])
            .outcome()
            .expect_code(1)
            .expect_stdout(&format!("k8s://statefulset/db: {reason}"));
    }
    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(before + 2);
    api.put(statefulset(rolling, status(2, 3, 3)));
    crate::support::run::finish(child, started).expect_code(0);
    assert!(api.seen()[before..].iter().all(
        |s| s.path == "/apis/apps/v1/namespaces/shop/statefulsets/db"
            || s.path.starts_with(
                "/apis/apps/v1/namespaces/shop/statefulsets?watch=1&fieldSelector=metadata.name%3Ddb&"
            )
    ), "{:?}", api.seen());
    // OnDelete has no rollout: kubectl's wait ends with an error, readygate's at once.
    api.put(statefulset(json!({"type": "OnDelete"}), status(2, 3, 3)));
    api.readygate(wait_args(target))
        .outcome()
        .expect_code(1)
        .expect_stderr(
            "only available for the RollingUpdate strategy, and this statefulset's is OnDelete",
        );
}

#[test]
fn a_daemonset_is_ready_when_every_pod_is_updated_and_available() {
    let api = ApiServer::start(TOKEN);
    let target = "k8s://daemonset/agent";
    for (set, reason) in [
        (
            daemonset("RollingUpdate", 3, 3, 3),
            "rollout not observed yet (generation 4, observed 3)",
        ),
        (
            daemonset("RollingUpdate", 4, 2, 3),
            "2 of 3 new pods updated",
        ),
        (
            daemonset("RollingUpdate", 4, 3, 1),
            "1 of 3 updated pods available",
        ),
        (
            daemonset("OnDelete", 4, 3, 3),
            "this daemonset's is OnDelete",
        ),
    ] {
        api.put(set);
        api.readygate(["probe", target])
            .outcome()
            .expect_code(1)
            .expect_stdout(reason);
    }
    api.put(daemonset("RollingUpdate", 4, 2, 2));
    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(before + 2);
    api.put(daemonset("RollingUpdate", 4, 3, 3));
    crate::support::run::finish(child, started).expect_code(0);
    assert!(api.seen().iter().any(|s| s
        .path
        .starts_with("/apis/apps/v1/namespaces/shop/daemonsets?watch=1&")));
}

/// A `widgets.example.com/v1` Widget in the own namespace with these conditions and phase.
fn widget(generation: u32, conditions: Value, phase: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": OWN_NAMESPACE, "generation": generation,
            "uid": "3e9c1d7f-5a2b-4e8c-9f1d-6b7a2c4e8d30"},
        "spec": {"size": 3},
        "status": {"phase": phase, "observedGeneration": generation, "conditions": conditions}})
}

fn condition(kind: &str, status: &str, reason: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": format!("{kind} is {status}"),
        "lastTransitionTime": "2026-12-01T10:00:00Z"})
}

#[test]
fn a_custom_resource_is_ready_when_its_condition_has_the_status_asked_for() {
    let api = ApiServer::start(TOKEN);
    api.discovery("example.com/v1", &[("widgets", "widget", "Widget", true)]);
    let put = |generation: u32, conditions: Value| {
        api.put_as(
            "/apis/example.com/v1",
            "widgets",
            widget(generation, conditions, "Pending"),
        )
    };
    put(1, json!([condition("Ready", "False", "Provisioning")]));
    api.readygate(["probe", "k8s://Widget.v1.example.com/w1?condition=Ready"])
        .outcome()
        .expect_code(1)
        .expect_stdout("condition Ready is False (waiting for True): Provisioning: Ready is False");
    // The status is compared case aside, and False can be waited for; plural and singular
    // names find the same resource.
    for target in [
        "k8s://widgets.v1.example.com/w1?condition=ready=false",
        "k8s://widget.v1.example.com/w1?condition=Ready=False",
    ] {
        api.readygate(["probe", target]).outcome().expect_code(0);
    }
    let before = api.seen().len();
    let (child, started) = api
        .readygate(wait_args("k8s://Widget.v1.example.com/w1?condition=Ready"))
        .spawn_captured();
    api.wait_for_requests(before + 3);
    put(1, json!([condition("Ready", "True", "Provisioned")]));
    crate::support::run::finish(child, started).expect_code(0);
    let paths: Vec<String> = api.seen()[before..]
        .iter()
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(
        paths[0], "/apis/example.com/v1",
        "discovery first: {paths:?}"
    );
    assert_eq!(paths[1], "/apis/example.com/v1/namespaces/shop/widgets/w1");
    assert!(
        paths[2].starts_with(
            "/apis/example.com/v1/namespaces/shop/widgets?watch=1&fieldSelector=metadata.name%3Dw1&"
        ),
        "{paths:?}"
    );
    assert_eq!(paths.len(), 3, "the change came by the watch: {paths:?}");
    // A condition of an older generation than the object's does not count, as with kubectl.
    api.put_as(
        "/apis/example.com/v1",
        "widgets",
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": OWN_NAMESPACE, "generation": 3},
            "status": {"observedGeneration": 2, "conditions": [condition("Ready", "True", "Done")]}}),
    );
    api.readygate(["probe", "k8s://Widget.v1.example.com/w1?condition=Ready"])
        .outcome()
        .expect_code(1)
        .expect_stdout("condition Ready is of generation 2, the object is at 3");
}

#[test]
fn a_jsonpath_is_set_or_holds_the_value_asked_for() {
    let api = ApiServer::start(TOKEN);
    api.discovery("example.com/v1", &[("widgets", "widget", "Widget", true)]);
    api.put_as(
        "/apis/example.com/v1",
        "widgets",
        widget(1, json!([]), "Pending"),
    );
    let target = "k8s://Widget.v1.example.com/w1?jsonpath={.status.phase}=Running";
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("{.status.phase} is \"Pending\" (waiting for \"Running\")");
    api.readygate([
        "probe",
        "k8s://Widget.v1.example.com/w1?jsonpath=.spec.size=3",
    ])
    .outcome()
    .expect_code(0);
    api.readygate([
        "probe",
        "k8s://Widget.v1.example.com/w1?jsonpath=.status.endpoint",
    ])
    .outcome()
    .expect_code(1)
    .expect_stdout(".status.endpoint is not set yet");
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(api.seen().len() + 2);
    api.put_as(
        "/apis/example.com/v1",
        "widgets",
        widget(1, json!([]), "Running"),
    );
    crate::support::run::finish(child, started).expect_code(0);
    // A filter, as kubectl's JSONPath writes one, and a condition together with a path.
    api.put_as(
        "/apis/example.com/v1",
        "widgets",
        widget(1, json!([condition("Ready", "True", "Up")]), "Running"),
    );
    api.readygate([
        "probe",
        "k8s://Widget.v1.example.com/w1?jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}=Up&condition=Ready",
    ])
    .outcome()
    .expect_code(0);
}

#[test]
fn a_cluster_scoped_resource_and_one_installed_late() {
    let api = ApiServer::start(TOKEN);
    let target = "k8s://ClusterIssuer.v1.cert-manager.io/letsencrypt?condition=Ready";
    // No such API yet: not ready, in its own words, until the CRD is there.
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("the API server has no API cert-manager.io/v1 (yet)");
    api.discovery(
        "cert-manager.io/v1",
        &[("certificates", "certificate", "Certificate", true)],
    );
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("the API server has no type ClusterIssuer in cert-manager.io/v1 (yet)");
    api.discovery(
        "cert-manager.io/v1",
        &[("clusterissuers", "clusterissuer", "ClusterIssuer", false)],
    );
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("no ClusterIssuer letsencrypt (yet)");
    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(before + 3);
    api.put_as(
        "/apis/cert-manager.io/v1",
        "clusterissuers",
        json!({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer",
            "metadata": {"name": "letsencrypt", "generation": 1},
            "status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}]}}),
    );
    crate::support::run::finish(child, started).expect_code(0);
    let seen = api.seen();
    assert!(
        seen[before..]
            .iter()
            .all(|s| !s.path.contains("/namespaces/")),
        "{seen:?}"
    );
    assert!(seen[before..].iter().any(|s| s
        .path
        .starts_with("/apis/cert-manager.io/v1/clusterissuers?watch=1&")));
    // A refused GET names the grant: a ClusterRole's, no namespace.
    api.deny("get", "clusterissuers");
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout(
            "forbidden: get clusterissuers/letsencrypt — grant get on clusterissuers (apiGroup \
         \"cert-manager.io\") to the pod's service account",
        );
}
