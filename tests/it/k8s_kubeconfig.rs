//! `k8s://` targets from outside a pod, as a CI pipeline runs them: the cluster from
//! `--kubeconfig`, `KUBECONFIG` or `~/.kube/config`, the current context or `--context`, with
//! a token, client certificates or an exec credential plugin (the kubeconfig reader `doctor`
//! uses), each GET and watch authenticated; and which cluster wins in a pod.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use serde_json::{json, Value};

use crate::support::kube::{self, ApiServer, JobState, OWN_NAMESPACE};
use crate::support::run::{readygate, RunExt};
use crate::support::TempDir;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.b3V0c2lkZS10b2tlbg.c2lnbmF0dXJl";

/// A kubeconfig at `dir/config` with contexts `laptop` (namespace shop, current) and `other`
/// (namespace elsewhere), both for `server` with these cluster and user fields.
fn kubeconfig(dir: &Path, server: &str, cluster: Value, user: Value) -> PathBuf {
    let mut cluster = cluster;
    cluster["server"] = json!(server);
    let config = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "laptop",
        "contexts": [
            {"name": "laptop", "context": {"cluster": "k", "user": "me", "namespace": OWN_NAMESPACE}},
            {"name": "other", "context": {"cluster": "k", "user": "me", "namespace": "elsewhere"}},
        ],
        "clusters": [{"name": "k", "cluster": cluster}],
        "users": [{"name": "me", "user": user}],
    });
    // Written as YAML, as kubectl writes it: block style, no braces.
    let file = dir.join("config");
    std::fs::write(&file, yaml(&config, 0)).unwrap();
    file
}

/// `value` as block-style YAML.
fn yaml(value: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::Object(m) if m.is_empty() => format!("{pad}{k}: {{}}\n"),
                Value::Object(_) | Value::Array(_) => format!("{pad}{k}:\n{}", yaml(v, indent + 2)),
                _ => format!("{pad}{k}: {}\n", yaml(v, 0).trim_end()),
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                let inner = yaml(item, indent + 2);
                format!("{pad}- {}", inner.trim_start())
            })
            .collect(),
        Value::String(s) => format!("{s:?}\n"),
        other => format!("{other}\n"),
    }
}

/// `readygate ARGS` outside any pod, with `home` as HOME and nothing else pointing at a cluster.
fn outside<const N: usize>(home: &Path, args: [&str; N]) -> Command {
    let mut command = readygate(args);
    command
        .env("HOME", home)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env_remove("READYGATE_K8S_SERVICEACCOUNT_DIR")
        .env_remove("POD_NAMESPACE");
    command
}

fn with_token(api: &ApiServer, dir: &Path) -> PathBuf {
    let server = format!("https://{}", api.addr);
    let ca = json!({"certificate-authority": api.ca_file()});
    kubeconfig(dir, &server, ca, json!({"token": TOKEN}))
}

