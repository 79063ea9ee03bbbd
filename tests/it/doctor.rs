//! `readygate-cluster doctor` against the stand-in API server (support/kube.rs), reached from outside
//! a pod through a kubeconfig: a token, an exec credential plugin, client certificates, and
//! `kubectl proxy`; then every branch of the verdict (works everywhere, the affinity fix, the
//! universal pair, a webhook that strips `restartPolicy`, the API server without the gate),
//! the RBAC refusals that name their grant, and the exit statuses.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::support::kube::ApiServer;
use crate::support::run::readygate_cluster;
use crate::support::run::RunExt;
use crate::support::TempDir;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.ZG9jdG9yLXRva2Vu.c2lnbmF0dXJl";
const NODES: &str = "/api/v1/nodes?limit=100";

/// A metrics page with the gauge `on` or off, among lines of other metrics.
fn metrics(on: bool) -> String {
    let value = u8::from(on);
    format!(
        "# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage \
         and enablement of a k8s feature.\n# TYPE kubernetes_feature_enabled gauge\n\
         kubernetes_feature_enabled{{name=\"AnyVolumeDataSource\",stage=\"BETA\"}} 1\n\
         kubernetes_feature_enabled{{name=\"SidecarContainers\",stage=\"BETA\"}} {value}\n\
         apiserver_request_total{{code=\"200\"}} 4711\n"
    )
}

/// A node of this kubelet version, with `pool` as its `pool` label.
fn node(name: &str, kubelet: &str, pool: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"pool": pool}},
           "status": {"nodeInfo": {"kubeletVersion": kubelet}}})
}

/// A cluster of 1.34 whose two nodes have the gate on, no webhooks, and `nodes` listed.
fn cluster(api: &ApiServer, nodes: &[Value]) {
    api.route(
        "GET",
        "/version",
        200,
        json!({"gitVersion": "v1.34.1"}).to_string(),
    );
    api.route("GET", "/metrics", 200, metrics(true));
    let list = json!({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": nodes});
    api.route("GET", NODES, 200, list.to_string());
    for node in nodes {
        let name = node["metadata"]["name"].as_str().unwrap();
        api.route("GET", &proxy(name), 200, metrics(true));
    }
    let none = json!({"kind": "MutatingWebhookConfigurationList", "items": []});
    api.route("GET", WEBHOOKS, 200, none.to_string());
}

const WEBHOOKS: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

fn proxy(node: &str) -> String {
    format!("/api/v1/nodes/{node}/proxy/metrics")
}

/// A kubeconfig naming `server`, with `cluster` and `user` as the entries' fields.
fn kubeconfig(dir: &Path, server: &str, cluster: Value, user: Value) -> std::path::PathBuf {
    let mut cluster = cluster;
    cluster["server"] = json!(server);
    // JSON is YAML: the file is read as YAML all the same.
    let config = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "laptop",
        "contexts": [{"name": "laptop", "context": {"cluster": "k", "user": "me", "namespace": "shop"}}],
        "clusters": [{"name": "k", "cluster": cluster}],
        "users": [{"name": "me", "user": user}],
    });
    let file = dir.join("config");
    std::fs::write(&file, config.to_string()).unwrap();
    file
}

/// `readygate doctor ARGS --kubeconfig FILE`, outside any pod.
fn doctor(file: &Path, args: &[&str]) -> Command {
    let mut command = readygate_cluster(["doctor", "--kubeconfig"]);
    command
        .arg(file)
        .args(args)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBECONFIG");
    command
}

/// The stand-in reached with the token and its CA file.
fn with_token(api: &ApiServer, dir: &Path) -> std::path::PathBuf {
    let server = format!("https://{}", api.addr);
    let ca = json!({"certificate-authority": api.ca_file()});
    kubeconfig(dir, &server, ca, json!({"token": TOKEN}))
}

