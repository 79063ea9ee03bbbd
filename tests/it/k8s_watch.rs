//! `k8s://` watches against the stand-in API server: a change seen at once with few requests,
//! `410 Gone` (HTTP and as an event), bookmarks, a stream the server ends, a stream that
//! stalls, a forbidden watch falling back to polling, and an endless event held to the bound.

use std::time::{Duration, Instant};

use crate::support::kube::{self, ApiServer, JobState, Watching, OWN_NAMESPACE};
use crate::support::measure::measured;
use crate::support::run::RunExt;
use crate::support::running::Running;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";
const JOB: &str = "/apis/batch/v1/namespaces/shop/jobs/migrate";

fn running_job() -> ApiServer {
    let api = ApiServer::start(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    api
}

/// The paths asked for, GETs as `get` and watches as `watch@VERSION`.
fn requests(api: &ApiServer) -> Vec<String> {
    api.seen()
        .iter()
        .map(|seen| match seen.path.split_once('?') {
            Some((path, _)) if seen.path.contains("watch=1") => {
                assert_eq!(path, "/apis/batch/v1/namespaces/shop/jobs");
                let version = kube_version(&seen.path);
                format!("watch@{version}")
            }
            _ => {
                assert_eq!(seen.path, JOB);
                "get".to_string()
            }
        })
        .collect()
}

fn kube_version(path: &str) -> String {
    let query = path.split_once('?').unwrap().1;
    assert!(
        query.contains("fieldSelector=metadata.name%3Dmigrate"),
        "{path}"
    );
    query
        .split('&')
        .find_map(|p| p.strip_prefix("resourceVersion="))
        .unwrap()
        .to_string()
}

/// Completes the Job and waits for readygate to exit 0 after it.
fn complete(api: &ApiServer, run: Running) -> Duration {
    let changed = Instant::now();
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Complete));
    let ended = run.end();
    ended.outcome.expect_code(0);
    ended.at - changed
}

#[test]
fn a_job_completed_mid_wait_is_seen_through_the_watch_with_two_requests() {
    let api = running_job();
    // The default schedule for a remote target: polling it would send about ten GETs in 4 s.
    let run = Running::spawn(&mut api.readygate(["wait", "-t", "30s", "k8s://job/migrate"]));
    api.wait_for_requests(2);
    std::thread::sleep(Duration::from_secs(4));
    let took = complete(&api, run);
    // One GET (version 4712), then one watch from it, which brought the change.
    assert_eq!(requests(&api), ["get", "watch@4712"]);
    // Polling at this point would come up to 2 s later; a gross-regression guard only.
    assert!(took < Duration::from_millis(1500), "{took:?}");
    eprintln!("bench: k8s:// watch, detection {} ms", took.as_millis());
}

#[test]
fn gone_by_status_or_by_event_relists_then_watches_from_the_new_version() {
    for gone in [Watching::Gone, Watching::GoneEvent] {
        let api = running_job();
        api.watches(&[gone]);
        // A broken watch would re-list only after the 5 s interval; a gone one re-lists now.
        let args = ["wait", "-t", "20s", "--interval", "5s", "k8s://job/migrate"];
        let run = Running::spawn(&mut api.readygate(args));
        api.wait_for_requests(4);
        let took = run.started().elapsed();
        assert!(took < Duration::from_secs(4), "{gone:?}: {took:?}");
        // The re-list reads a newer version, and the watch starts there.
        api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
        api.wait_for_requests(4);
        complete(&api, run);
        let seen = requests(&api);
        assert_eq!(
            seen[..4],
            ["get", "watch@4712", "get", "watch@4712"],
            "{gone:?}"
        );
        assert_eq!(seen.len(), 4, "{gone:?}: {seen:?}");
    }
}

#[test]
fn a_stream_the_server_ends_resumes_from_the_last_event_or_bookmark() {
    let api = running_job();
    api.watches(&[Watching::EndAfter(1), Watching::BookmarkThenEnd]);
    let run = Running::spawn(&mut api.readygate(["wait", "-t", "20s", "k8s://job/migrate"]));
    api.wait_for_requests(2);
    // A change that is not readiness: the one event of the first stream, version 4713.
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    // Then a bookmark at 4714 ends the second; the third resumes there, without a GET.
    api.wait_for_requests(4);
    complete(&api, run);
    assert_eq!(
        requests(&api),
        ["get", "watch@4712", "watch@4713", "watch@4714"]
    );
}