#[test]
fn a_token_from_the_kubeconfig_given_listed_or_at_home() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    let home = TempDir::new();
    let dir = TempDir::new();
    let file = with_token(&api, &dir.0);
    let path = file.to_str().unwrap();
    outside(
        &home.0,
        ["probe", "--kubeconfig", path, "k8s://job/migrate"],
    )
    .outcome()
    .expect_code(0);
    let seen = api.seen();
    assert_eq!(seen[0].path, "/apis/batch/v1/namespaces/shop/jobs/migrate");
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(&*format!("Bearer {TOKEN}"))
    );
    // KUBECONFIG, and --context picking the other namespace.
    outside(
        &home.0,
        ["probe", "--context", "other", "k8s://job/migrate"],
    )
    .env("KUBECONFIG", &file)
    .outcome()
    .expect_code(1)
    .expect_stdout("no job migrate in elsewhere (yet)");
    // ~/.kube/config, with nothing else given.
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    std::fs::copy(&file, home.join(".kube/config")).unwrap();
    outside(&home.0, ["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(0);
    // A refusal names the kubeconfig's user, not a service account.
    api.deny("get", "jobs");
    outside(&home.0, ["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(1)
        .expect_stdout(
            "grant get on jobs (apiGroup \"batch\") to user \"me\" of context \"laptop\"",
        );
    let out = outside(&home.0, ["probe", "k8s://job/migrate"]).outcome();
    assert!(
        !out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN),
        "{out:#?}"
    );
}

#[test]
fn client_certificates_carry_the_get_and_the_watch() {
    let api = ApiServer::start_mutual();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    let pair = api.client_pair();
    let (home, dir) = (TempDir::new(), TempDir::new());
    let b64 = |path: &Path| {
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(path).unwrap())
    };
    let ca = json!({"certificate-authority-data": b64(&api.ca_file())});
    let user =
        json!({"client-certificate-data": b64(&pair.cert), "client-key-data": b64(&pair.key)});
    let file = kubeconfig(&dir.0, &format!("https://{}", api.addr), ca, user);
    ready_when_the_job_completes(&api, &home.0, &file);
    assert!(
        api.seen().iter().any(|s| s.path.contains("watch=1")),
        "{:?}",
        api.seen()
    );
    // Without the certificate, the server ends the handshake.
    let bare = kubeconfig(
        &dir.0,
        &format!("https://{}", api.addr),
        json!({"certificate-authority": api.ca_file()}),
        json!({}),
    );
    outside(
        &home.0,
        [
            "probe",
            "--kubeconfig",
            bare.to_str().unwrap(),
            "k8s://job/migrate",
        ],
    )
    .outcome()
    .expect_code(1);
}

#[test]
fn an_exec_plugin_gives_the_token_once_while_it_is_valid() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    let (home, dir) = (TempDir::new(), TempDir::new());
    let runs = dir.join("runs");
    let plugin = dir.join("get-token.sh");
    let script = format!(
        "#!/bin/sh\necho run >> {runs}\n[ \"$1\" = token ] || exit 9\n\
         printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\
         \"status\":{{\"token\":\"{TOKEN}\",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"}}}}'\n",
        runs = runs.display(),
    );
    std::fs::write(&plugin, script).unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let user = json!({"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "./get-token.sh", "args": ["token"], "interactiveMode": "Never"}});
    let ca = json!({"certificate-authority": api.ca_file()});
    let file = kubeconfig(&dir.0, &format!("https://{}", api.addr), ca, user);
    ready_when_the_job_completes(&api, &home.0, &file);
    let runs = std::fs::read_to_string(&runs).unwrap();
    assert_eq!(runs.lines().count(), 1, "one run for the GET and the watch");
    assert!(api
        .seen()
        .iter()
        .all(|s| s.authorization.as_deref() == Some(&*format!("Bearer {TOKEN}"))));
}

#[test]
fn which_cluster_wins_and_none_at_all() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    let home = TempDir::new();
    // In a pod, a ~/.kube/config (here naming a server that is not there) does not take the
    // service account's place.
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    kubeconfig(
        &home.join(".kube"),
        "https://127.0.0.1:1",
        json!({}),
        json!({"token": "x"}),
    );
    api.readygate(["probe", "k8s://job/migrate"])
        .env("HOME", &home.0)
        .env_remove("KUBECONFIG")
        .outcome()
        .expect_code(0);
    // --kubeconfig does.
    let file = home.join(".kube/config");
    api.readygate([
        "probe",
        "--kubeconfig",
        file.to_str().unwrap(),
        "k8s://job/migrate",
    ])
    .outcome()
    .expect_code(1)
    .expect_stdout("connection refused");
    let empty = TempDir::new();
    let out = outside(&empty.0, ["probe", "k8s://job/migrate"]).outcome();
    out.expect_code(2).expect_stderr(
        "readygate: k8s:// targets need a cluster: in a pod, KUBERNETES_SERVICE_HOST is set (it \
         is not); outside one, give --kubeconfig FILE or set KUBECONFIG (there is no \
         ~/.kube/config)",
    );
    assert_eq!(out.stderr.lines().count(), 1, "{out:#?}");
    outside(
        &empty.0,
        [
            "probe",
            "--kubeconfig",
            "/nonexistent/config",
            "k8s://job/migrate",
        ],
    )
    .outcome()
    .expect_code(2)
    .expect_stderr("kubeconfig \"/nonexistent/config\"");
}

/// `wait k8s://job/migrate` from outside a pod with `file` as its kubeconfig: it asks (a GET,
/// then a watch), the Job completes, and it ends ready.
fn ready_when_the_job_completes(api: &ApiServer, home: &Path, file: &Path) {
    let args = [
        "wait",
        "-t",
        "20s",
        "--kubeconfig",
        file.to_str().unwrap(),
        "k8s://job/migrate",
    ];
    let (child, started) = outside(home, args).spawn_captured();
    api.wait_for_requests(2);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    crate::support::run::finish(child, started).expect_code(0);
}
