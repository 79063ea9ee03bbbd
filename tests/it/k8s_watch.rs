//! `k8s://` watches against the stand-in API server, for one named object (`job/`) and for the
//! lists a selector picks (`pods?selector=`, `service/`): a change seen at once with two
//! requests, `410 Gone` (HTTP and as an event), bookmarks, a stream the server ends, a stream
//! that stalls, a forbidden watch falling back to polling, an endless event held to the bound,
//! spread `timeoutSeconds`, and `--invert` until what is watched is gone.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::emulated::{given, time_limit};
use crate::support::kube::{self, ApiServer, JobState, Watching, OWN_NAMESPACE};
use crate::support::measure::measured;
use crate::support::pod::Pod;
use crate::support::require;
use crate::support::run::RunExt;
use crate::support::running::Running;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";

/// What a test waits on: one Job, the pods `app=web` picks, or Service `db`'s EndpointSlices.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Job,
    Pods,
    Service,
}

const SHAPES: [Shape; 3] = [Shape::Job, Shape::Pods, Shape::Service];

impl Shape {
    fn url(self) -> &'static str {
        match self {
            Shape::Job => "k8s://job/migrate",
            Shape::Pods => "k8s://pods?selector=app=web",
            Shape::Service => "k8s://service/db",
        }
    }

    /// The path and query of its GET.
    fn get(self) -> &'static str {
        match self {
            Shape::Job => "/apis/batch/v1/namespaces/shop/jobs/migrate",
            Shape::Pods => "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb",
            Shape::Service => {
                "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices\
                 ?labelSelector=kubernetes.io%2Fservice-name%3Ddb"
            }
        }
    }

    /// The collection its watch asks, and the selector the watch carries.
    fn watched(self) -> (&'static str, &'static str) {
        match self {
            Shape::Job => (
                "/apis/batch/v1/namespaces/shop/jobs",
                "fieldSelector=metadata.name%3Dmigrate",
            ),
            Shape::Pods => ("/api/v1/namespaces/shop/pods", "labelSelector=app%3Dweb"),
            Shape::Service => (
                "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices",
                "labelSelector=kubernetes.io%2Fservice-name%3Ddb",
            ),
        }
    }

    /// The resource RBAC names, and what the warning of its refused watch asks to grant.
    fn rbac(self) -> (&'static str, &'static str) {
        match self {
            Shape::Job => (
                "jobs",
                "grant watch on jobs (apiGroup \"batch\") to the pod's",
            ),
            Shape::Pods => ("pods", "grant watch on pods to the pod's"),
            Shape::Service => (
                "endpointslices",
                "grant watch on endpointslices (apiGroup \"discovery.k8s.io\") to the pod's",
            ),
        }
    }

    /// Puts a new state of what is watched: ready, or a change that is not readiness.
    fn put(self, api: &ApiServer, ready: bool) {
        api.put(match (self, ready) {
            (Shape::Job, false) => kube::job(OWN_NAMESPACE, "migrate", JobState::Running),
            (Shape::Job, true) => kube::job(OWN_NAMESPACE, "migrate", JobState::Complete),
            (Shape::Pods, _) => kube::pod(OWN_NAMESPACE, "web-1", json!({"app": "web"}), ready),
            (Shape::Service, _) => kube::endpoint_slice(OWN_NAMESPACE, "db", &[Some(ready)]),
        });
    }

    /// A stand-in that holds it, not ready (version 4712).
    fn api(self) -> ApiServer {
        let api = ApiServer::start(TOKEN);
        self.put(&api, false);
        api
    }
}

/// The requests seen, GETs as `get` and watches as `watch@VERSION` (`watch@now`: without a
/// version), each checked to ask for what `shape` reads.
fn requests(api: &ApiServer, shape: Shape) -> Vec<String> {
    let (collection, selector) = shape.watched();
    let seen = api.seen();
    seen.iter()
        .map(|seen| match seen.path.split_once('?') {
            Some((path, query)) if query.contains("watch=1") => {
                assert_eq!(path, collection, "{shape:?}");
                assert!(query.split('&').any(|p| p == selector), "{}", seen.path);
                format!("watch@{}", param(query, "resourceVersion").unwrap_or("now"))
            }
            _ => {
                assert_eq!(seen.path, shape.get(), "{shape:?}");
                "get".to_string()
            }
        })
        .collect()
}

