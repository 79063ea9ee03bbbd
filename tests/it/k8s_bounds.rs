//! `k8s://` answers built to cost memory or lines: millions of empty entries within the 4 MiB
//! answer cap, server text hundreds of KiB long, a Job that says both Complete and Failed, a
//! token file too big to be a token. Each `probe` stays under 32 MiB and says why in one line.

use serde_json::json;

use crate::support::emulated::given;
use crate::support::kube::{self, ApiServer, JobState, OWN_NAMESPACE};
use crate::support::measure::{measured, Measured};
use crate::support::run::RunExt;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";

/// The memory goal for one `probe`, whatever a peer sends.
const PEAK_MIB: u64 = 32;

/// `[{},{},…]` of `n` entries: 3 bytes of JSON each, a struct each if kept.
fn empties(n: usize) -> String {
    let mut list = "{},".repeat(n);
    list.pop();
    format!("[{list}]")
}

/// Entries that fit under the 4 MiB answer cap with room for the object around them.
const UNDER_THE_CAP: usize = 1_300_000;

/// `probe TARGET` against `api`, measured.
fn probe(api: &ApiServer, target: &str) -> Measured {
    let attempt = given("1s");
    let args = ["probe", "-t", "20s", "--attempt-timeout", &attempt, target];
    let run = measured(&mut api.readygate(args));
    eprintln!("bench: k8s:// answer, {target}: peak {} KiB", run.peak_kib);
    run
}

