//! Names as in a pod: readygate runs in private namespaces where `/etc/resolv.conf` has the
//! cluster's search list with `ndots:5` and dnsmasq on 127.0.0.1:53 answers Service names (or a
//! small responder that counts queries); `/etc/hosts` is a temp file too. Both files are read
//! at every lookup; DNS answers are kept for their TTL.

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use crate::support::dns::{Responder, Zone};
use crate::support::events::comes_to_hold;
use crate::support::nginx::Nginx;
use crate::support::pod::Pod;
use crate::support::run::{finish, RunExt};
use crate::support::{wait_until, Running};

/// Record types as numbers.
const A: u16 = 1;
const AAAA: u16 = 28;

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
    // Time enough for a loaded machine to hear dnsmasq's answer: the reason is that answer,
    // not a lookup still in flight at the deadline.
    let outcome = pod
        .readygate([
            "probe",
            "-t",
            "10s",
            "--attempt-timeout",
            "10s",
            "http://missing/",
        ])
        .outcome();
    outcome.expect_code(1);
    assert_eq!(outcome.stdout, "http://missing/: no such host missing\n");
    pod.readygate([
        "wait",
        "--timeout",
        "3s",
        "--attempt-timeout",
        "3s",
        "tcp://missing.other:80",
    ])
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
    let mut running = Running::spawn(&mut pod.readygate([
        "wait",
        "-v",
        "--timeout",
        "30s",
        "http://db.internal/",
    ]));
    running.line("attempt 1: ");
    running.expect_running("ready before the entry");
    // Rewritten in place: the bind mount shows the same file.
    std::fs::write(&pod.hosts, format!("{HOSTS}127.0.0.1 db.internal\n")).unwrap();
    running
        .finish()
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(15));
}

#[test]
fn a_service_created_while_waiting_is_seen() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[]);
    let _web = web(&pod);
    let mut running =
        Running::spawn(&mut pod.readygate(["wait", "--timeout", "30s", "-v", "http://late/"]));
    running.line("attempt 1: ");
    running.expect_running("ready before the Service");
    pod.stop_dns();
    pod.start_dns(&[("late.default.svc.cluster.local", "127.0.0.1")]);
    let outcome = running.finish();
    outcome
        .expect_code(0)
        .expect_stderr("no such host late")
        .expect_faster_than(Duration::from_secs(15));
}

#[test]
fn a_changed_address_is_seen_once_its_ttl_runs_out() {
    let pod = Pod::new(HOSTS);
    // First the name points where nothing listens, with a 2 s TTL; then it is moved.
    let name = "moved.default.svc.cluster.local";
    let zone = |ip: [u8; 4]| Zone {
        records: vec![(name.into(), Ipv4Addr::from(ip))],
        ttl: 2,
        negative_ttl: Some(5),
        silent: false,
    };
    let dns = Responder::start(
        &pod.net_namespace(),
        "127.0.0.1:53".parse().unwrap(),
        zone([127, 0, 0, 2]),
    );
    let _web = web(&pod);
    let (child, started) = pod
        .readygate([
            "wait",
            "--timeout",
            "30s",
            "--interval",
            "20ms",
            "--max-interval",
            "50ms",
            "tcp://moved:80",
        ])
        .spawn_captured();
    wait_until("the first question for the name", || {
        dns.count(name, A) >= 1
    });
    dns.set_zone(zone([127, 0, 0, 1]));
    let outcome = finish(child, started);
    outcome
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(15))
        // Seen only when the old answer expired, not at the next attempt.
        .expect_slower_than(Duration::from_millis(1900));
    assert_eq!(dns.count(name, A), 2, "{:?}", dns.queries());
}

#[test]
fn on_exit_reuses_the_runs_answers() {
    // `--on-exit`'s notice goes to the host the target resolved: within the answers' TTL it
    // asks DNS nothing more.
    let name = "web.default.svc.cluster.local";
    let (pod, dns) = counted(Zone {
        records: vec![(name.into(), Ipv4Addr::LOCALHOST)],
        ttl: 60,
        negative_ttl: Some(60),
        silent: false,
    });
    let _web = web(&pod);
    let notice = ["--on-exit", "http://web/done", "--", "true"];
    pod.readygate([&["wait", "http://web/"][..], &notice].concat())
        .outcome()
        .expect_code(0)
        .expect_stderr("POST http://web/done: status 200");
    assert_eq!(dns.count(name, A), 1, "{:?}", dns.queries());
    assert_eq!(dns.count(name, AAAA), 1, "{:?}", dns.queries());
}

