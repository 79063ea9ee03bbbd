//! Names as in a pod: readygate runs in private namespaces where `/etc/resolv.conf` has the
//! cluster's search list with `ndots:5` and dnsmasq on 127.0.0.1:53 answers Service names;
//! `/etc/hosts` is a temp file too. Names are resolved afresh on every attempt.

use std::time::Duration;

use crate::support::nginx::Nginx;
use crate::support::pod::Pod;
use crate::support::run::{finish, RunExt};

const HOSTS: &str = "127.0.0.1 localhost\n::1 localhost\n";

/// A web server in the pod on 127.0.0.1:80 (each pod has its own loopback).
fn web(pod: &Pod) -> Nginx {
    pod.start_nginx("server { listen 127.0.0.1:80; location / { return 200 \"web ok\\n\"; } }")
}

#[test]
fn service_names_resolve_through_the_search_list() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[("web.default.svc.cluster.local", "127.0.0.1")]);
    let _web = web(&pod);
    for target in [
        "http://web/",
        "http://web:80/",
        "tcp://web.default:80",
        "tcp://web.default.svc:80",
        "tcp://web.default.svc.cluster.local.:80",
    ] {
        let outcome = pod.readygate(["probe", target]).outcome();
        assert_eq!(
            outcome.code,
            Some(0),
            "{target}: {outcome:#?}\n{}",
            pod.dns_log()
        );
    }
    pod.readygate([
        "wait",
        "--timeout",
        "10s",
        "--contains",
        "web ok",
        "http://web/",
    ])
    .outcome()
    .expect_code(0);
}

#[test]
fn ndots_puts_the_search_list_before_the_name_as_written() {
    let mut pod = Pod::new(HOSTS);
    // `api.example` exists both as written (where nothing listens) and under the namespace's
    // domain (where the server is): with ndots:5 a one-dot name is tried with the suffixes first.
    pod.start_dns(&[
        ("api.example", "127.0.0.2"),
        ("api.example.default.svc.cluster.local", "127.0.0.1"),
    ]);
    let _web = web(&pod);
    pod.readygate(["probe", "tcp://api.example:80"])
        .outcome()
        .expect_code(0);
    // A trailing dot means "as written": no suffix, so the address with no server.
    pod.readygate(["probe", "tcp://api.example.:80"])
        .outcome()
        .expect_code(1)
        .expect_stdout("connection refused to 127.0.0.2:80");
}

#[test]
fn a_missing_name_is_not_ready_and_named() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[("web.default.svc.cluster.local", "127.0.0.1")]);
    let outcome = pod.readygate(["probe", "http://missing/"]).outcome();
    outcome.expect_code(1);
    assert_eq!(outcome.stdout, "http://missing/: no such host missing\n");
    pod.readygate(["wait", "--timeout", "500ms", "tcp://missing.other:80"])
        .outcome()
        .expect_code(1)
        .expect_stderr("no such host missing.other");
}

#[test]
fn localhost_works_on_either_loopback() {
    // Whatever the hosts file says of localhost (both, one, nothing), both loopbacks are tried.
    for hosts in [HOSTS, "127.0.0.1 localhost\n", ""] {
        let pod = Pod::new(hosts);
        let _nginx = pod.start_nginx(
            "server { listen 127.0.0.1:8004; location / { return 200; } }
             server { listen [::1]:8006; location / { return 200; } }",
        );
        for target in [
            "tcp://localhost:8004",
            "tcp://localhost:8006",
            "http://localhost:8006/",
        ] {
            let outcome = pod.readygate(["probe", target]).outcome();
            assert_eq!(
                outcome.code,
                Some(0),
                "{target} with hosts {hosts:?}: {outcome:#?}"
            );
        }
    }
}

#[test]
fn a_hosts_entry_added_while_waiting_is_seen() {
    let pod = Pod::new(HOSTS);
    let _web = web(&pod);
    let (mut child, started) = pod
        .readygate(["wait", "--timeout", "30s", "http://db.internal/"])
        .spawn_captured();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "ready before the entry"
    );
    // Rewritten in place: the bind mount shows the same file.
    std::fs::write(&pod.hosts, format!("{HOSTS}127.0.0.1 db.internal\n")).unwrap();
    finish(child, started)
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(15));
}

#[test]
fn a_service_created_while_waiting_is_seen() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[]);
    let _web = web(&pod);
    let (mut child, started) = pod
        .readygate(["wait", "--timeout", "30s", "-v", "http://late/"])
        .spawn_captured();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        child.try_wait().unwrap().is_none(),
        "ready before the Service"
    );
    pod.stop_dns();
    pod.start_dns(&[("late.default.svc.cluster.local", "127.0.0.1")]);
    let outcome = finish(child, started);
    outcome
        .expect_code(0)
        .expect_stderr("no such host late")
        .expect_faster_than(Duration::from_secs(15));
}

#[test]
fn a_changed_address_is_seen_despite_its_ttl() {
    let mut pod = Pod::new(HOSTS);
    // First the name points where nothing listens, with a 30 s TTL; then it is moved.
    pod.start_dns(&[("moved.default.svc.cluster.local", "127.0.0.2")]);
    let _web = web(&pod);
    let (mut child, started) = pod
        .readygate(["wait", "--timeout", "30s", "tcp://moved:80"])
        .spawn_captured();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        child.try_wait().unwrap().is_none(),
        "ready at the old address"
    );
    pod.stop_dns();
    pod.start_dns(&[("moved.default.svc.cluster.local", "127.0.0.1")]);
    finish(child, started)
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(15));
}

#[test]
fn a_long_answer_is_fetched_over_tcp() {
    let mut pod = Pod::new(HOSTS);
    // Sixty addresses do not fit a 512-byte UDP answer: dnsmasq truncates it, and the
    // resolver must ask again over TCP. Only 127.0.0.1 has a server; the others refuse.
    let addresses: Vec<String> = (1..=60).map(|n| format!("127.0.0.{n}")).collect();
    let records: Vec<(&str, &str)> = addresses
        .iter()
        .map(|address| ("many.default.svc.cluster.local", address.as_str()))
        .collect();
    pod.start_dns(&records);
    let _web = web(&pod);
    let outcome = pod.readygate(["probe", "-v", "http://many/"]).outcome();
    assert_eq!(outcome.code, Some(0), "{outcome:#?}\n{}", pod.dns_log());
    assert!(pod
        .dns_log()
        .contains("query[A] many.default.svc.cluster.local"));
}

#[test]
fn no_dns_server_is_named_as_the_reason() {
    let pod = Pod::new(HOSTS);
    let outcome = pod.readygate(["probe", "tcp://web:80"]).outcome();
    outcome
        .expect_code(1)
        .expect_stdout("no such host web (DNS: 127.0.0.1:53: connection refused)")
        .expect_faster_than(std::time::Duration::from_secs(1));
}