/// The value of `name` in `query`, if it is there.
fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    let pair = query
        .split('&')
        .find(|p| p.starts_with(&format!("{name}=")));
    pair.and_then(|p| p.split_once('=')).map(|(_, value)| value)
}

/// Makes it ready and waits for readygate to exit 0 after it; how long that took.
fn complete(api: &ApiServer, shape: Shape, run: Running) -> Duration {
    let changed = Instant::now();
    shape.put(api, true);
    let ended = run.end();
    ended.outcome.expect_code(0);
    ended.at - changed
}

#[test]
fn a_change_mid_wait_is_seen_through_the_watch_with_two_requests() {
    let runs = SHAPES.map(|shape| {
        let api = shape.api();
        let run = Running::spawn(&mut api.readygate(["wait", "-t", "30s", shape.url()]));
        (shape, api, run)
    });
    for (_, api, _) in &runs {
        api.wait_for_requests(2);
    }
    // The default schedule for a remote target: polling would send about ten GETs in 4 s.
    std::thread::sleep(Duration::from_secs(4));
    for (shape, api, run) in runs {
        let took = complete(&api, shape, run);
        // One GET (version 4712), then one watch from it, which brought the change.
        assert_eq!(requests(&api, shape), ["get", "watch@4712"], "{shape:?}");
        // Polling at this point would come up to 2 s later; a gross-regression guard only.
        assert!(
            took < time_limit(took, Duration::from_millis(1500)),
            "{shape:?}: {took:?}"
        );
        eprintln!("bench: {shape:?} watch, detection {} ms", took.as_millis());
    }
}

#[test]
fn a_missing_job_is_watched_from_now_and_its_creation_seen_at_once() {
    let api = ApiServer::start(TOKEN);
    let url = Shape::Job.url();
    let mut run = Running::spawn(&mut api.readygate(["wait", "-v", "-t", "30s", url]));
    run.line("no job migrate in shop (yet)");
    api.wait_for_requests(2);
    // The default schedule for a remote target: polling would send about ten GETs in 4 s.
    std::thread::sleep(Duration::from_secs(4));
    // Created, then done: the first event says not ready yet, the second ends the wait.
    Shape::Job.put(&api, false);
    let took = complete(&api, Shape::Job, run);
    // The GET's 404, then one watch without a version, which brought both changes.
    assert_eq!(requests(&api, Shape::Job), ["get", "watch@now"]);
    assert!(
        took < time_limit(took, Duration::from_millis(1500)),
        "{took:?}"
    );
    eprintln!(
        "bench: missing Job watched, detection {} ms",
        took.as_millis()
    );
}

#[test]
fn a_missing_job_is_polled_when_the_server_cannot_watch_from_now() {
    // Refused with an error event, or no answer at all within the attempt's time (a server
    // that waits for its cache to catch up first).
    for plan in [Watching::Refuse, Watching::Stall] {
        let api = ApiServer::start(TOKEN);
        api.watches(&[plan]);
        let args = [
            "wait",
            "-v",
            "-t",
            "30s",
            "--interval",
            "20ms",
            "--max-interval",
            "50ms",
        ];
        let mut command = api.readygate(args);
        let mut run = Running::spawn(command.arg(Shape::Job.url()));
        run.line("the API server cannot watch from now");
        api.wait_for_requests(6);
        Shape::Job.put(&api, true);
        let ended = run.end();
        ended.outcome.expect_code(0);
        // The attempts' reason stays the Job's absence, not the watch's failure.
        let stderr = &ended.outcome.stderr;
        assert!(
            stderr.matches("no answer to the watch").count() <= 1,
            "{stderr}"
        );
        assert!(!stderr.contains("attempt 3: the watch failed"), "{stderr}");
        // One failed watch, then GETs (each saying the Job is missing) until it exists.
        let seen = requests(&api, Shape::Job);
        assert_eq!(seen[..3], ["get", "watch@now", "get"], "{plan:?}: {seen:?}");
        let watches = seen.iter().filter(|r| r.starts_with("watch")).count();
        assert!(watches <= 2, "{plan:?}: {seen:?}");
    }
}