/// A pod whose resolv.conf points at a [`Responder`] serving `zone` on 127.0.0.1:53.
fn counted(zone: Zone) -> (Pod, Responder) {
    let pod = Pod::new(HOSTS);
    let dns = Responder::start(&pod.net_namespace(), "127.0.0.1:53".parse().unwrap(), zone);
    (pod, dns)
}

/// `wait` on `target` for `timeout`, retrying every 20-50 ms; returns how many attempts it made.
fn poll(pod: &Pod, timeout: &str, target: &str) -> usize {
    let outcome = pod
        .readygate([
            "wait",
            "-v",
            "--timeout",
            timeout,
            "--interval",
            "20ms",
            "--max-interval",
            "50ms",
            target,
        ])
        .outcome();
    outcome.expect_code(1);
    outcome.stderr.matches(": attempt ").count()
}

#[test]
fn answers_are_kept_for_their_ttl() {
    // `db` resolves to an address where nothing listens; A has TTL 2 s, AAAA is NODATA with an
    // SOA of 5 s: over 3 s of attempts every 20-50 ms, A is asked twice and AAAA once.
    let name = "db.default.svc.cluster.local";
    let (pod, dns) = counted(Zone {
        records: vec![(name.into(), Ipv4Addr::new(127, 0, 0, 2))],
        ttl: 2,
        negative_ttl: Some(5),
        silent: false,
    });
    let attempts = poll(&pod, "3s", "tcp://db:80");
    assert!(attempts >= 15, "{attempts} attempts: too few to tell");
    assert_eq!(dns.count(name, A), 2, "{:?}", dns.queries());
    assert_eq!(dns.count(name, AAAA), 1, "{:?}", dns.queries());
    assert_eq!(dns.queries().len(), 3, "only the first candidate is asked");
}

#[test]
fn answers_are_kept_at_most_30_s_and_negative_ones_at_most_5_s() {
    // A has a TTL of a day, and AAAA is NODATA with an SOA of a day: the caps decide. Over
    // 32 s, A is asked at 0 and 30 s; AAAA at 0, 5, 10 … 30 s.
    let name = "db.default.svc.cluster.local";
    let (pod, dns) = counted(Zone {
        records: vec![(name.into(), Ipv4Addr::new(127, 0, 0, 2))],
        ttl: 86_400,
        negative_ttl: Some(86_400),
        silent: false,
    });
    let attempts = poll(&pod, "32s", "tcp://db:80");
    assert!(attempts >= 100, "{attempts} attempts: too few to tell");
    let asked = |qtype| dns.count(name, qtype);
    assert_eq!(asked(A), 2, "{:?}", dns.queries());
    assert_eq!(asked(AAAA), 7, "{:?}", dns.queries());
}

#[test]
fn a_missing_name_is_kept_for_the_soa_ttl_and_only_with_one() {
    // Each of the four names the search list makes is NXDOMAIN with an SOA of 1 s: over 2.5 s
    // each is asked about three times per type, not once per attempt.
    let (pod, dns) = counted(Zone {
        negative_ttl: Some(1),
        ..Zone::default()
    });
    let attempts = poll(&pod, "2500ms", "tcp://missing:80");
    assert!(attempts >= 15, "{attempts} attempts: too few to tell");
    for name in ["missing.default.svc.cluster.local", "missing"] {
        for qtype in [A, AAAA] {
            let count = dns.count(name, qtype);
            assert!((2..=4).contains(&count), "{name} {qtype}: {count} queries");
        }
    }
    // Without an SOA a negative answer is not kept (RFC 2308), nor is a TTL of 0.
    for zone in [
        Zone::default(),
        Zone {
            records: vec![(
                "db.default.svc.cluster.local".into(),
                Ipv4Addr::new(127, 0, 0, 2),
            )],
            ttl: 0,
            negative_ttl: Some(0),
            silent: false,
        },
    ] {
        let (pod, dns) = counted(zone.clone());
        let attempts = poll(&pod, "1s", "tcp://db:80");
        // One query per attempt, give or take the last: the attempt in flight at the deadline
        // has asked but is never logged as ended, and on a loaded machine a last attempt can
        // start with no time left and end ("no answer within 0ms") before it asks. The
        // responder's thread may still be taking the last query in.
        let count = || dns.count("db.default.svc.cluster.local", A);
        comes_to_hold(|| count() + 1 >= attempts);
        let count = count();
        assert!(
            (attempts - 1..=attempts + 1).contains(&count),
            "{zone:?}: one query per attempt: {count} queries, {attempts} attempts"
        );
    }
}

