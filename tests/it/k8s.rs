//! `k8s://` targets against the stand-in API server (support/kube.rs): each kind ready, not
//! ready and becoming ready; a failed Job; missing objects; selectors; namespaces; RBAC and
//! token refusals; a token rotated mid-wait; bad syntax and no cluster.

use std::time::Duration;

use serde_json::json;

use crate::support::emulated::given;
use crate::support::kube::{self, ApiServer, JobState, OWN_NAMESPACE};
use crate::support::run::RunExt;
use crate::support::{readygate, TempDir};

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";

/// Quick retries, whatever schedule a remote target would get by default.
const PACE: [&str; 4] = ["--interval", "20ms", "--max-interval", "100ms"];

fn server() -> ApiServer {
    ApiServer::start(TOKEN)
}

/// `wait -t 20s` with quick retries, then `target`.
fn wait_args(target: &str) -> [&str; 8] {
    [
        "wait", "-t", "20s", PACE[0], PACE[1], PACE[2], PACE[3], target,
    ]
}

#[test]
fn a_complete_job_is_ready_through_one_verified_bearer_request() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    let out = api
        .readygate(["probe", "-v", "k8s://job/migrate"])
        .outcome();
    out.expect_code(0);
    let seen = api.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].path, "/apis/batch/v1/namespaces/shop/jobs/migrate");
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(&*format!("Bearer {TOKEN}"))
    );
    assert_eq!(seen[0].accept.as_deref(), Some("application/json"));
    assert_eq!(seen[0].host, Some(api.addr.to_string()));
    assert!(
        !out.stderr.contains(TOKEN) && !out.stdout.contains(TOKEN),
        "{out:#?}"
    );
}

#[test]
fn a_self_signed_api_server_certificate_marked_a_ca_is_trusted_when_ca_crt_is_it() {
    // `openssl req -x509` marks its certificate CA:TRUE; kubectl trusts such a server when its
    // CA file holds that very certificate, and so does readygate.
    let api = ApiServer::start_self_signed(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(0);
    // Another CA in ca.crt: a self-signed certificate, said so with where the trust comes from;
    // no hint of `--cacert` (which k8s:// does not read) or of another signer.
    let other = crate::support::certs::Certs::localhost();
    std::fs::copy(&other.ca, api.account.join("ca.crt")).expect("copy another CA");
    let out = api.readygate(["probe", "k8s://job/migrate"]).outcome();
    out.expect_code(1)
        .expect_stdout("self-signed certificate (not the one in the service account's ca.crt)");
    for misleading in ["--cacert", "signed by another", "CaUsedAsEndEntity"] {
        assert!(!out.stdout.contains(misleading), "{misleading}: {out:#?}");
    }
}

#[test]
fn a_running_job_is_not_ready_and_becomes_ready_when_complete() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(1)
        .expect_stdout("k8s://job/migrate: job not complete: 1 active, 0 succeeded, 0 failed");
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Suspended));
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(1)
        .expect_stdout("k8s://job/migrate: job suspended");

    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    let before = api.seen().len();
    let (child, started) = api
        .readygate(wait_args("k8s://job/migrate"))
        .spawn_captured();
    api.wait_for_requests(before + 2);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    crate::support::run::finish(child, started)
        .expect_code(0)
        .expect_stderr("k8s://job/migrate: ready after");
}

#[test]
fn a_failed_job_ends_the_wait_at_once() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    let (child, started) = api
        .readygate([
            "wait",
            "-t",
            "60s",
            PACE[0],
            PACE[1],
            PACE[2],
            PACE[3],
            "k8s://job/migrate",
            "--",
            "true",
        ])
        .spawn_captured();
    api.wait_for_requests(2);
    let before = api.seen().len();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Failed));
    let out = crate::support::run::finish(child, started);
    out.expect_code(1)
        .expect_stderr(
            "k8s://job/migrate: job failed: BackoffLimitExceeded: Job has reached the \
             specified backoff limit",
        )
        // Well before the 60 s deadline: a failed Job is never retried.
        .expect_faster_than(Duration::from_secs(20));
    // The attempt under way when the Job failed, and the one that saw it fail: no more.
    let after = api.seen().len() - before;
    assert!(after <= 2, "{after} attempts went on after the Job failed");
}

#[test]
fn a_job_marked_to_fail_ends_the_wait_before_it_has_failed() {
    // `FailureTarget` alone: the Job is out of retries, its pod still terminating.
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Failing));
    api.readygate(wait_args("k8s://job/migrate"))
        .outcome()
        .expect_code(1)
        .expect_stderr(
            "k8s://job/migrate: job failed: BackoffLimitExceeded: Job has reached the \
             specified backoff limit",
        )
        .expect_faster_than(Duration::from_secs(10));
    assert_eq!(api.seen().len(), 1, "a failing Job is asked about once");
}

