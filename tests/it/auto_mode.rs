//! `--sidecar … --mode auto` against the stand-in API server (support/kube.rs), as in a pod:
//! `inject` lists the nodes once and adds the sidecar in the form every node runs (native,
//! the universal pair, or a regular container); the webhook lists them, then follows them
//! by a watch, choosing per admission without a request (the pod's own node when it is bound),
//! and is not ready until the nodes are listed.

use std::process::Command;

use base64::Engine;
use serde_json::{json, Value};

use crate::support::certs::Certs;
use crate::support::kube::ApiServer;
use crate::support::run::RunExt;
use crate::support::{readygate_cluster, wait_until, TempDir};
use crate::webhook::{request, response, review, start_with};

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.YXV0by1tb2Rl.c2lnbmF0dXJl";
const NODES: &str = "/api/v1/nodes?limit=50";

/// A Node with this kubelet version.
fn node(name: &str, kubelet: &str) -> Value {
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name},
           "status": {"nodeInfo": {"kubeletVersion": kubelet}}})
}

/// The sidecar file: a proxy with a command (the universal pair wraps it).
fn sidecar(dir: &TempDir) -> std::path::PathBuf {
    let file = dir.join("proxy.yaml");
    std::fs::write(&file, "name: proxy\nimage: envoy:1.31\ncommand: [envoy]\n").unwrap();
    file
}

/// Points `command` at the stand-in as a pod's would be.
fn in_pod(api: &ApiServer, command: &mut Command) {
    command
        .env("KUBERNETES_SERVICE_HOST", api.addr.ip().to_string())
        .env("KUBERNETES_SERVICE_PORT", api.addr.port().to_string())
        .env("READYGATE_K8S_SERVICEACCOUNT_DIR", api.account_dir())
        .env_remove("KUBECONFIG");
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"app:1.0"}]}}"#;

/// The form the sidecar took in an injected pod (JSON): `native`, `universal` or `legacy`.
fn form(pod: &Value) -> &'static str {
    let names = |list: &str| -> Vec<String> {
        (pod["spec"][list]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter())
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect()
    };
    let (init, regular) = (names("initContainers"), names("containers"));
    match (
        init.contains(&"proxy".to_string()),
        init.contains(&"proxy-native".to_string()) && regular.contains(&"proxy-legacy".into()),
        regular.contains(&"proxy".to_string()),
    ) {
        (true, false, false) => "native",
        (false, true, false) => "universal",
        (false, false, true) => "legacy",
        _ => panic!("no one form of the sidecar: {init:?} {regular:?}"),
    }
}

#[test]
fn inject_adds_the_form_every_node_runs_after_one_node_list() {
    let dir = TempDir::new();
    let file = sidecar(&dir);
    let pod_file = dir.join("pod.json");
    std::fs::write(&pod_file, POD).unwrap();
    for (kubelets, expected) in [
        (&["v1.34.1", "v1.29.0-eks-1a2b"][..], "native"),
        (&["v1.34.1", "v1.27.9"][..], "universal"),
        (&["v1.34.1", "v1.27.9", "v1.28.15"][..], "legacy"),
        (&[][..], "universal"),
    ] {
        let api = ApiServer::start(TOKEN);
        for (i, kubelet) in kubelets.iter().enumerate() {
            api.put(node(&format!("node-{i}"), kubelet));
        }
        let mut command = readygate_cluster(["inject", "--mode", "auto", "--sidecar"]);
        command.arg(&file).arg(&pod_file);
        in_pod(&api, &mut command);
        let out = command.outcome();
        out.expect_code(0);
        let pod: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(form(&pod), expected, "{kubelets:?}: {}", out.stdout);
        assert_eq!(api.answers(NODES), [200], "{kubelets:?}: {:?}", api.seen());
        assert!(api
            .seen()
            .iter()
            .all(|s| s.authorization.as_deref() == Some(&*format!("Bearer {TOKEN}"))));
    }
}

#[test]
fn inject_finds_the_cluster_through_a_kubeconfig_outside_a_pod() {
    let dir = TempDir::new();
    let pod_file = dir.join("pod.json");
    std::fs::write(&pod_file, POD).unwrap();
    let api = ApiServer::start(TOKEN);
    api.put(node("a", "v1.34.1"));
    let config = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "other",
        "contexts": [{"name": "laptop", "context": {"cluster": "k", "user": "me"}},
                     {"name": "other", "context": {"cluster": "none", "user": "me"}}],
        "clusters": [{"name": "k", "cluster": {"server": format!("https://{}", api.addr),
                      "certificate-authority": api.ca_file()}}],
        "users": [{"name": "me", "user": {"token": TOKEN}}],
    });
    let file = dir.join("config");
    std::fs::write(&file, config.to_string()).unwrap();
    let mut command = readygate_cluster(["inject", "--mode", "auto", "--context", "laptop"]);
    command
        .arg("--kubeconfig")
        .arg(&file)
        .arg("--sidecar")
        .arg(sidecar(&dir))
        .arg(&pod_file)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBECONFIG");
    let out = command.outcome();
    out.expect_code(0);
    let pod: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(form(&pod), "native", "{}", out.stdout);
    assert_eq!(api.answers(NODES), [200]);
}