#[test]
fn a_million_empty_conditions_or_items_are_refused_as_too_large_in_bounded_memory() {
    let api = ApiServer::start(TOKEN);
    let conditions = format!(
        r#"{{"status":{{"conditions":{}}}}}"#,
        empties(UNDER_THE_CAP)
    );
    let ns = format!("/namespaces/{OWN_NAMESPACE}");
    let lists = format!(r#"{{"kind":"List","items":{}}}"#, empties(UNDER_THE_CAP));
    let slices = format!(
        r#"{{"items":[{{"endpoints":{}}}]}}"#,
        empties(UNDER_THE_CAP)
    );
    let cases = [
        ("k8s://job/j", format!("/apis/batch/v1{ns}/jobs/j"), conditions.clone()),
        ("k8s://pod/p", format!("/api/v1{ns}/pods/p"), conditions.clone()),
        ("k8s://deployment/d", format!("/apis/apps/v1{ns}/deployments/d"), conditions),
        ("k8s://pods?selector=app=web", format!("/api/v1{ns}/pods?labelSelector=app%3Dweb"), lists),
        (
            "k8s://service/s",
            format!(
                "/apis/discovery.k8s.io/v1{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Ds"
            ),
            slices,
        ),
    ];
    for (target, path, body) in cases {
        assert!(body.len() < 4 << 20, "{}", body.len());
        api.answer_verbatim(&path, body);
        let run = probe(&api, target);
        run.outcome.expect_code(1).expect_stdout(&format!(
            "{target}: the API server's answer is too large: more than"
        ));
        assert_eq!(run.outcome.stdout.lines().count(), 1, "{:#?}", run.outcome);
        run.expect_memory_under(PEAK_MIB);
    }
}

#[test]
fn the_largest_lists_within_the_limits_are_judged_in_bounded_memory() {
    let api = ApiServer::start(TOKEN);
    // 1,000 pods of 32 conditions each: every cap reached, none passed.
    let condition = r#"{"type":"PodScheduled","status":"True"}"#;
    let conditions = vec![condition; 32].join(",");
    let pods: Vec<String> = (0..1000)
        .map(|i| {
            format!(
                r#"{{"metadata":{{"name":"web-{i}"}},"status":{{"conditions":[{conditions}]}}}}"#
            )
        })
        .collect();
    let list = format!(r#"{{"items":[{}]}}"#, pods.join(","));
    let path = format!("/api/v1/namespaces/{OWN_NAMESPACE}/pods?labelSelector=app%3Dweb");
    api.answer_verbatim(&path, list);
    let run = probe(&api, "k8s://pods?selector=app=web");
    run.outcome
        .expect_code(1)
        .expect_stdout("0 of 1000 pods ready; not ready: web-0, web-1, web-2 and 997 more");
    run.expect_memory_under(PEAK_MIB);
}

#[test]
fn server_text_hundreds_of_kib_long_is_cut_with_a_count_and_the_line_is_printed() {
    let api = ApiServer::start(TOKEN);
    let mut job = kube::job(OWN_NAMESPACE, "migrate", JobState::Failed);
    // Control characters grow six-fold when escaped: cut after escaping, the line stays short.
    let reason = "\u{1}".repeat(180 << 10);
    job["status"]["conditions"][1]["reason"] = json!(reason);
    job["status"]["conditions"][0]["reason"] = json!(reason);
    api.put(job);
    let mut pod = kube::pod(OWN_NAMESPACE, "web", json!({}), false);
    pod["status"]["phase"] = json!("P".repeat(300 << 10));
    pod["status"]["conditions"][2]["reason"] = json!("R".repeat(180 << 10));
    pod["status"]["conditions"][2]["message"] = json!("\u{202E}".repeat(100 << 10));
    api.put(pod);
    let job_shown = format!(
        "k8s://job/migrate: job failed: {}… ({} more characters): Job has reached",
        "\\u{1}".repeat(60),
        (180 << 10) * 5 - 300
    );
    let pod_shown = format!(
        "k8s://pod/web: pod not ready: {}… ({} more characters), {}",
        "P".repeat(300),
        (300 << 10) - 300,
        "R".repeat(300)
    );
    for (target, shown) in [
        ("k8s://job/migrate", job_shown),
        ("k8s://pod/web", pod_shown),
    ] {
        let run = probe(&api, target);
        run.outcome.expect_code(1).expect_stdout(&shown);
        assert!(
            run.outcome.stdout.len() < 4096,
            "{}",
            run.outcome.stdout.len()
        );
        assert!(
            !run.outcome.stdout.contains('\u{202E}'),
            "{}",
            run.outcome.stdout
        );
        run.expect_memory_under(PEAK_MIB);
    }
}

#[test]
fn a_job_both_complete_and_failed_has_failed() {
    let api = ApiServer::start(TOKEN);
    let complete = json!({"type": "Complete", "status": "True", "reason": "CompletionsReached"});
    // Complete before the failure conditions, and after them: the order does not decide.
    for at in [0, 2] {
        let mut job = kube::job(OWN_NAMESPACE, "migrate", JobState::Failed);
        let conditions = job["status"]["conditions"].as_array_mut().unwrap();
        conditions.insert(at, complete.clone());
        api.put(job);
        api.readygate(["probe", "k8s://job/migrate"])
            .outcome()
            .expect_code(1)
            .expect_stdout("k8s://job/migrate: job failed: BackoffLimitExceeded");
    }
    // FailureTarget alone with Complete: the Job is about to fail, not done.
    let mut job = kube::job(OWN_NAMESPACE, "migrate", JobState::Failed);
    job["status"]["conditions"][1] = complete;
    api.put(job);
    let out = api
        .readygate(["wait", "-t", "20s", "k8s://job/migrate", "--", "true"])
        .outcome();
    out.expect_code(1)
        .expect_stderr("k8s://job/migrate: job failed: BackoffLimitExceeded")
        .expect_faster_than(std::time::Duration::from_secs(10));
}

#[test]
fn a_token_file_over_64_kib_is_refused_not_cut_and_sent() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    for size in [(64 << 10) + 1, 1 << 20] {
        // The first 64 KiB are the token the server accepts: cut there, it would be ready.
        let token = "t".repeat(64 << 10);
        api.accept_only(&token);
        std::fs::write(api.account_dir().join("token"), "t".repeat(size)).unwrap();
        let out = api.readygate(["probe", "k8s://job/migrate"]).outcome();
        out.expect_code(1)
            .expect_stdout("is over 64 KiB: not a token");
        assert!(api.seen().is_empty(), "{:?}", api.seen().len());
    }
    // Exactly 64 KiB is still a token.
    std::fs::write(api.account_dir().join("token"), "t".repeat(64 << 10)).unwrap();
    api.readygate(["probe", "k8s://job/migrate"])
        .outcome()
        .expect_code(0);
}

#[test]
fn an_api_server_that_stalls_the_tls_handshake_is_said_so() {
    let api = ApiServer::start(TOKEN);
    let silent = crate::support::raw::Peer::start(crate::support::raw::silent);
    let out = api
        .readygate([
            "probe",
            "-t",
            "5s",
            "--attempt-timeout",
            "500ms",
            "k8s://job/migrate",
        ])
        .env("KUBERNETES_SERVICE_PORT", silent.addr.port().to_string())
        .outcome();
    out.expect_code(1)
        .expect_stdout("k8s://job/migrate: TLS handshake not complete within 500ms");
    assert!(silent.accepted() >= 1);
}