#[test]
fn a_watch_whose_api_server_vanished_is_given_up_within_seconds() {
    // The pod's own network, where its API connection can be cut without touching the host's.
    let pod = Pod::new("127.0.0.1 localhost\n");
    let api = ApiServer::start_in(&pod.net_namespace(), TOKEN);
    Shape::Job.put(&api, false);
    let iptables = require("iptables").display().to_string();
    let args = ["wait", "-v", "-t", "60s", Shape::Job.url()];
    let mut run = Running::spawn(&mut pod.enter(&api.readygate(args)));
    run.line("k8s://job/migrate: watching");
    // Every packet to and from the API server is lost from now on, as when its node is gone:
    // no FIN, no RST, only silence.
    let port = api.addr.port();
    let cut = Instant::now();
    pod.sh(&format!(
        "{iptables} -I INPUT -p tcp --sport {port} -j DROP && \
         {iptables} -I INPUT -p tcp --dport {port} -j DROP"
    ));
    // Without keepalive the stream would wait for its timeoutSeconds (4 to 8 minutes).
    let noticed = run.line_within(
        "the API server stopped answering: the watch's connection timed out",
        Duration::from_secs(40),
    );
    eprintln!(
        "bench: vanished API server noticed after {} ms",
        (noticed - cut).as_millis()
    );
    // The way back: the network returns, the next GET and watch find the Job done.
    pod.sh(&format!("{iptables} -F INPUT"));
    complete(&api, Shape::Job, run);
}

#[test]
fn a_pods_watch_judges_every_matching_pod_as_a_list_does() {
    let api = ApiServer::start(TOKEN);
    let pod =
        |name: &str, app: &str, ready| kube::pod(OWN_NAMESPACE, name, json!({"app": app}), ready);
    api.put(pod("web-1", "web", false));
    api.put(pod("web-2", "web", false));
    // Not selected: never part of the verdict.
    api.put(pod("db-1", "db", false));
    let url = "k8s://pods?selector=app=web";
    let mut run = Running::spawn(&mut api.readygate(["wait", "-v", "-t", "30s", url]));
    run.line("0 of 2 pods ready; not ready: web-1, web-2");
    api.put(pod("web-1", "web", true));
    run.line("1 of 2 pods ready; web-2 is not: Running, ContainersNotReady");
    api.put(pod("web-3", "web", false));
    run.line("1 of 3 pods ready; not ready: web-2, web-3");
    api.delete("Pod", "web-2");
    run.line("1 of 2 pods ready; web-3 is not");
    api.put(pod("web-3", "web", true));
    run.end().outcome.expect_code(0);
    assert_eq!(requests(&api, Shape::Pods), ["get", "watch@4714"]);
}

#[test]
fn a_service_watch_follows_its_slices_coming_and_going() {
    let api = Shape::Service.api();
    let mut run =
        Running::spawn(&mut api.readygate(["wait", "-v", "-t", "30s", "k8s://service/db"]));
    run.line("service db has no ready endpoint (1 not ready)");
    api.delete("EndpointSlice", "db-x7k2p");
    run.line("no EndpointSlice for service db in shop");
    api.put(kube::endpoint_slice(OWN_NAMESPACE, "db", &[None]));
    run.end().outcome.expect_code(0);
    assert_eq!(requests(&api, Shape::Service), ["get", "watch@4712"]);
}

#[test]
fn gone_by_status_or_by_event_relists_then_watches_from_the_new_version() {
    for shape in SHAPES {
        for gone in [Watching::Gone, Watching::GoneEvent] {
            let api = shape.api();
            api.watches(&[gone]);
            // A broken watch would re-list only after the 5 s interval; a gone one re-lists now.
            let args = ["wait", "-t", "20s", "--interval", "5s", shape.url()];
            let run = Running::spawn(&mut api.readygate(args));
            api.wait_for_requests(4);
            let took = run.started().elapsed();
            assert!(
                took < time_limit(took, Duration::from_secs(4)),
                "{shape:?} {gone:?}: {took:?}"
            );
            complete(&api, shape, run);
            let seen = requests(&api, shape);
            let relisted = ["get", "watch@4712", "get", "watch@4712"];
            assert_eq!(seen, relisted, "{shape:?} {gone:?}");
        }
    }
}