#[test]
fn a_missing_job_is_waited_for_until_it_is_created() {
    let api = server();
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(1)
        .expect_stdout("k8s://job/migrate: no job migrate in shop (yet)");
    let (child, started) = api
        .readygate(wait_args("k8s://job/migrate"))
        .spawn_captured();
    // Its GET, then its watch.
    api.wait_for_requests(2);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    crate::support::run::finish(child, started).expect_code(0);
}

#[test]
fn a_pod_is_ready_when_its_ready_condition_is_true() {
    let api = server();
    let labels = json!({"app": "web"});
    api.readygate(["probe", "k8s://pod/web-0"])
        .outcome()
        .expect_code(1)
        .expect_stdout("k8s://pod/web-0: no pod web-0 in shop (yet)");
    api.put(kube::pod(OWN_NAMESPACE, "web-0", labels.clone(), false));
    api.readygate(["probe", "k8s://pod/web-0"])
        .outcome()
        .expect_code(1)
        .expect_stdout(
            "k8s://pod/web-0: pod not ready: Running, ContainersNotReady: containers with \
             unready status: [app]",
        );
    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args("k8s://pod/web-0")).spawn_captured();
    api.wait_for_requests(before + 2);
    api.put(kube::pod(OWN_NAMESPACE, "web-0", labels, true));
    crate::support::run::finish(child, started).expect_code(0);
    // GETs of the pod, and its watch.
    assert!(api
        .seen()
        .iter()
        .all(|s| s.path == "/api/v1/namespaces/shop/pods/web-0"
            || s.path.starts_with(
                "/api/v1/namespaces/shop/pods?watch=1&fieldSelector=metadata.name%3Dweb-0&"
            )));
}

#[test]
fn a_selector_needs_one_pod_and_every_matching_pod_ready() {
    let api = server();
    let target = "k8s://pods?selector=app.kubernetes.io/name=web,tier=front";
    let web = json!({"app.kubernetes.io/name": "web", "tier": "front"});
    // Matches nothing: another tier, and the right labels in another namespace.
    api.put(kube::pod(
        OWN_NAMESPACE,
        "web-back",
        json!({"app.kubernetes.io/name": "web", "tier": "back"}),
        false,
    ));
    api.put(kube::pod("other", "web-elsewhere", web.clone(), false));
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("no pod matches app.kubernetes.io/name=web,tier=front in shop (yet)");
    assert!(
        api.seen()[0].path.ends_with(
            "/api/v1/namespaces/shop/pods?labelSelector=app.kubernetes.io%2Fname%3Dweb%2Ctier%3Dfront"
        ),
        "{:?}",
        api.seen()
    );

    api.put(kube::pod(OWN_NAMESPACE, "web-a", web.clone(), true));
    api.put(kube::pod(OWN_NAMESPACE, "web-b", web.clone(), false));
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("1 of 2 pods ready; web-b is not: Running, ContainersNotReady");

    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(before + 2);
    api.put(kube::pod(OWN_NAMESPACE, "web-b", web, true));
    crate::support::run::finish(child, started).expect_code(0);
}

#[test]
fn a_service_is_ready_with_one_endpoint_not_marked_unready() {
    let api = server();
    let target = "k8s://service/db";
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("k8s://service/db: no EndpointSlice for service db in shop");
    assert!(api.seen()[0].path.ends_with(
        "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Ddb"
    ));
    api.put(kube::endpoint_slice(OWN_NAMESPACE, "db", &[]));
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("service db has no endpoint");
    api.put(kube::endpoint_slice(
        OWN_NAMESPACE,
        "db",
        &[Some(false), Some(false)],
    ));
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("service db has no ready endpoint (2 not ready)");

    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(before + 2);
    // `ready` absent counts as ready, as the API documents.
    api.put(kube::endpoint_slice(
        OWN_NAMESPACE,
        "db",
        &[Some(false), None],
    ));
    crate::support::run::finish(child, started).expect_code(0);
}

#[test]
fn a_deployment_is_ready_when_rolled_out_and_available() {
    let api = server();
    let target = "k8s://deployment/api";
    api.put(kube::deployment(OWN_NAMESPACE, "api", 3, 1, true));
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("k8s://deployment/api: 1 of 3 replicas updated");
    api.put(kube::deployment(OWN_NAMESPACE, "api", 3, 3, false));
    api.readygate(["probe", target])
        .outcome()
        .expect_code(1)
        .expect_stdout("not available: MinimumReplicasUnavailable");
    let before = api.seen().len();
    let (child, started) = api.readygate(wait_args(target)).spawn_captured();
    api.wait_for_requests(before + 2);
    api.put(kube::deployment(OWN_NAMESPACE, "api", 3, 3, true));
    crate::support::run::finish(child, started).expect_code(0);
    assert!(api.seen().iter().all(
        |s| s.path == "/apis/apps/v1/namespaces/shop/deployments/api"
            || s.path
                .starts_with("/apis/apps/v1/namespaces/shop/deployments?watch=1&")
    ));
}

