//! `grpc://` and `grpcs://` against a real etcd, whose client port serves the standard
//! `grpc.health.v1.Health`: ready while it serves, not ready once stopped, an unknown service
//! named as such, over TLS and through a Unix socket.

use crate::support::certs::Certs;
use crate::support::etcd::Etcd;
use crate::support::grpc::{GrpcServer, Health};
use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{free_port, readygate, Running};

#[test]
fn etcd_health_follows_the_server() {
    let port = free_port();
    let target = format!("grpc://127.0.0.1:{port}");
    let mut running = Running::spawn(&mut readygate(["wait", "-v", "--timeout", "90s", &target]));
    running.line("attempt 1: connection refused");
    running.expect_running("ready before etcd started");
    let mut etcd = Etcd::start_on(port, None);
    running
        .finish()
        .expect_code(0)
        .expect_stderr(&format!("{target}: ready after"));

    let outcome = readygate(["probe", &target]).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stdout, "");
    readygate(["probe", &format!("grpc://localhost:{port}")])
        .outcome()
        .expect_code(0);

    // etcd's health server answers NOT_FOUND for a service it does not know.
    let unknown = format!("grpc://127.0.0.1:{port}/no.such.Service");
    readygate(["probe", &unknown])
        .outcome()
        .expect_code(1)
        .expect_stdout("SERVICE_UNKNOWN (grpc-status 5 NOT_FOUND: unknown service)");

    etcd.stop();
    readygate(["probe", &target])
        .outcome()
        .expect_code(1)
        .expect_stdout("connection refused");
}

#[test]
fn grpc_through_a_unix_socket() {
    let etcd = Etcd::start(None);
    let socket = etcd.socket.to_str().unwrap();
    // As curl's --unix-socket: the URL's host is the :authority, never resolved.
    readygate(["probe", "--unix-socket", socket, "grpc://etcd.invalid:2379"])
        .outcome()
        .expect_code(0);
    readygate(["probe", &format!("unix://{socket}")])
        .outcome()
        .expect_code(0);
}

#[test]
fn grpcs_verifies_the_certificate() {
    let certs = Certs::localhost();
    let etcd = Etcd::start(Some(&certs));
    let port = etcd.addr.port();
    let target = format!("grpcs://localhost:{port}");
    readygate(["probe", &target])
        .outcome()
        .expect_code(1)
        .expect_stdout("certificate signed by an unknown authority");
    let trusted = readygate(["probe", "--cacert", certs.ca.to_str().unwrap(), &target]).outcome();
    trusted.expect_code(0);
    // A server that does not ask for a client certificate hears nothing of one.
    assert_eq!(trusted.stderr, "", "{trusted:#?}");
    readygate(["probe", "--insecure", &target])
        .outcome()
        .expect_code(0);
    readygate([
        "probe",
        "--cacert",
        certs.ca.to_str().unwrap(),
        "--unix-socket",
        etcd.socket.to_str().unwrap(),
        "grpcs://localhost:2379",
    ])
    .outcome()
    .expect_code(0);
    // Plain HTTP/2 to a TLS port is a transport failure, named so.
    readygate(["probe", &format!("grpc://127.0.0.1:{port}")])
        .outcome()
        .expect_code(1)
        .expect_stdout("gRPC transport");
}

#[test]
fn an_http1_server_is_a_grpc_transport_failure() {
    let server = HttpServer::start(|_, _| Answer::body("not grpc"));
    let url = server.url("/");
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    readygate(["probe", &format!("grpc://{authority}")])
        .outcome()
        .expect_code(1)
        .expect_stdout("gRPC transport");
}