#[test]
fn inject_says_which_grant_is_missing_and_writes_nothing() {
    let dir = TempDir::new();
    let pod_file = dir.join("pod.json");
    std::fs::write(&pod_file, POD).unwrap();
    let api = ApiServer::start(TOKEN);
    api.deny("list", "nodes");
    let mut command = readygate_cluster(["inject", "--mode", "auto", "--sidecar"]);
    command.arg(sidecar(&dir)).arg(&pod_file);
    in_pod(&api, &mut command);
    let out = command.outcome();
    out.expect_code(1).expect_stderr(
        "--mode auto: cannot read the nodes: listing nodes refused: grant list on nodes to",
    );
    assert_eq!(out.stdout, "");
    assert!(!out.stderr.contains(TOKEN), "{}", out.stderr);
    // auto, like universal, wraps the container's command.
    let bare = dir.join("bare.yaml");
    std::fs::write(&bare, "name: proxy\nimage: envoy:1.31\n").unwrap();
    let mut command = readygate_cluster(["inject", "--mode", "auto", "--sidecar"]);
    command.arg(&bare).arg(&pod_file);
    in_pod(&api, &mut command);
    command
        .outcome()
        .expect_code(2)
        .expect_stderr("--mode auto wraps the container's command");
}

/// The form the webhook chose for a Pod CREATE of `pod` (JSON), through its patch applied.
fn admitted(port: u16, ca: &std::path::Path, pod: &str) -> &'static str {
    let (status, body) = request(
        port,
        ca,
        "POST",
        "/mutate",
        review("Pod", "CREATE", pod).as_bytes(),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let answer = response(&body);
    let patch = base64::engine::general_purpose::STANDARD
        .decode(answer["patch"].as_str().expect("a patch"))
        .unwrap();
    let pod: Value = serde_json::from_str(pod).unwrap();
    let pod = crate::support::json_patch::apply(&pod, &patch);
    form(&pod)
}

#[test]
fn the_webhook_follows_the_nodes_and_asks_nothing_per_admission() {
    let certs = Certs::localhost();
    let dir = TempDir::new();
    let api = ApiServer::start(TOKEN);
    api.put(node("a", "v1.34.1"));
    api.put(node("b", "v1.33.2"));
    let file = sidecar(&dir).display().to_string();
    let mut webhook = start_with(&certs, &["--sidecar", &file, "--mode", "auto"], |c| {
        in_pod(&api, c)
    });
    let ready = || {
        request(webhook.port, &certs.ca, "GET", "/readyz", b"")
            .unwrap()
            .0
            == 200
    };
    wait_until("the webhook ready (nodes listed)", ready);
    let bound = |node: &str| {
        POD.replace(
            r#""containers""#,
            &format!(r#""nodeName":"{node}","containers""#),
        )
    };
    assert_eq!(admitted(webhook.port, &certs.ca, POD), "native");
    assert_eq!(admitted(webhook.port, &certs.ca, &bound("a")), "native");

    // An old node joins: the watch tells, and pods not yet bound get the pair; a pod bound to a
    // new node still gets a built-in sidecar, one bound to the old node the pair.
    api.put(node("old", "v1.27.9"));
    wait_until("the new node seen", || {
        admitted(webhook.port, &certs.ca, POD) == "universal"
    });
    assert_eq!(admitted(webhook.port, &certs.ca, &bound("a")), "native");
    assert_eq!(
        admitted(webhook.port, &certs.ca, &bound("old")),
        "universal"
    );
    // A 1.28 node (gate off by default) makes it a regular container; its removal undoes it.
    api.put(node("c", "v1.28.15"));
    wait_until("the 1.28 node seen", || {
        admitted(webhook.port, &certs.ca, POD) == "legacy"
    });
    api.put(node("c", "v1.29.1"));
    wait_until("the upgrade seen", || {
        admitted(webhook.port, &certs.ca, POD) == "universal"
    });

    // One list, then the watch: never a request per admission.
    assert_eq!(api.answers(NODES), [200], "{:?}", api.seen());
    let watches = api.watch_versions();
    assert!(
        !watches.is_empty() && watches.iter().all(|v| !v.is_empty()),
        "{watches:?}"
    );
    webhook.running.lines(&[
        "mutated shop/web, sidecar native",
        "mutated shop/web, sidecar universal",
        "mutated shop/web, sidecar legacy",
    ]);
    assert!(!webhook.running.written().contains(TOKEN));
    webhook.running.signal(libc::SIGTERM);
    assert_eq!(webhook.running.end().status.code(), Some(0));
}

#[test]
fn the_webhook_is_not_ready_until_it_may_list_the_nodes() {
    let certs = Certs::localhost();
    let dir = TempDir::new();
    let api = ApiServer::start(TOKEN);
    api.deny("list", "nodes");
    let file = sidecar(&dir).display().to_string();
    let mut webhook = start_with(&certs, &["--sidecar", &file, "--mode", "auto"], |c| {
        in_pod(&api, c)
    });
    webhook
        .running
        .line("cannot list the nodes: listing nodes refused: grant list on nodes to");
    let (status, body) = request(webhook.port, &certs.ca, "GET", "/readyz", b"").unwrap();
    assert_eq!((status, body.as_str()), (503, "nodes not listed yet\n"));
    let (status, _) = request(webhook.port, &certs.ca, "GET", "/healthz", b"").unwrap();
    assert_eq!(status, 200);
    webhook.running.signal(libc::SIGTERM);
    assert_eq!(webhook.running.end().status.code(), Some(0));
}
