//! Every manifest in `examples/`, run unchanged in real containers with readygate's image and
//! the stand-ins: played by `podman kube play` where podman can, otherwise driven in the
//! kubelet's order (`kubelet.rs`). Each case checks that what the recipe promises happened, in
//! that order, from the containers' own output.

use std::sync::Arc;
use std::time::Duration;

use super::images::{FLUENTD, POSTGRES, REDIS};
use super::kubelet::{Kubelet, Pod};
use super::manifest;
use crate::support::kube::{self, ApiServer, JobState, OWN_NAMESPACE};

/// How long a pod may take to show what a case waits for.
const LIMIT: Duration = Duration::from_secs(60);

/// Asserts that the first startupProbe attempt of `container` failed with `reason` and a later
/// one passed: the probe ran in the container, said "not ready", then "ready".
fn assert_probe_failed_then_passed(pod: &Pod, container: &str, reason: &str) {
    let attempts = pod.steps(&format!("startupProbe {container}: "));
    let failed_first = attempts
        .first()
        .is_some_and(|a| !a.contains("exit 0") && a.contains(reason));
    let passed_last = attempts.last().is_some_and(|a| a.contains(": exit 0"));
    if !(attempts.len() >= 2 && failed_first && passed_last) {
        pod.fail(&format!(
            "the startupProbe of {container} should fail first ({reason}), then pass"
        ));
    }
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn install_and_wrap_played_by_podman_kube_play() {
    let manifest = manifest::load("install-and-wrap.yaml");
    let mut pod = Pod::play(&manifest);
    // The database listens 2 s after it starts; the app reports whether it did when it started.
    let log = pod.wait_for_log("app", "app: started", LIMIT);
    if !log.contains("app: started; the database listens on port 5432") {
        pod.fail("the app started before its database listened");
    }
    if !log.contains("tcp://127.0.0.1:5432") {
        pod.fail("the app's log shows no wait by /shared/readygate");
    }
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn native_sidecar_startup_probe_driven_in_kubelet_order() {
    let manifest = manifest::load("native-sidecar-startup-probe.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    pod.drive(Kubelet::BuiltInSidecars);
    // nginx's first answer is 503: the probe in the sidecar said so, then passed.
    assert_probe_failed_then_passed(&pod, "proxy", "status 503");
    pod.assert_before("startupProbe proxy: exit 0", "start app");
    pod.wait_for_log("app", "proxy served before app started", LIMIT);
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn native_sidecar_serve_driven_in_kubelet_order() {
    let manifest = manifest::load("native-sidecar-serve.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    pod.drive(Kubelet::BuiltInSidecars);
    // What the app's readinessProbe asks, as the manifest says it.
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/native-sidecar-serve.yaml");
    let text = std::fs::read_to_string(file).unwrap();
    let yaml = &yaml_rust2::YamlLoader::load_from_str(&text).unwrap()[0];
    let probe = &yaml["spec"]["containers"][0]["readinessProbe"]["httpGet"];
    let (path, port) = (
        probe["path"].as_str().unwrap(),
        probe["port"].as_i64().unwrap(),
    );
    let port = u16::try_from(port).unwrap();
    // As every output shows it: a URL's lone userinfo is hidden (docs/cli.md, "by its shape").
    let target = "postgres://***@db.default.svc:5432/orders";
    // The database is a Service elsewhere, not started yet: the app is not ready, and why.
    let (status, body) = pod.http_get(port, path);
    pod.step(format!("readinessProbe app: {status} {}", body.trim()));
    if status != 503 || !body.contains(&format!("{target}: ")) {
        pod.fail("the readinessProbe should say 503 and why while the database is down");
    }
    pod.start_extra("db", &[POSTGRES]);
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        let (status, body) = pod.http_get(port, path);
        pod.step(format!("readinessProbe app: {status} {}", body.trim()));
        if status == 200 {
            if body != format!("{target}: ready\n") {
                pod.fail("a ready answer should say the database is ready");
            }
            break;
        }
        if std::time::Instant::now() > deadline {
            pod.fail("the readinessProbe never passed once the database was up");
        }
        // The kubelet's probe period: this paces the probe, it synchronises nothing.
        std::thread::sleep(Duration::from_secs(1));
    }
    let (status, body) = pod.http_get(port, "/livez");
    if (status, body.as_str()) != (200, "ok\n") {
        pod.fail("the sidecar's /livez should answer 200 ok");
    }
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn native_sidecar_poststart_driven_in_kubelet_order() {
    let manifest = manifest::load("native-sidecar-poststart.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    pod.drive(Kubelet::BuiltInSidecars);
    pod.assert_before("postStart proxy: exit 0", "start app");
    pod.wait_for_log("app", "proxy served before app started", LIMIT);
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn job_native_sidecar_driven_in_kubelet_order() {
    let manifest = manifest::load("job-native-sidecar.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    pod.drive(Kubelet::BuiltInSidecars);
    // envoy's /ready says PRE_INITIALIZING (503) first.
    assert_probe_failed_then_passed(&pod, "envoy", "status 503");
    pod.assert_before("startupProbe envoy: exit 0", "start work");
    let codes = pod.complete_job(Kubelet::BuiltInSidecars, LIMIT);
    if codes != [("work".to_string(), 0)] {
        pod.fail(&format!("the Job's work did not succeed: {codes:?}"));
    }
    let log = pod.logs("work");
    if !(log.contains("working") && log.contains("done")) {
        pod.fail("the work did not run to its end");
    }
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn job_legacy_sidecar_on_exit_driven_in_kubelet_order() {
    let manifest = manifest::load("job-legacy-sidecar-on-exit.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    pod.drive(Kubelet::BuiltInSidecars);
    let work = pod.wait_exit("work", LIMIT);
    if work != 0 || !pod.logs("work").contains("done") {
        pod.fail("the work did not run to its end with status 0");
    }
    // readygate told envoy to quit, so the old-style sidecar ends and the Job can complete.
    let envoy = pod.wait_exit("envoy", Duration::from_secs(20));
    if envoy != 0 || !pod.logs("envoy").contains("envoy: POST /quitquitquit") {
        pod.fail("envoy did not exit through POST /quitquitquit");
    }
    pod.assert_before("exit work", "exit envoy");
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn readiness_by_file_driven_in_kubelet_order() {
    let manifest = manifest::load("readiness-by-file.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    // The aggregator is a Service elsewhere: here a container on the pod's loopback, under the
    // manifest's name (run.sh resolves it to 127.0.0.1), started once the sidecar's probe has
    // said "not ready".
    pod.when_held("log-shipper", |pod| pod.start_extra("fluentd", &[FLUENTD]));
    pod.drive(Kubelet::BuiltInSidecars);
    assert_probe_failed_then_passed(&pod, "log-shipper", "file:///shared/ready");
    pod.assert_before("start fluentd", "startupProbe log-shipper: exit 0");
    pod.assert_before("startupProbe log-shipper: exit 0", "start app");
    pod.wait_for_log("log-shipper", "fluent-bit: running", LIMIT);
    pod.wait_for_log("app", "the log shipper was up before this line", LIMIT);
    if pod.volume_file("shared", "ready").is_none() {
        pod.fail("/shared/ready was not created");
    }
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn universal_sidecar_driven_on_a_kubelet_with_built_in_sidecars() {
    let manifest = manifest::load("universal-sidecar.yaml");
    let mut pod = Pod::new(&manifest, "native");
    pod.drive(Kubelet::BuiltInSidecars);
    // The first run wrote first-run and exited; restarted, it says native and runs nginx.
    let (state, restarts) = pod.state("proxy-native");
    if state != "running" || restarts < 1 {
        pod.fail(&format!(
            "proxy-native should run after a restart: {state}, {restarts} restarts"
        ));
    }
    pod.assert_before("startupProbe proxy-native: exit 0", "start proxy-legacy");
    pod.wait_for_log("proxy-native", "nginx: serving", LIMIT);
    pod.wait_for_log("proxy-legacy", "the native sidecar runs", LIMIT);
    if pod.logs("proxy-legacy").contains("nginx:") {
        pod.fail("proxy-legacy ran nginx beside the native sidecar");
    }
    if pod.volume_file("shared", "sidecar-state").as_deref() != Some("native\n") {
        pod.fail("the state file does not say native");
    }
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn universal_sidecar_driven_on_a_kubelet_without_built_in_sidecars() {
    let manifest = manifest::load("universal-sidecar.yaml");
    let mut pod = Pod::new(&manifest, "legacy");
    pod.drive(Kubelet::NoBuiltInSidecars);
    // proxy-native ran once as a plain init container; proxy-legacy waits out its 10 s grace,
    // then runs nginx itself.
    pod.assert_before("exit proxy-native: 0", "start proxy-legacy");
    if pod.volume_file("shared", "sidecar-state").as_deref() != Some("first-run\n") {
        pod.fail("the state file does not say first-run");
    }
    pod.wait_for_log("proxy-legacy", "nginx: serving", Duration::from_secs(40));
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn init_container_postgres_redis_driven_in_kubelet_order() {
    // Driven, not played: podman 4.3's kube play does not expand $(REDIS_PASSWORD) in a command.
    let manifest = manifest::load("init-container-postgres-redis.yaml");
    let mut pod = Pod::new(&manifest, "driven");
    let password = "s3cret-from-the-secret";
    pod.secret("cache", "password", password);
    // db.default.svc and cache.default.svc are Services elsewhere: here containers on the pod's
    // loopback, started once the init container is seen waiting.
    pod.when_held("wait-for-db-and-cache", move |pod| {
        pod.start_extra("db", &[POSTGRES]);
        let secret = format!("REDIS_PASSWORD={password}");
        pod.start_extra("cache", &["--env", &secret, REDIS]);
    });
    pod.drive(Kubelet::BuiltInSidecars);
    pod.assert_before("exit wait-for-db-and-cache: 0", "start app");
    pod.wait_for_log(
        "app",
        "app: started; the database listens on port 5432",
        LIMIT,
    );
    // Each answered "not ready" once (starting up, loading) before readygate let the app go.
    let db = pod.logs("db");
    if !(db.contains("57P03") && db.contains("asked for a password")) {
        pod.fail("the database did not answer 57P03, then a password request");
    }
    let cache = pod.logs("cache");
    let told = ["AUTH accepted", "answered LOADING", "answered PONG"];
    if !told.iter().all(|line| cache.contains(line)) || cache.contains("AUTH refused") {
        pod.fail("the cache did not get the Secret's password, then LOADING, then PONG");
    }
    if pod.logs("wait-for-db-and-cache").contains(password) {
        pod.fail("the Redis password reached readygate's output");
    }
    pod.print_timeline();
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn wait_for_migration_job_driven_in_kubelet_order() {
    // The ServiceAccount, Role and RoleBinding are the API server's business: the stand-in
    // accepts the service account's token and nothing else.
    let workloads = manifest::load_all("wait-for-migration-job.yaml");
    let job = workloads
        .iter()
        .find(|w| w.kind == "Job")
        .expect("a Job")
        .clone();
    let web = workloads
        .iter()
        .find(|w| w.kind == "Deployment")
        .expect("a Deployment");
    let api = Arc::new(ApiServer::start("wait-for-migration-job-token"));
    let path = format!(
        "/apis/batch/v1/namespaces/{OWN_NAMESPACE}/jobs/{}",
        job.name
    );
    let mut pods = Vec::new();
    for replica in 1..=web.replicas {
        // The API server is on the host's 127.0.0.1: these pods share the host's network.
        let mut pod = Pod::with_network(web, &replica.to_string(), "host");
        pod.service_account(api.account_dir(), api.addr.port());
        if replica == 1 {
            // The Job does not exist when the first replica starts: the Job controller creates
            // it, its pod runs the migration, and it completes, all while the replica waits.
            let (job, api) = (job.clone(), api.clone());
            pod.when_held("wait-for-migration", move |pod| {
                api.put(kube::job(OWN_NAMESPACE, &job.name, JobState::Running));
                pod.step(format!("Job {} created, 1 active", job.name));
                let mut migration = Pod::new(&job, "pod");
                migration.drive(Kubelet::BuiltInSidecars);
                let codes = migration.complete_job(Kubelet::BuiltInSidecars, LIMIT);
                if codes != [("migrate".to_string(), 0)] {
                    migration.fail(&format!("the migration failed: {codes:?}"));
                }
                migration.print_timeline();
                api.put(kube::job(OWN_NAMESPACE, &job.name, JobState::Complete));
                pod.step(format!("Job {} complete", job.name));
            });
        }
        pod.drive(Kubelet::BuiltInSidecars);
        if replica == 1 {
            pod.assert_before("Job db-migrate complete", "exit wait-for-migration: 0");
        }
        pod.assert_before("exit wait-for-migration: 0", "start app");
        pod.wait_for_log("app", "app: started", LIMIT);
        pod.print_timeline();
        pods.push(pod);
    }
    // The GETs: not found (the first replica, which then watched from now), then the
    // complete Job (the second); never a 401.
    let answers = api.answers(&path);
    println!("  API server answers to GET {path}: {answers:?}");
    assert_eq!(answers.first(), Some(&404), "{answers:?}");
    assert!(answers.contains(&200), "{answers:?}");
    assert!(
        !answers.contains(&401),
        "the service account token was refused: {answers:?}"
    );
    let watches = api.watch_versions();
    assert!(
        watches.contains(&String::new()),
        "no watch from now: {watches:?}"
    );
}