#[test]
fn every_health_answer_is_reported_by_name() {
    let server = GrpcServer::start(|service| match service {
        "" | "ready" => Health::Status(1),
        "draining" => Health::Status(2),
        "vague" => Health::Status(0),
        "watch-only" => Health::Status(3),
        _ => Health::Fail(12, "unknown service grpc.health.v1.Health"),
    });
    let target = |service: &str| format!("grpc://{}/{service}", server.addr);
    readygate(["probe", &target(""), &target("ready")])
        .outcome()
        .expect_code(0);
    for (service, reason) in [
        ("draining", "NOT_SERVING"),
        ("vague", "UNKNOWN"),
        ("watch-only", "SERVICE_UNKNOWN"),
        (
            "other",
            "grpc-status 12 UNIMPLEMENTED: unknown service grpc.health.v1.Health",
        ),
    ] {
        let outcome = readygate(["probe", &target(service)]).outcome();
        outcome.expect_code(1);
        assert_eq!(outcome.stdout, format!("{}: {reason}\n", target(service)));
    }
    let mut asked = server.asked();
    asked.sort();
    assert_eq!(
        asked,
        ["", "draining", "other", "ready", "vague", "watch-only"]
    );
}

#[test]
fn a_server_message_cannot_forge_a_log_line() {
    // `grpc-message` is percent-encoded: %0A is a newline once decoded.
    let server = GrpcServer::start(|_| {
        Health::Fail(
            14,
            "down%0A2026-01-01T00:00:00.000000Z%20%20INFO%20grpc://db:1:%20ready%0D%1B[2K",
        )
    });
    let target = format!("grpc://{}/app", server.addr);
    let forged = "2026-01-01T00:00:00.000000Z  INFO grpc://db:1: ready";
    for args in [
        vec!["wait", "-v", "-t", "1s", &target],
        vec!["wait", "-t", "6s", "--attempt-timeout", "100ms", &target],
        vec!["probe", "-v", &target],
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(1);
        for line in outcome.stderr.lines().chain(outcome.stdout.lines()) {
            assert!(
                !line.starts_with(forged),
                "{args:?} forged a line: {outcome:#?}"
            );
            assert!(
                !line.contains('\r') && !line.contains('\u{1b}'),
                "{outcome:#?}"
            );
        }
        let output = format!("{}{}", outcome.stderr, outcome.stdout);
        assert!(
            output.contains("down\\n2026-01-01"),
            "{args:?}: {outcome:#?}"
        );
    }
}

#[test]
fn h_headers_are_sent_as_call_metadata() {
    let server = GrpcServer::start(|_| Health::Status(1));
    let target = format!("grpc://{}", server.addr);
    readygate([
        "probe",
        "-H",
        "Authorization: Bearer token-for-the-call",
        "-H",
        "X-Tenant: blue",
        "-H",
        "x-tenant: green",
        "-H",
        "Connection: keep-alive",
        &target,
    ])
    .outcome()
    .expect_code(0);
    let metadata = server.metadata();
    assert_eq!(metadata.len(), 1, "{metadata:#?}");
    let values = |name: &str| -> Vec<&str> {
        metadata[0]
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(values("authorization"), ["Bearer token-for-the-call"]);
    assert_eq!(values("x-tenant"), ["blue", "green"]);
    assert_eq!(values("content-type"), ["application/grpc"]);
    assert!(values("connection").is_empty());
}

#[test]
fn grpcs_with_a_client_certificate_to_an_etcd_that_requires_one() {
    let certs = Certs::localhost();
    let client = certs.client("readygate");
    let etcd = Etcd::start_requiring_client_certs(&certs);
    let ca = certs.ca.to_str().unwrap();
    let target = format!("grpcs://127.0.0.1:{}", etcd.addr.port());
    // Refused after the handshake: said so, with the fix.
    readygate(["probe", "--cacert", ca, &target])
        .outcome()
        .expect_code(1)
        .expect_stderr(
            "asked for a TLS client certificate and none is set (--cert FILE --key FILE)",
        );
    readygate([
        "probe",
        "--cacert",
        ca,
        "--cert",
        client.cert.to_str().unwrap(),
        "--key",
        client.key.to_str().unwrap(),
        &target,
    ])
    .outcome()
    .expect_code(0);
    // The name to check, when dialling an address the certificate does not name as given.
    readygate([
        "probe",
        "--cacert",
        ca,
        "--cert",
        client.cert.to_str().unwrap(),
        "--key",
        client.key.to_str().unwrap(),
        "--tls-server-name",
        "localhost",
        "--unix-socket",
        etcd.socket.to_str().unwrap(),
        "grpcs://etcd.invalid:2379",
    ])
    .outcome()
    .expect_code(0);
}
