//! The webhook's second call (`reinvocationPolicy: IfNeeded`): the API server asks again once
//! its own plugins and other webhooks changed the pod readygate injected. That pod, with the
//! API server's defaults, the service account's volume and mount in every container and a
//! policy webhook's fields on readygate's own containers, is admitted with no patch and logged
//! `unchanged`; one whose wait-for annotation changed gets the new command and nothing else.

use base64::Engine;
use serde_json::{json, Value};

use crate::support::certs::Certs;
use crate::support::json_patch;
use crate::support::TempDir;
use crate::webhook::{request, response, review, start_with};

/// A pod asking for a gate on two targets (one with a password) and startup probes of both
/// kinds: the kubelet's own httpGet on `app`, readygate's installed probe on `cache`.
const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop","annotations":{"readygate.dev/wait-for":"postgres://app:hunter2@db:5432 tcp://cache:6379","readygate.dev/wait-timeout":"2m","readygate.dev/startup-probe.app":"http://127.0.0.1:8080/healthz","readygate.dev/startup-probe.cache":"redis://127.0.0.1:6379"}},"spec":{"containers":[{"name":"app","image":"registry.example.com/app:1.0","ports":[{"containerPort":8080}],"env":[{"name":"TOKEN","value":"s3cr3t-env"}]},{"name":"cache","image":"redis:7"}]}}"#;

/// The service account's volume, as the ServiceAccount admission plugin names it.
const TOKEN_VOLUME: &str = "kube-api-access-x7k2p";

/// The answer's patch to a Pod CREATE review of `pod`, decoded; `None` when there is none.
fn patch_for(port: u16, ca: &std::path::Path, pod: &Value) -> Option<Vec<u8>> {
    let body = review("Pod", "CREATE", &pod.to_string());
    let (status, body) = request(port, ca, "POST", "/mutate", body.as_bytes()).unwrap();
    assert_eq!(status, 200, "{body}");
    let answer = response(&body);
    assert_eq!(answer["allowed"], true, "{body}");
    let patch = answer.get("patch")?;
    assert_eq!(answer["patchType"], "JSONPatch", "{body}");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(patch.as_str().unwrap())
        .unwrap();
    Some(patch)
}

/// Sets `key` of `object` to `value` unless it is there, as defaulting does.
fn default(object: &mut Value, key: &str, value: Value) {
    if let Some(members) = object.as_object_mut() {
        members.entry(key).or_insert(value);
    }
}

/// What happens to `pod` between readygate's first answer and the second call: the API
/// server's defaults (pod, containers, probes, ports), the ServiceAccount plugin's volume and a
/// mount of it in every container, and a policy webhook's hardening of readygate's gate.
/// serde_json writes the keys sorted, not in readygate's order, as the API server writes
/// them in its types' order.
fn as_the_api_server_has_it(pod: &Value) -> Value {
    let mut pod = pod.clone();
    let spec = &mut pod["spec"];
    for (key, value) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("serviceAccountName", json!("default")),
        ("serviceAccount", json!("default")),
        ("securityContext", json!({})),
        ("terminationGracePeriodSeconds", json!(30)),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        ("priority", json!(0)),
        (
            "tolerations",
            json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300}]),
        ),
    ] {
        default(spec, key, value);
    }
    default(spec, "volumes", json!([]));
    spec["volumes"].as_array_mut().unwrap().push(json!({
        "name": TOKEN_VOLUME,
        "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
        ]}
    }));
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers {
            default(container, "imagePullPolicy", json!("IfNotPresent"));
            default(
                container,
                "terminationMessagePath",
                json!("/dev/termination-log"),
            );
            default(container, "terminationMessagePolicy", json!("File"));
            default(container, "resources", json!({}));
            default(container, "volumeMounts", json!([]));
            container["volumeMounts"]
                .as_array_mut()
                .unwrap()
                .push(json!({
                    "name": TOKEN_VOLUME, "readOnly": true,
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"
                }));
            let ports = container.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten() {
                default(port, "protocol", json!("TCP"));
            }
            for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
                let Some(probe) = container.get_mut(probe) else {
                    continue;
                };
                default(probe, "timeoutSeconds", json!(1));
                default(probe, "periodSeconds", json!(10));
                default(probe, "successThreshold", json!(1));
                default(probe, "failureThreshold", json!(3));
                if let Some(http) = probe.get_mut("httpGet") {
                    default(http, "scheme", json!("HTTP"));
                }
            }
            if container["name"] == "readygate-wait" {
                let security = &mut container["securityContext"];
                default(security, "runAsNonRoot", json!(true));
                default(
                    security,
                    "seccompProfile",
                    json!({"type": "RuntimeDefault"}),
                );
            }
        }
    }
    pod
}