#[test]
fn a_and_aaaa_of_one_lookup_share_one_socket() {
    let (pod, dns) = counted(Zone {
        negative_ttl: Some(5),
        ..Zone::default()
    });
    pod.readygate(["probe", "tcp://missing:80"])
        .outcome()
        .expect_code(1)
        .expect_stdout("no such host missing");
    let queries = dns.queries();
    assert_eq!(queries.len(), 8, "four names, two types: {queries:?}");
    let ports: HashSet<SocketAddr> = queries.iter().map(|q| q.from).collect();
    assert_eq!(ports.len(), 1, "one source port: {queries:?}");
}

/// A pod's resolv.conf naming a dead nameserver (127.0.0.53, which drops every query) before
/// a good one, with a 1 s timeout per server.
const DEAD_FIRST: &str = "nameserver 127.0.0.53
nameserver 127.0.0.1
search default.svc.cluster.local svc.cluster.local cluster.local
options ndots:5 timeout:1
";

#[test]
fn a_dead_first_nameserver_is_passed_over_across_attempts() {
    let pod = Pod::with_resolv_conf(HOSTS, DEAD_FIRST);
    let netns = pod.net_namespace();
    let dead = Responder::start(
        &netns,
        "127.0.0.53:53".parse().unwrap(),
        Zone {
            silent: true,
            ..Zone::default()
        },
    );
    let good = Responder::start(
        &netns,
        "127.0.0.1:53".parse().unwrap(),
        Zone {
            records: vec![("web.default.svc.cluster.local".into(), Ipv4Addr::LOCALHOST)],
            ttl: 5,
            negative_ttl: Some(5),
            silent: false,
        },
    );
    let _web = web(&pod);
    // Each attempt ends before the dead server's 1 s is up: only by remembering it across
    // attempts does a lookup reach the good one.
    let outcome = pod
        .readygate([
            "wait",
            "-v",
            "--timeout",
            "10s",
            "--attempt-timeout",
            "500ms",
            "http://web/",
        ])
        .outcome();
    outcome
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(5))
        .expect_stderr("cannot resolve web (DNS: 127.0.0.53:53 timed out)");
    assert!(
        !dead.queries().is_empty(),
        "the dead server was never asked"
    );
    assert!(dead.queries().len() <= 2, "{:?}", dead.queries());
    assert!(!good.queries().is_empty());
}

#[test]
fn dns_trouble_is_the_reason_not_a_bare_timeout() {
    let pod = Pod::with_resolv_conf(
        HOSTS,
        DEAD_FIRST.replace("nameserver 127.0.0.1\n", "").as_str(),
    );
    let _dead = Responder::start(
        &pod.net_namespace(),
        "127.0.0.53:53".parse().unwrap(),
        Zone {
            silent: true,
            ..Zone::default()
        },
    );
    pod.readygate(["probe", "--timeout", "700ms", "tcp://web:80"])
        .outcome_at(Duration::from_millis(700))
        .expect_code(1)
        .expect_stdout("tcp://web:80: cannot resolve web (DNS: 127.0.0.53:53 timed out)")
        .expect_ended_at(Duration::from_millis(700));
}

#[test]
fn hosts_and_resolv_conf_that_are_not_regular_files_are_ignored() {
    let mut pod = Pod::new(HOSTS);
    pod.start_dns(&[("web.default.svc.cluster.local", "127.0.0.1")]);
    let _nginx = web(&pod);
    // A FIFO with no writer would block a reader forever; /dev/zero never ends.
    pod.sh(
        "mkfifo /tmp/readygate-fifo-$$ && mount --bind /tmp/readygate-fifo-$$ /etc/hosts && \
            rm /tmp/readygate-fifo-$$ && mount --bind /dev/zero /etc/resolv.conf",
    );
    // localhost needs neither file; `web` falls back to the defaults (127.0.0.1, no search
    // list), where dnsmasq says it does not exist.
    // Well inside the deadline: neither file held a lookup up.
    pod.readygate(["probe", "--timeout", "10s", "http://localhost/"])
        .outcome()
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(5));
    pod.readygate(["probe", "--timeout", "10s", "http://web/"])
        .outcome()
        .expect_code(1)
        .expect_stdout("no such host web")
        .expect_faster_than(Duration::from_secs(5));
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
    // Said at once, not at the deadline.
    let outcome = pod
        .readygate(["probe", "--timeout", "10s", "tcp://web:80"])
        .outcome();
    outcome
        .expect_code(1)
        .expect_stdout("cannot resolve web (DNS: 127.0.0.1:53: connection refused)")
        .expect_faster_than(std::time::Duration::from_secs(5));
}