#[test]
fn a_stalled_watch_is_given_up_after_the_attempt_bound_then_relisted() {
    let api = running_job();
    api.watches(&[Watching::Stall]);
    let args = [
        "wait",
        "-t",
        "20s",
        "--attempt-timeout",
        "300ms",
        "k8s://job/migrate",
    ];
    let run = Running::spawn(&mut api.readygate(args));
    api.wait_for_requests(4);
    complete(&api, run);
    assert_eq!(requests(&api), ["get", "watch@4712", "get", "watch@4712"]);
}

#[test]
fn a_forbidden_watch_falls_back_to_polling_with_one_warning() {
    let api = running_job();
    api.deny("watch", "jobs");
    let args = [
        "wait",
        "-t",
        "20s",
        "--interval",
        "20ms",
        "--max-interval",
        "50ms",
    ];
    let mut run = Running::spawn(&mut api.readygate([
        args[0],
        args[1],
        args[2],
        args[3],
        args[4],
        args[5],
        args[6],
        "k8s://job/migrate",
    ]));
    run.line("grant watch on jobs (apiGroup \"batch\") to the pod's service account");
    api.wait_for_requests(6);
    let took = complete(&api, run);
    assert!(took < Duration::from_secs(2), "{took:?}");
    let seen = requests(&api);
    assert_eq!(seen[..2], ["get", "watch@4712"], "{seen:?}");
    assert!(seen[2..].iter().all(|r| r == "get"), "{seen:?}");
}

#[test]
fn a_forbidden_watch_warns_once() {
    let api = running_job();
    api.deny("watch", "jobs");
    let out = api
        .readygate([
            "wait",
            "-t",
            "1s",
            "--interval",
            "20ms",
            "--max-interval",
            "50ms",
            "k8s://job/migrate",
        ])
        .outcome();
    out.expect_code(1);
    assert_eq!(out.stderr.matches("grant watch").count(), 1, "{out:#?}");
    assert!(out.stderr.contains("polling with get instead"), "{out:#?}");
}

#[test]
fn an_endless_watch_event_is_refused_at_the_answer_cap_in_bounded_memory() {
    let api = running_job();
    api.watches(&[Watching::Endless; 64]);
    // -v: the reason shows in an attempt's line; the last one may be a re-list's GET.
    let out = measured(&mut api.readygate(["wait", "-v", "-t", "3s", "k8s://job/migrate"]));
    eprintln!(
        "bench: k8s:// endless watch event: peak {} KiB",
        out.peak_kib
    );
    out.outcome
        .expect_code(1)
        .expect_stderr("a watch event from the API server is over 4 MiB");
    out.expect_memory_under(32);
}

#[test]
fn invert_waits_until_the_watched_pod_is_gone() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::pod(OWN_NAMESPACE, "old", serde_json::json!({}), true));
    let run =
        Running::spawn(&mut api.readygate(["wait", "-t", "20s", "--invert", "k8s://pod/old"]));
    api.wait_for_requests(2);
    let deleted = Instant::now();
    api.delete("Pod", "old");
    let ended = run.end();
    ended.outcome.expect_code(0);
    let took = ended.at - deleted;
    assert!(took < Duration::from_millis(1500), "{took:?}");
    assert_eq!(api.seen().len(), 2, "{:?}", api.seen());
}

/// bench/report.md's figures: requests one waiting pod sends over a fixed span, watching and
/// polling (the watch refused), and the detection latency of each. Run by hand with
/// `cargo test --release --test it k8s_watch::bench -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_requests_per_waiting_pod_watch_against_poll() {
    let span = Duration::from_secs(30);
    let runs: Vec<(&str, ApiServer, Running)> = ["watch", "poll"]
        .into_iter()
        .map(|how| {
            let api = running_job();
            if how == "poll" {
                api.deny("watch", "jobs");
            }
            let run =
                Running::spawn(&mut api.readygate(["wait", "-t", "10m", "k8s://job/migrate"]));
            (how, api, run)
        })
        .collect();
    std::thread::sleep(span);
    for (how, api, run) in runs {
        let requests = api.seen().len();
        let took = complete(&api, run);
        eprintln!(
            "bench: k8s:// {how}: {requests} requests in {}s, detection {} ms",
            span.as_secs(),
            took.as_millis()
        );
    }
}