fn report(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_cluster_with_sidecars_everywhere_is_fine() {
    let api = ApiServer::start(TOKEN);
    cluster(
        &api,
        &[node("a", "v1.34.1", "x"), node("b", "v1.33.2", "x")],
    );
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    let out = doctor(&file, &[]).outcome();
    out.expect_code(0)
        .expect_stdout("API server  v1.34.1  built-in sidecars on (by metrics)")
        .expect_stdout("Admission   restartPolicy: Always survived a dry-run pod CREATE in shop")
        .expect_stdout("Verdict     works-everywhere");
    assert!(
        !out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN),
        "{out:#?}"
    );
    let seen = api.seen();
    assert!(seen
        .iter()
        .all(|s| s.authorization.as_deref() == Some(&*format!("Bearer {TOKEN}"))));
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    for path in [
        "/version",
        "/metrics",
        NODES,
        "/api/v1/nodes/a/proxy/metrics",
    ] {
        assert!(paths.contains(&path), "{paths:?}");
    }
    assert!(
        paths.contains(&"/api/v1/namespaces/shop/pods?dryRun=All"),
        "{paths:?}"
    );
    // Survived: no suspects are looked for.
    assert!(!paths.contains(&WEBHOOKS), "{paths:?}");

    let out = doctor(&file, &["--output", "json"]).outcome();
    out.expect_code(0);
    let report = report(&out.stdout);
    assert_eq!(report["verdict"], "works-everywhere");
    assert_eq!(report["status"], 0);
    assert_eq!(report["api_server"]["version"], "v1.34.1");
    assert_eq!(report["api_server"]["sidecars"], true);
    assert_eq!(report["nodes"][1]["name"], "b");
    assert_eq!(report["nodes"][1]["skew"], 1);
    assert_eq!(report["nodes"][1]["judged_by"], "metrics");
    assert_eq!(report["admission"]["restart_policy_survived"], true);
}

#[test]
fn refused_node_proxy_names_its_grant_and_old_nodes_get_the_affinity_fix() {
    let api = ApiServer::start(TOKEN);
    let nodes = [
        node("new-1", "v1.34.1", "fresh"),
        node("new-2", "v1.34.1", "fresh"),
        node("old-1", "v1.31.0", "legacy"),
    ];
    cluster(&api, &nodes);
    // The gate turned off on the old pool (a 1.31 kubelet may still do that).
    api.route("GET", &proxy("old-1"), 200, metrics(false));
    api.forbid("GET", &proxy("new-2"));
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    let out = doctor(&file, &["--node-label", "pool"]).outcome();
    out.expect_code(1)
        .expect_stdout(
            "new-2: /api/v1/nodes/new-2/proxy/metrics refused: grant get on nodes/proxy to user \
             \"me\" of context \"laptop\"; judged by version (1.33+",
        )
        .expect_stdout("Verdict     affinity")
        .expect_stdout("{key: pool, operator: In, values: [\"fresh\"]}")
        .expect_stdout("turn SidecarContainers on on the nodes in legacy");
    let out = doctor(&file, &["--node-label", "pool", "--output", "json"]).outcome();
    out.expect_code(1);
    let report = report(&out.stdout);
    assert_eq!(report["nodes"][1]["judged_by"], "version");
    assert_eq!(report["nodes"][2]["sidecars"], false);
    assert_eq!(report["groups"][0]["value"], "fresh");
    assert_eq!(report["groups"][1]["sidecars"], false);
}