#[test]
fn a_stream_the_server_ends_resumes_from_the_last_event_or_bookmark() {
    for shape in SHAPES {
        let api = shape.api();
        api.watches(&[Watching::EndAfter(1), Watching::BookmarkThenEnd]);
        let run = Running::spawn(&mut api.readygate(["wait", "-t", "20s", shape.url()]));
        api.wait_for_requests(2);
        // A change that is not readiness: the one event of the first stream, version 4713.
        shape.put(&api, false);
        // Then a bookmark at 4714 ends the second; the third resumes there, without a GET.
        api.wait_for_requests(4);
        complete(&api, shape, run);
        let resumed = ["get", "watch@4712", "watch@4713", "watch@4714"];
        assert_eq!(requests(&api, shape), resumed, "{shape:?}");
    }
}

#[test]
fn watches_ask_for_timeouts_spread_at_random() {
    let api = Shape::Job.api();
    api.watches(&[Watching::BookmarkThenEnd; 6]);
    let run = Running::spawn(&mut api.readygate(["wait", "-t", "20s", "k8s://job/migrate"]));
    api.wait_for_requests(8);
    complete(&api, Shape::Job, run);
    let seconds: Vec<u64> = api
        .seen()
        .iter()
        .filter_map(|seen| seen.path.split_once('?'))
        .filter(|(_, query)| query.contains("watch=1"))
        .map(|(_, query)| param(query, "timeoutSeconds").unwrap().parse().unwrap())
        .collect();
    assert!(seconds.len() >= 7, "{seconds:?}");
    // 4 to 8 minutes, not one figure for every pod: a Deployment's pods started together
    // would otherwise come back together.
    assert!(
        seconds.iter().all(|s| (240..480).contains(s)),
        "{seconds:?}"
    );
    assert!(seconds.iter().any(|s| *s != seconds[0]), "{seconds:?}");
}

#[test]
fn a_stalled_watch_is_given_up_after_the_attempt_bound_then_relisted() {
    for shape in SHAPES {
        let api = shape.api();
        api.watches(&[Watching::Stall]);
        let attempt = given("300ms");
        let args = [
            "wait",
            "-t",
            "20s",
            "--attempt-timeout",
            &attempt,
            shape.url(),
        ];
        let run = Running::spawn(&mut api.readygate(args));
        api.wait_for_requests(4);
        complete(&api, shape, run);
        let relisted = ["get", "watch@4712", "get", "watch@4712"];
        assert_eq!(requests(&api, shape), relisted, "{shape:?}");
    }
}

#[test]
fn a_forbidden_watch_falls_back_to_polling_with_one_warning() {
    for shape in SHAPES {
        let api = shape.api();
        let (resource, grant) = shape.rbac();
        api.deny("watch", resource);
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
            shape.url(),
        ]));
        run.line(grant);
        api.wait_for_requests(6);
        let took = complete(&api, shape, run);
        assert!(
            took < time_limit(took, Duration::from_secs(2)),
            "{shape:?}: {took:?}"
        );
        let seen = requests(&api, shape);
        assert_eq!(seen[..2], ["get", "watch@4712"], "{seen:?}");
        assert!(seen[2..].iter().all(|r| r == "get"), "{seen:?}");
    }
}

#[test]
fn a_forbidden_watch_warns_once() {
    for shape in SHAPES {
        let api = shape.api();
        let (resource, grant) = shape.rbac();
        api.deny("watch", resource);
        let out = api
            .readygate([
                "wait",
                "-t",
                "1s",
                "--interval",
                "20ms",
                "--max-interval",
                "50ms",
                shape.url(),
            ])
            .outcome();
        out.expect_code(1);
        assert_eq!(out.stderr.matches(grant).count(), 1, "{out:#?}");
        let verb = if let Shape::Job = shape {
            "get"
        } else {
            "list"
        };
        let polling = format!("polling with {verb} instead");
        assert!(out.stderr.contains(&polling), "{out:#?}");
    }
}

