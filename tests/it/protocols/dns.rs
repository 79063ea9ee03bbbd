//! `dns://NAME` resolved as in a pod: the hosts file, then the cluster's DNS with its search
//! list and `ndots:5`.

use crate::support::pod::Pod;
use crate::support::run::{finish, RunExt};
use crate::support::wait_until;

const HOSTS: &str = "127.0.0.1 localhost\n::1 localhost\n10.0.0.7 legacy-db\n";

#[test]
fn a_service_name_is_ready_once_it_resolves() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[("db.default.svc.cluster.local", "10.0.0.9")]);
    for target in [
        "dns://db",
        "dns://db.default.svc",
        "dns://legacy-db",
        "dns://localhost",
    ] {
        let outcome = pod.readygate(["probe", target]).outcome();
        assert_eq!(
            outcome.code,
            Some(0),
            "{target}: {outcome:#?}\n{}",
            pod.dns_log()
        );
    }
    pod.readygate(["probe", "dns://cache"])
        .outcome()
        .expect_code(1)
        .expect_stdout("dns://cache: no such host cache");
    pod.readygate(["probe", "--invert", "dns://cache"])
        .outcome()
        .expect_code(0);
}

#[test]
fn waiting_for_a_name_ends_when_it_is_published() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[("other.default.svc.cluster.local", "10.0.0.9")]);
    let (child, started) = pod
        .readygate(["wait", "--timeout", "30s", "dns://queue"])
        .spawn_captured();
    // Published only once the wait has asked for it and been told there is no such name.
    wait_until("dnsmasq to deny the name", || {
        pod.dns_log()
            .contains("queue.default.svc.cluster.local is NXDOMAIN")
    });
    pod.stop_dns();
    pod.start_dns(&[("queue.default.svc.cluster.local", "10.0.0.11")]);
    finish(child, started)
        .expect_code(0)
        .expect_stderr("dns://queue: ready");
}