/// The containers of both lists, by name.
fn containers(pod: &Value) -> Vec<(String, Value)> {
    ["initContainers", "containers"]
        .iter()
        .flat_map(|list| pod["spec"][list].as_array().cloned().unwrap_or_default())
        .map(|c| (c["name"].as_str().unwrap_or_default().to_string(), c))
        .collect()
}

#[test]
fn the_second_call_leaves_the_pod_as_it_finds_it() {
    let certs = Certs::localhost();
    let dir = TempDir::new();
    let sidecar = dir.join("proxy.yaml");
    std::fs::write(
        &sidecar,
        "name: proxy\nimage: envoy:1.31\ncommand: [envoy]\nports: [{containerPort: 15021}]\n",
    )
    .unwrap();
    let sidecar = sidecar.display().to_string();
    let universal = ["--sidecar", sidecar.as_str(), "--mode", "universal"];
    for options in [&[][..], &universal[..]] {
        let mut webhook = start_with(&certs, options, |_| {});
        let (port, ca) = (webhook.port, &certs.ca);
        let created: Value = serde_json::from_str(POD).unwrap();
        let first = patch_for(port, ca, &created).expect("the first call's patch");
        webhook.running.line("mutated shop/web");
        let injected = json_patch::apply(&created, &first);
        let names: Vec<String> = containers(&injected).into_iter().map(|(n, _)| n).collect();
        assert!(
            ["readygate-install", "readygate-wait"]
                .iter()
                .all(|name| names.iter().any(|n| n == name)),
            "{options:?}: {names:?}"
        );

        let admitted = as_the_api_server_has_it(&injected);
        let second = patch_for(port, ca, &admitted);
        assert_eq!(
            second.as_deref().map(String::from_utf8_lossy),
            None,
            "{options:?}: the second call patched the injected pod"
        );
        webhook.running.line("unchanged shop/web");

        // The annotation changed in between (another webhook's doing): the gate's command
        // follows it, and nothing else changes, what the others added included.
        let mut changed = admitted.clone();
        changed["metadata"]["annotations"]["readygate.dev/wait-for"] = json!("tcp://cache:6379");
        let patch = patch_for(port, ca, &changed).expect("a patch for the new targets");
        webhook.running.line("mutated shop/web");
        let patched = json_patch::apply(&changed, &patch);
        let wait = containers(&patched)
            .into_iter()
            .find(|(name, _)| name == "readygate-wait")
            .unwrap()
            .1;
        assert_eq!(
            wait["command"],
            json!(["/readygate", "wait", "--timeout", "2m", "tcp://cache:6379"]),
            "{options:?}: {wait}"
        );
        let others = |pod: &Value| -> Vec<(String, Value)> {
            (containers(pod).into_iter())
                .filter(|(name, _)| name != "readygate-wait")
                .collect()
        };
        assert_eq!(others(&patched), others(&admitted), "{options:?}");
        assert_eq!(patched["spec"]["volumes"], admitted["spec"]["volumes"]);
        let log = webhook.running.written();
        assert!(!log.contains("hunter2"), "the log shows a password:\n{log}");
    }
}
