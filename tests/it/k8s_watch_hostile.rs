//! `k8s://` watches against an API server (or a proxy in front of it) that misbehaves: ends
//! every watch at once in each way it can, sends events about objects the watch did not ask
//! for, or a `resourceVersion` a mebibyte long. A waiting pod must never ask it more often than
//! polling would, never be decided by another object, and never carry server text uncut.

use std::time::Duration;

use serde_json::json;

use crate::support::kube::{self, ApiServer, JobState, Watching, OWN_NAMESPACE};
use crate::support::run::RunExt;
use crate::support::running::Running;
use crate::support::TempDir;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";

/// The most requests polling on the API server's schedule (from 100 ms, 30% more per miss, up
/// to 5 s, each delay ½–1× that; no steady start) can send within `window`: every delay at its
/// shortest.
fn polling_most(window: Duration) -> usize {
    let (mut base, mut spent, mut requests) = (Duration::from_millis(100), Duration::ZERO, 1);
    loop {
        spent += base / 2;
        if spent > window {
            return requests;
        }
        requests += 1;
        base = (base * 13 / 10).min(Duration::from_secs(5));
    }
}

/// What a watch may cost at once beyond polling's first request, whatever the server does: the
/// watch its GET starts, then one re-list (a GET and a watch) before the back-off begins.
const UP_FRONT: usize = 3;

#[test]
fn a_server_that_ends_every_watch_is_asked_no_more_often_than_polling_would() {
    use Watching::*;
    let job = "k8s://job/migrate";
    let pods = "k8s://pods?selector=app=web";
    let service = "k8s://service/db";
    // Ended after one event that is not the goal (a MODIFIED, a BOOKMARK), with none, 410
    // Gone as the status or as an event, an ERROR event, the connection dropped mid-answer.
    let modes = [
        Current,
        BookmarkThenEnd,
        End,
        Gone,
        GoneEvent,
        Refuse,
        Dropped,
    ];
    let mut cases: Vec<(&str, Watching)> = modes.iter().map(|mode| (job, *mode)).collect();
    for url in [pods, service] {
        cases.extend([Current, Gone, Dropped].map(|mode| (url, mode)));
    }
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(url, mode)| {
            let api = ApiServer::start(TOKEN);
            api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
            api.put(kube::pod(
                OWN_NAMESPACE,
                "web-1",
                json!({"app": "web"}),
                false,
            ));
            api.put(kube::endpoint_slice(OWN_NAMESPACE, "db", &[Some(false)]));
            api.always(mode);
            let run = Running::spawn(&mut api.readygate(["wait", "-t", "8s", url]));
            (url, mode, api, run)
        })
        .collect();
    for (url, mode, api, run) in runs {
        let ended = run.end();
        let window = ended.outcome.elapsed;
        let requests = api.seen().len();
        let most = polling_most(window) + UP_FRONT;
        eprintln!(
            "bench: {url} {mode:?}: {requests} requests in {} ms (polling: at most {most})",
            window.as_millis()
        );
        assert!(
            requests <= most,
            "{url} {mode:?}: {requests} requests in {window:?}, polling sends at most {most}"
        );
        // The watch still runs and says why the target is not ready.
        assert!(requests >= 2, "{url} {mode:?}: {:?}", api.seen());
        ended
            .outcome
            .expect_code(1)
            .expect_stderr(&format!("{url}: "));
    }
}

#[test]
fn events_about_other_jobs_never_decide_the_job_and_are_told_of_once() {
    // Strays that would end the wait at once if judged: the other one complete, then failed.
    for (strays, last, code) in [
        (JobState::Complete, JobState::Failed, 1),
        (JobState::Failed, JobState::Complete, 0),
    ] {
        let api = ApiServer::start(TOKEN);
        api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
        api.ignore_selectors();
        let mut run =
            Running::spawn(&mut api.readygate(["wait", "-v", "-t", "20s", "k8s://job/migrate"]));
        run.line("k8s://job/migrate: watching");
        // Another Job in the namespace, and a Job of the same name in another namespace.
        api.put(kube::job(OWN_NAMESPACE, "seed", strays));
        api.put(kube::job("elsewhere", "migrate", strays));
        api.delete("Job", "seed");
        run.line("k8s://job/migrate: ignored an event about jobs/seed in shop");
        api.put(kube::job(OWN_NAMESPACE, "migrate", last));
        let ended = run.end();
        let stderr = &ended.outcome.stderr;
        ended.outcome.expect_code(code);
        assert_eq!(stderr.matches("ignored an event").count(), 1, "{stderr}");
        assert!(!stderr.contains("migrate in elsewhere"), "{stderr}");
    }
}