#[test]
fn nodes_before_1_28_without_a_clean_label_get_the_universal_pair() {
    let api = ApiServer::start(TOKEN);
    cluster(
        &api,
        &[node("a", "v1.30.4", "x"), node("old", "v1.27.9", "x")],
    );
    // The node proxy of the loopback node, as a real API server answers it.
    let refusal = json!({"kind": "Status", "status": "Failure", "code": 500,
        "message": "error trying to reach service: address not allowed"});
    api.route("GET", &proxy("old"), 500, refusal.to_string());
    api.route(
        "GET",
        "/version",
        200,
        json!({"gitVersion": "v1.30.4"}).to_string(),
    );
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    let out = doctor(&file, &["--node-label", "pool"]).outcome();
    out.expect_code(1)
        .expect_stdout("address not allowed; judged by version (before 1.28")
        .expect_stdout("Verdict     universal-pair")
        .expect_stdout("readygate sidecar native|legacy");
}

#[test]
fn a_webhook_that_strips_restart_policy_is_named() {
    let api = ApiServer::start(TOKEN);
    cluster(&api, &[node("a", "v1.34.1", "x")]);
    api.admit_with(|mut pod| {
        pod["spec"]["initContainers"][0]
            .as_object_mut()
            .unwrap()
            .remove("restartPolicy");
        pod
    });
    let rule = |ops: &[&str]| json!([{"operations": ops, "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]);
    let webhooks = json!({"items": [
        {"metadata": {"name": "old-mesh"}, "webhooks": [
            {"name": "inject.old-mesh.io", "rules": rule(&["CREATE"]),
             "namespaceSelector": {"matchLabels": {"mesh": "on"}}},
            {"name": "updates.old-mesh.io", "rules": rule(&["UPDATE"])}]},
        {"metadata": {"name": "elsewhere"}, "webhooks": [
            {"name": "other.io", "rules": rule(&["*"]),
             "namespaceSelector": {"matchExpressions": [{"key": "mesh", "operator": "DoesNotExist"}]}}]},
    ]});
    api.route("GET", WEBHOOKS, 200, webhooks.to_string());
    let ns = json!({"metadata": {"name": "shop", "labels": {"mesh": "on"}}});
    api.route("GET", "/api/v1/namespaces/shop", 200, ns.to_string());
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    let out = doctor(&file, &["--output", "json"]).outcome();
    out.expect_code(1);
    let report = report(&out.stdout);
    assert_eq!(report["verdict"], "fix-admission");
    assert_eq!(report["admission"]["restart_policy_survived"], false);
    let suspects = &report["admission"]["suspects"];
    assert_eq!(
        suspects,
        &json!([{"configuration": "old-mesh", "webhook": "inject.old-mesh.io"}]),
        "{report}"
    );
    // The namespace cannot be read: every pod-CREATE webhook is a suspect, and why is said.
    api.forbid("GET", "/api/v1/namespaces/shop");
    let out = doctor(&file, &["-n", "shop"]).outcome();
    out.expect_code(1)
        .expect_stdout("suspect: mutating webhook inject.old-mesh.io (in old-mesh)")
        .expect_stdout("suspect: mutating webhook other.io (in elsewhere)")
        .expect_stdout("namespace selectors not applied: grant get on namespaces to user \"me\"")
        .expect_stdout("Verdict     fix-admission");
}

#[test]
fn an_api_server_without_the_gate_comes_first() {
    let api = ApiServer::start(TOKEN);
    cluster(&api, &[node("a", "v1.28.3", "x")]);
    api.route(
        "GET",
        "/version",
        200,
        json!({"gitVersion": "v1.28.3"}).to_string(),
    );
    api.route("GET", "/metrics", 200, metrics(false));
    api.admit_with(|mut pod| {
        let init = pod["spec"]["initContainers"][0].as_object_mut().unwrap();
        init.remove("restartPolicy");
        pod
    });
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    doctor(&file, &[])
        .outcome()
        .expect_code(1)
        .expect_stdout("API server  v1.28.3  built-in sidecars off (by metrics)")
        .expect_stdout("Verdict     fix-api-server");
}

#[test]
fn rbac_refusals_name_the_missing_grant_and_a_failed_check_exits_3() {
    let api = ApiServer::start(TOKEN);
    cluster(&api, &[]);
    api.forbid("GET", "/metrics");
    api.forbid("GET", NODES);
    let refusal = json!({"kind": "Status", "code": 403, "message":
        "pods is forbidden: User \"me\" cannot create resource \"pods\" in API group \"\" in the namespace \"shop\""});
    api.route(
        "POST",
        "/api/v1/namespaces/shop/pods?dryRun=All",
        403,
        refusal.to_string(),
    );
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    let out = doctor(&file, &[]).outcome();
    out.expect_code(3)
        .expect_stdout("/metrics refused: grant get on nonResourceURLs /metrics to user \"me\"")
        .expect_stdout(
            "listing nodes refused: grant list on nodes to user \"me\" of context \"laptop\"",
        )
        .expect_stdout("grant create on pods in namespace shop to user \"me\"")
        .expect_stdout("Verdict     incomplete");
    let report = report(&doctor(&file, &["--output", "json"]).outcome().stdout);
    assert_eq!(report["status"], 3);
    assert_eq!(report["failed"].as_array().unwrap().len(), 2, "{report}");
}

#[test]
fn an_exec_plugin_s_token_is_used_until_it_expires() {
    let api = ApiServer::start(TOKEN);
    cluster(&api, &[node("a", "v1.34.1", "x")]);
    let dir = TempDir::new();
    let runs = dir.join("runs");
    let info = dir.join("info");
    // The plugin counts its runs and keeps the request it was given.
    let plugin = dir.join("plugin.sh");
    let script = format!(
        "#!/bin/sh\necho run >> {runs}\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > {info}\n\
         [ \"$1\" = get-token ] && [ \"$CLUSTER\" = k ] || exit 9\n\
         printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\
         \"status\":{{\"token\":\"{TOKEN}\",\"expirationTimestamp\":\"%s\"}}}}' \"$EXPIRES\"\n",
        runs = runs.display(),
        info = info.display(),
    );
    std::fs::write(&plugin, script).unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = format!("https://{}", api.addr);
    let user = |expires: &str| {
        json!({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "./plugin.sh",
            "args": ["get-token"], "env": [{"name": "CLUSTER", "value": "k"},
            {"name": "EXPIRES", "value": expires}], "interactiveMode": "Never",
            "provideClusterInfo": true}})
    };
    let ca = json!({"certificate-authority": api.ca_file()});
    let file = kubeconfig(&dir.0, &server, ca.clone(), user("2999-01-01T00:00:00Z"));
    doctor(&file, &[]).outcome().expect_code(0);
    let count = || std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(count(), 1, "a valid credential is kept");
    let info: Value = serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
    assert_eq!(info["apiVersion"], "client.authentication.k8s.io/v1");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], server);

    // Expired as it comes: the plugin runs for every request.
    std::fs::remove_file(&runs).unwrap();
    let file = kubeconfig(&dir.0, &server, ca.clone(), user("2000-01-01T00:00:00Z"));
    doctor(&file, &[]).outcome().expect_code(0);
    assert!(count() >= 5, "{} runs", count());

    // A plugin that fails is named, and the check fails.
    let mut failing = user("2999-01-01T00:00:00Z");
    failing["exec"]["args"] = json!(["wrong"]);
    let file = kubeconfig(&dir.0, &server, ca, failing);
    doctor(&file, &[])
        .outcome()
        .expect_code(3)
        .expect_stdout("exec credential plugin")
        .expect_stdout("failed (exit status: 9)");
}