#[test]
fn an_endless_watch_event_is_refused_at_the_answer_cap_in_bounded_memory() {
    for shape in SHAPES {
        let api = shape.api();
        api.watches(&[Watching::Endless; 64]);
        // -v: the reason shows in an attempt's line; the last one may be a re-list's GET.
        let out = measured(&mut api.readygate(["wait", "-v", "-t", "3s", shape.url()]));
        eprintln!(
            "bench: k8s:// endless watch event, {shape:?}: peak {} KiB",
            out.peak_kib
        );
        out.outcome
            .expect_code(1)
            .expect_stderr("a watch event from the API server is over 4 MiB");
        out.expect_memory_under(32);
    }
}

#[test]
fn a_flood_of_new_items_is_refused_at_the_list_cap_in_bounded_memory() {
    let api = Shape::Pods.api();
    api.watches(&[Watching::Flood; 64]);
    let url = Shape::Pods.url();
    let out = measured(&mut api.readygate(["wait", "-v", "-t", "3s", url]));
    eprintln!(
        "bench: k8s:// flood of watched pods: peak {} KiB",
        out.peak_kib
    );
    out.outcome
        .expect_code(1)
        .expect_stderr("the API server's answer is too large: more than 1000 items in a list");
    out.expect_memory_under(32);
}

#[test]
fn invert_waits_until_the_watched_pod_is_gone() {
    let api = ApiServer::start(TOKEN);
    api.put(kube::pod(OWN_NAMESPACE, "old", json!({}), true));
    let run =
        Running::spawn(&mut api.readygate(["wait", "-t", "20s", "--invert", "k8s://pod/old"]));
    api.wait_for_requests(2);
    let deleted = Instant::now();
    api.delete("Pod", "old");
    let ended = run.end();
    ended.outcome.expect_code(0);
    let took = ended.at - deleted;
    assert!(
        took < time_limit(took, Duration::from_millis(1500)),
        "{took:?}"
    );
    assert_eq!(api.seen().len(), 2, "{:?}", api.seen());
}

#[test]
fn invert_waits_until_every_matching_pod_is_gone() {
    let api = ApiServer::start(TOKEN);
    for name in ["old-1", "old-2"] {
        api.put(kube::pod(OWN_NAMESPACE, name, json!({"app": "old"}), true));
    }
    let url = "k8s://pods?selector=app=old";
    let mut run = Running::spawn(&mut api.readygate(["wait", "-v", "-t", "20s", "--invert", url]));
    // With --invert, "still ready" is an attempt that has not met the goal yet.
    run.line("attempt 1: still ready");
    api.wait_for_requests(2);
    api.delete("Pod", "old-1");
    // One pod left, ready: the inverted goal is not met yet.
    run.line("attempt 2: still ready");
    let deleted = Instant::now();
    api.delete("Pod", "old-2");
    let ended = run.end();
    ended.outcome.expect_code(0);
    let took = ended.at - deleted;
    assert!(
        took < time_limit(took, Duration::from_millis(1500)),
        "{took:?}"
    );
    assert_eq!(api.seen().len(), 2, "{:?}", api.seen());
}

/// bench/report.md's debug-build figures (bench/k8s_watch.sh measures the release binary):
/// requests one waiting pod sends over a fixed span, watching and polling (the watch refused),
/// and the detection latency of each. Run by hand with
/// `cargo test --test it k8s_watch::bench -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_requests_per_waiting_pod_watch_against_poll() {
    let span = Duration::from_secs(30);
    let runs: Vec<(&str, ApiServer, Running)> = ["watch", "poll"]
        .into_iter()
        .map(|how| {
            let api = Shape::Job.api();
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
        let took = complete(&api, Shape::Job, run);
        eprintln!(
            "bench: k8s:// {how}: {requests} requests in {}s, detection {} ms",
            span.as_secs(),
            took.as_millis()
        );
    }
}