#[test]
fn the_namespace_is_the_pods_own_unless_given() {
    let api = server();
    api.put(kube::job("batch-jobs", "migrate", JobState::Complete));
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(1)
        .expect_stdout("no job migrate in shop (yet)");
    api.readygate(["probe", "k8s://job/migrate?namespace=batch-jobs"])
        .outcome()
        .expect_code(0);
    // POD_NAMESPACE (the downward API) comes first, as in client-go.
    api.readygate(["probe", "k8s://job/migrate"])
        .env("POD_NAMESPACE", "batch-jobs")
        .outcome()
        .expect_code(0);
    let paths: Vec<String> = api.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        paths,
        [
            "/apis/batch/v1/namespaces/shop/jobs/migrate",
            "/apis/batch/v1/namespaces/batch-jobs/jobs/migrate",
            "/apis/batch/v1/namespaces/batch-jobs/jobs/migrate",
        ]
    );
}

#[test]
fn an_ipv6_api_server_address_is_bracketed() {
    let api = ApiServer::start_on("::1".parse().unwrap(), TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(0);
    let seen = api.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].host, Some(format!("[::1]:{}", api.addr.port())));
}

#[test]
fn forbidden_names_the_verb_and_resource_to_grant() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    api.deny("get", "jobs");
    api.deny("list", "pods");
    api.readygate(["probe", "k8s://job/migrate", "k8s://pods?selector=app=web"])
        .outcome()
        .expect_code(1)
        .expect_stdout(
            "k8s://job/migrate: forbidden: get jobs/migrate in shop — grant get on jobs \
             (apiGroup \"batch\") to the pod's service account",
        )
        .expect_stdout(
            "k8s://pods?selector=app=web: forbidden: list pods in shop — grant list on pods to \
             the pod's service account",
        );
}

#[test]
fn a_rejected_token_is_said_and_never_shown() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    api.accept_only("another-token");
    let out = api
        .readygate(["wait", "-v", "-t", &given("300ms"), "k8s://job/migrate"])
        .args(PACE)
        .outcome();
    out.expect_code(1)
        .expect_stderr("token rejected (401 Unauthorized)");
    assert!(
        !out.stderr.contains(TOKEN) && !out.stdout.contains(TOKEN),
        "{out:#?}"
    );
    assert!(api.seen().len() >= 2, "{:?}", api.seen());
}

#[test]
fn a_token_rotated_mid_wait_is_read_afresh() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    // The first watch ends after one event; the next request is made with the token as it is
    // then (a watch started with the old one is fine until it ends).
    api.watches(&[kube::Watching::EndAfter(1)]);
    let (child, started) = api
        .readygate(wait_args("k8s://job/migrate"))
        .spawn_captured();
    api.wait_for_requests(2);
    // The kubelet rotates the bound token; the old one stops working at once.
    let rotated = "eyJhbGciOiJSUzI1NiJ9.cm90YXRlZA.c2lnbmF0dXJlMg";
    api.accept_only(rotated);
    api.write_token(rotated);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    api.wait_for_requests(3);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    let out = crate::support::run::finish(child, started);
    out.expect_code(0);
    let last = api.seen().pop().unwrap();
    assert_eq!(last.authorization, Some(format!("Bearer {rotated}")));
    assert!(!out.stderr.contains(rotated) && !out.stderr.contains(TOKEN));
}

#[test]
fn the_api_servers_certificate_is_verified_with_ca_crt() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    // Another CA (of the same name: the signature is what gives it away).
    let stranger = crate::support::certs::Certs::localhost();
    std::fs::copy(&stranger.ca, api.account_dir().join("ca.crt")).unwrap();
    let out = api.readygate(["probe", "k8s://job/migrate"]).outcome();
    out.expect_code(1).expect_stdout(
        "k8s://job/migrate: TLS handshake: certificate verification failed: certificate \
             signature does not verify",
    );
    assert!(api.seen().is_empty());
}

#[test]
fn bad_k8s_targets_are_usage_errors() {
    for (target, fault) in [
        ("k8s://job/", "missing job name"),
        ("k8s://widget/x", "unknown kind \"widget\""),
        ("k8s://pods", "needs ?selector="),
        ("k8s://pods?selector=app%20web", "invalid label selector"),
        ("k8s://job/Migrate", "invalid object name"),
    ] {
        let out = readygate(["probe", target]).outcome();
        out.expect_code(2).expect_stderr(fault);
        assert_eq!(out.stderr.lines().count(), 1, "{out:#?}");
    }
}