#[test]
fn client_certificates_as_data_and_as_files() {
    let api = ApiServer::start_mutual();
    cluster(&api, &[node("a", "v1.34.1", "x")]);
    let pair = api.client_pair();
    let dir = TempDir::new();
    let server = format!("https://{}", api.addr);
    let b64 = |path: &Path| {
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(path).unwrap())
    };
    let ca = json!({"certificate-authority-data": b64(&api.ca_file())});
    let user =
        json!({"client-certificate-data": b64(&pair.cert), "client-key-data": b64(&pair.key)});
    let file = kubeconfig(&dir.0, &server, ca.clone(), user);
    doctor(&file, &[]).outcome().expect_code(0);
    let user = json!({"client-certificate": pair.cert, "client-key": pair.key});
    let file = kubeconfig(&dir.0, &server, ca.clone(), user);
    doctor(&file, &[]).outcome().expect_code(0);
    // Without one, the server ends the handshake: the check fails.
    let file = kubeconfig(&dir.0, &server, ca, json!({}));
    doctor(&file, &[])
        .outcome()
        .expect_code(3)
        .expect_stdout("API server: ");
}

#[test]
fn kubectl_proxy_and_an_insecure_server() {
    let proxy = ApiServer::start_proxy();
    cluster(&proxy, &[node("a", "v1.34.1", "x")]);
    let dir = TempDir::new();
    let file = kubeconfig(
        &dir.0,
        &format!("http://{}", proxy.addr),
        json!({}),
        json!({}),
    );
    doctor(&file, &[]).outcome().expect_code(0);
    assert!(proxy.seen().iter().all(|s| s.authorization.is_none()));

    let api = ApiServer::start(TOKEN);
    cluster(&api, &[node("a", "v1.34.1", "x")]);
    let server = format!("https://{}", api.addr);
    // No CA: the test CA is unknown, unless verification is skipped.
    let file = kubeconfig(&dir.0, &server, json!({}), json!({"token": TOKEN}));
    doctor(&file, &[])
        .outcome()
        .expect_code(3)
        .expect_stdout("certificate-authority");
    let insecure = json!({"insecure-skip-tls-verify": true});
    let file = kubeconfig(&dir.0, &server, insecure, json!({"token": TOKEN}));
    doctor(&file, &[]).outcome().expect_code(0);
}

