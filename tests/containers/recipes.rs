//! Every manifest in `examples/`, run unchanged in real containers with readygate's image and
//! the stand-ins: played by `podman kube play` where podman can, otherwise driven in the
//! kubelet's order (`kubelet.rs`). Each case checks that what the recipe promises happened, in
//! that order, from the containers' own output.

use std::time::Duration;

use crate::images::FLUENTD;
use crate::kubelet::{Kubelet, Pod};
use crate::manifest;

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
    // The app image's /app/server checks that the database (up 2 s after it starts) serves.
    let log = pod.wait_for_log("app", "app: ", LIMIT);
    if !log.contains("app: the database served before the app started") {
        pod.fail("the app started before its database served");
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
    // The aggregator is a Service elsewhere: here a container in the pod's loopback, named as
    // the manifest names it, started only once the sidecar's probe has said "not ready".
    pod.resolve_to_loopback(&["fluentd.logging.svc.cluster.local"]);
    pod.on_first_failed_probe(|pod| pod.start_extra("fluentd", &[FLUENTD]));
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