#[test]
fn outside_a_pod_is_a_usage_error_that_says_so() {
    let home = TempDir::new();
    let out = readygate(["probe", "k8s://job/migrate"])
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env_remove("KUBECONFIG")
        .env("HOME", &home.0)
        .outcome();
    out.expect_code(2).expect_stderr(
        "readygate: k8s:// targets need a cluster: in a pod, KUBERNETES_SERVICE_HOST is set (it \
         is not)",
    );
    // Disabled, nothing is looked up: the same manifest runs anywhere.
    readygate(["probe", "k8s://job/migrate"])
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("READYGATE_DISABLED", "true")
        .outcome()
        .expect_code(0);
    let empty = TempDir::new();
    readygate(["probe", "k8s://job/migrate"])
        .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        .env("KUBERNETES_SERVICE_PORT", "6443")
        .args(["--k8s-serviceaccount-dir", empty.0.to_str().unwrap()])
        .outcome()
        .expect_code(2)
        .expect_stderr("there is no service account token at");
    // A broken in-cluster address is refused before any attempt, naming the variable.
    for (host, port, fault) in [
        (
            "not a host!",
            "6443",
            "KUBERNETES_SERVICE_HOST=\"not a host!\" is not a host",
        ),
        (
            "127.0.0.1",
            "x",
            "KUBERNETES_SERVICE_PORT=\"x\" is not a port",
        ),
    ] {
        let out = readygate(["probe", "k8s://job/migrate"])
            .env("KUBERNETES_SERVICE_HOST", host)
            .env("KUBERNETES_SERVICE_PORT", port)
            .outcome();
        out.expect_code(2).expect_stderr(fault);
        assert_eq!(out.stderr.lines().count(), 1, "{out:#?}");
    }
}

#[test]
fn a_one_shot_k8s_probe_costs_about_what_an_https_probe_to_the_same_server_does() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    let ca = api.account_dir().join("ca.crt");
    let url = format!(
        "https://{}/apis/batch/v1/namespaces/shop/jobs/migrate",
        api.addr
    );
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let https = || {
        let mut command = readygate(["probe", "--cacert", ca.to_str().unwrap()]);
        command.args(["-H", &bearer, &url]);
        command
    };
    let k8s = || api.readygate(["probe", "k8s://job/migrate"]);
    // Alternated, so that a busy moment of the machine costs both alike; medians.
    let (mut https_times, mut k8s_times) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        https_times.push(https().outcome().expect_code(0).elapsed);
        k8s_times.push(k8s().outcome().expect_code(0).elapsed);
    }
    https_times.sort();
    k8s_times.sort();
    let (https_median, k8s_median) = (https_times[7], k8s_times[7]);
    // A guard against gross regressions only (the goal, 2x, is measured on the release build).
    assert!(
        k8s_median < https_median * 4,
        "k8s:// one-shot {k8s_median:?}, https:// one-shot {https_median:?}"
    );
}

#[test]
fn an_answer_past_the_cap_is_not_read_to_its_end() {
    let api = server();
    let mut job = kube::job(OWN_NAMESPACE, "migrate", JobState::Complete);
    // 16 MiB: read whole, it would show in the memory the process peaked at.
    job["metadata"]["annotations"] = json!({"padding": "x".repeat(16 << 20)});
    api.put(job);
    let out = crate::support::measure::measured(&mut api.readygate([
        "probe",
        "-t",
        "20s",
        "--attempt-timeout",
        "20s",
        "k8s://job/migrate",
    ]));
    out.outcome
        .expect_code(1)
        .expect_stdout("k8s://job/migrate: the API server's answer is over 4 MiB");
    // The debug binary starts at about 11 MiB: the 16 MiB answer read whole would pass 24.
    out.expect_memory_under(24);
}

/// Replaces `path` by a FIFO nobody writes to.
fn fifo_in_place_of(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    crate::support::make_fifo(path).unwrap();
}

#[test]
fn a_token_or_namespace_file_that_is_a_fifo_cannot_hang_the_wait() {
    let api = server();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    // The namespace is read when the plan is made: a FIFO there must not stall the start.
    fifo_in_place_of(&api.account_dir().join("namespace"));
    fifo_in_place_of(&api.account_dir().join("token"));
    // Bounded: a hang fails the test instead of holding it.
    let out = crate::support::Running::spawn(
        api.readygate(["wait", "-t", "1s", "k8s://job/migrate"])
            .args(PACE),
    )
    .finish();
    out.expect_code(1)
        .expect_stderr("cannot read the token")
        .expect_stderr("not a regular file")
        .expect_ended_at(Duration::from_secs(1));
    assert!(api.seen().is_empty(), "{:?}", api.seen());
}