#[test]
fn pods_the_selector_does_not_pick_never_count_where_the_server_reports_labels() {
    let api = ApiServer::start(TOKEN);
    let pod =
        |ns: &str, name: &str, app: &str, ready| kube::pod(ns, name, json!({"app": app}), ready);
    api.put(pod(OWN_NAMESPACE, "web-1", "web", false));
    api.ignore_selectors();
    let url = "k8s://pods?selector=app=web";
    let mut run = Running::spawn(&mut api.readygate(["wait", "-v", "-t", "20s", url]));
    run.line("k8s://pods?selector=app=web: watching");
    // Not ready and not picked: counted, either would keep the wait going to its deadline.
    api.put(pod(OWN_NAMESPACE, "db-1", "db", false));
    api.put(pod("elsewhere", "web-9", "web", false));
    run.line("ignored an event about pods/db-1 in shop");
    api.put(pod(OWN_NAMESPACE, "web-1", "web", true));
    let ended = run.end();
    ended.outcome.expect_code(0);
    let stderr = &ended.outcome.stderr;
    assert_eq!(stderr.matches("ignored an event").count(), 1, "{stderr}");
}

#[test]
fn a_resource_version_a_mebibyte_long_enters_no_request_reason_or_termination_log() {
    let api = ApiServer::start(TOKEN);
    let mut job = kube::job(OWN_NAMESPACE, "migrate", JobState::Running);
    job["metadata"]["resourceVersion"] = json!("9".repeat(1 << 20));
    let path = "/apis/batch/v1/namespaces/shop/jobs/migrate";
    api.answer_verbatim(path, job.to_string());
    let dir = TempDir::new();
    let log = dir.join("termination-log");
    let log_arg = log.display().to_string();
    let args = ["wait", "-v", "-t", "2s", "--termination-log", &log_arg];
    let out = api.readygate(args).arg("k8s://job/migrate").outcome();
    out.expect_code(1)
        .expect_stderr("k8s://job/migrate: job not complete: 1 active");
    // Not watched from a version it cannot use: polled instead, each request short.
    let seen = api.seen();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen.iter().all(|s| s.path.len() < 400), "a path carried it");
    assert!(out.stderr.len() < 16 << 10, "{} bytes", out.stderr.len());
    let written = std::fs::read(&log).expect("the termination log");
    assert!(written.len() < 1024, "{} bytes", written.len());
}

#[test]
fn the_warnings_of_a_watch_are_json_lines_that_name_their_target() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::job(OWN_NAMESPACE, "migrate", JobState::Running));
    api.deny("watch", "jobs");
    let args = [
        "wait",
        "--log-format",
        "json",
        "-t",
        "1s",
        "k8s://job/migrate",
    ];
    let out = api.readygate(args).outcome();
    out.expect_code(1);
    let warning: serde_json::Value = out
        .stderr
        .lines()
        .find(|line| line.contains("polling with get instead"))
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .unwrap_or_else(|| panic!("no warning: {}", out.stderr));
    assert_eq!(warning["level"], "WARN", "{warning}");
    assert_eq!(warning["target"], "k8s://job/migrate", "{warning}");
}

#[test]
fn a_watched_list_holds_exactly_1000_items_and_refuses_the_1001st() {
    let api = ApiServer::start(TOKEN);
    let pod = |i: usize| {
        kube::pod(
            OWN_NAMESPACE,
            &format!("web-{i:04}"),
            json!({"app": "web"}),
            false,
        )
    };
    // 998 listed by the GET; the 999th and 1000th come as watch events, then the 1001st.
    for i in 0..998 {
        api.put(pod(i));
    }
    let url = "k8s://pods?selector=app=web";
    // A long attempt bound: a 998-item list read by a debug build on a loaded machine (or under
    // qemu) can pass the default 1 s, and a list retried would be counted below as a re-list.
    let mut run = Running::spawn(&mut api.readygate([
        "wait",
        "-v",
        "-t",
        "60s",
        "--attempt-timeout",
        "20s",
        url,
    ]));
    run.line("0 of 998 pods ready");
    run.line("k8s://pods?selector=app=web: watching");
    api.put(pod(998));
    run.line("0 of 999 pods ready");
    api.put(pod(999));
    run.line("0 of 1000 pods ready");
    // Held by the watch itself: no refusal, no re-list.
    assert!(!run.said("too large"), "the 1000th item was refused");
    assert_eq!(api.seen().len(), 2, "{:?}", api.seen());
    api.put(pod(1000));
    run.line("the API server's answer is too large: more than 1000 items in a list");
    assert!(!run.said("0 of 1001 pods"), "a 1001st item was kept");
}