#[test]
fn in_a_pod_the_service_account_is_used() {
    let api = ApiServer::start(TOKEN);
    cluster(&api, &[node("a", "v1.34.1", "x")]);
    let out = readygate_cluster(["doctor", "--output", "json"])
        .env("KUBERNETES_SERVICE_HOST", api.addr.ip().to_string())
        .env("KUBERNETES_SERVICE_PORT", api.addr.port().to_string())
        .env("READYGATE_K8S_SERVICEACCOUNT_DIR", api.account_dir())
        .env_remove("POD_NAMESPACE")
        .outcome();
    out.expect_code(0);
    assert_eq!(report(&out.stdout)["admission"]["namespace"], "shop");
}

#[test]
fn bad_kubeconfigs_and_no_cluster_are_usage_errors() {
    let dir = TempDir::new();
    let file = dir.join("config");
    for (text, fault) in [
        ("[: not yaml", "not YAML"),
        ("clusters: 7", "not a kubeconfig"),
        ("current-context: x", "has no context \"x\""),
        (
            "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\nclusters: [{name: k, cluster: {server: 'ftp://x'}}]",
            "is not an http:// or https:// URL",
        ),
        (
            "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]",
            "auth-provider is not supported",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let out = doctor(&file, &[]).outcome();
        out.expect_code(2);
        assert!(out.stderr.contains(fault) && out.stderr.trim().lines().count() == 1, "{out:#?}");
    }
    readygate_cluster(["doctor"])
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", "/nonexistent")
        .outcome()
        .expect_code(2)
        .expect_stderr("no cluster to ask");
}

#[test]
fn an_unreachable_api_server_fails_the_check_within_its_timeout() {
    let dir = TempDir::new();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("https://{}", silent.local_addr().unwrap());
    let file = kubeconfig(&dir.0, &server, json!({}), json!({}));
    let out = doctor(&file, &["--timeout", "1s"]).outcome();
    out.expect_code(3)
        .expect_faster_than(Duration::from_secs(5))
        .expect_stdout("API server: no answer");
}
