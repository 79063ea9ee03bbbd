//! A port that speaks another protocol than the target's scheme, and a certificate the kubelet's
//! httpGet would have taken: the reason names the likely mistake and its fix, never a
//! library's words ("received corrupt message of type InvalidContentType", "frame with
//! invalid size").

use std::io::{Read, Write};
use std::sync::Arc;

use crate::support::certs::Certs;
use crate::support::http::{Answer, HttpServer};
use crate::support::nginx::Nginx;
use crate::support::raw::Peer;
use crate::support::run::RunExt;
use crate::support::{free_port, readygate};

/// What the library words that must not show.
const LIBRARY: [&str; 3] = [
    "InvalidContentType",
    "frame with invalid size",
    "corrupt message",
];

#[track_caller]
fn probe_says(url: &str, reason: &str) {
    let outcome = readygate(["probe", url]).outcome();
    outcome
        .expect_code(1)
        .expect_stdout(&format!("{url}: {reason}"));
    for words in LIBRARY {
        assert!(!outcome.stdout.contains(words), "{outcome:#?}");
    }
}

#[test]
fn tls_to_a_plain_http_port_says_to_try_http() {
    let server = HttpServer::start(|_, _| Answer::status(200));
    let addr = server.addr;
    let tls = "TLS handshake: the server does not speak TLS";
    probe_says(&format!("https://{addr}/"), &format!("{tls}: try http://"));
    probe_says(&format!("grpcs://{addr}"), &format!("{tls}: try grpc://"));
}

#[test]
fn tls_to_a_plain_text_protocol_says_to_try_its_plain_scheme() {
    // A plain Redis errs once a line ends, which a ClientHello need not hold: this one errs
    // at the first bytes, as a plain AMQP broker answers its protocol header.
    let peer = Peer::start_with(|mut stream| {
        let mut first = [0u8; 64];
        if matches!(stream.read(&mut first), Ok(n) if n > 0) {
            let _ = stream.write_all(b"-ERR unknown command\r\n");
        }
        while matches!(stream.read(&mut first), Ok(n) if n > 0) {}
    });
    let tls = "TLS handshake: the server does not speak TLS";
    probe_says(&peer.url("rediss", ""), &format!("{tls}: try redis://"));
    probe_says(&peer.url("amqps", ""), &format!("{tls}: try amqp://"));
}

#[test]
fn grpc_to_an_http1_server_asks_whether_it_is_a_grpc_port() {
    // nginx answers the HTTP/2 preface on an HTTP/1 port with `HTTP/1.1 400`.
    let port = free_port();
    let site = "server { listen 127.0.0.1:{port}; location / { return 200; } }";
    let _nginx = Nginx::start(&site.replace("{port}", &port.to_string()));
    probe_says(
        &format!("grpc://127.0.0.1:{port}"),
        "the server answered in HTTP/1: is this a gRPC port?",
    );
}

#[test]
fn grpc_without_tls_to_a_tls_port_says_to_try_grpcs() {
    let config = Arc::new(Certs::localhost().server_config());
    let peer = Peer::start_with(move |mut stream| {
        // The HTTP/2 preface is no ClientHello: rustls answers with an alert record, and the
        // connection stays open until the client goes (a close with unread bytes would reset
        // it, and the alert with it).
        let mut tls = rustls::ServerConnection::new(config.clone()).unwrap();
        if tls.read_tls(&mut stream).is_ok() && tls.process_new_packets().is_err() {
            while tls.wants_write() && tls.write_tls(&mut stream).is_ok() {}
        }
        let mut sink = [0u8; 4096];
        while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
    });
    probe_says(&peer.url("grpc", ""), "the server speaks TLS: try grpcs://");
}

#[test]
fn a_certificate_that_fails_verification_offers_insecure_as_the_kubelet_does() {
    let certs = Certs::localhost();
    let server = HttpServer::start_tls_and_plain(&certs, |_, _| Answer::status(200));
    let url = format!("https://localhost:{}/", server.addr.port());
    probe_says(
        &url,
        "TLS handshake: certificate verification failed: certificate signed by an unknown \
         authority (trust it with --cacert FILE, or skip verification with --insecure, as the \
         kubelet's httpGet does)",
    );
    // Trusted, but for another name: the fix for that, and --insecure too.
    let cacert = certs.ca.to_str().unwrap();
    let other = [
        "probe",
        "--cacert",
        cacert,
        "--tls-server-name",
        "db.example",
        &url,
    ];
    let outcome = readygate(other).outcome();
    outcome
        .expect_code(1)
        .expect_stdout("certificate verification failed: certificate not valid for db.example")
        .expect_stdout("; or skip verification with --insecure, as the kubelet's httpGet does");
    // Either fix works.
    readygate(["probe", "--insecure", &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--cacert", cacert, &url])
        .outcome()
        .expect_code(0);
}

#[test]
fn a_scheme_spoken_to_a_redis_port_says_the_port_speaks_another_protocol() {
    let redis = crate::support::redis::Redis::start();
    let addr = redis.addr;
    // Redis closes the connection at an HTTP request's `Host:` line.
    probe_says(
        &format!("http://{addr}/"),
        "connection closed before message completed (closed without an HTTP answer: is this \
         an HTTP port?)",
    );
    probe_says(
        &format!("grpc://{addr}"),
        "the server answered in text (\"-ERR unk\"…), not HTTP/2: is this a gRPC port?",
    );
    // It waits for the end of a line that a StartupMessage never holds.
    let url = format!("postgres://{addr}");
    let outcome = readygate(["probe", "-t", "3s", "--attempt-timeout", "300ms", &url]).outcome();
    outcome.expect_code(1).expect_stdout(&format!(
        "{url}: no answer within 300ms (a PostgreSQL server answers at once: does this port \
         speak another protocol?)"
    ));
}

#[test]
fn amqp_to_a_silent_port_suspects_another_protocol() {
    let peer = Peer::start_with(|mut stream| {
        let mut sink = [0u8; 64];
        while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
    });
    let url = peer.url("amqp", "");
    let outcome = readygate(["probe", "-t", "3s", "--attempt-timeout", "300ms", &url]).outcome();
    outcome.expect_code(1).expect_stdout(&format!(
        "{url}: no answer within 300ms (an AMQP broker answers at once: does this port speak \
         another protocol?)"
    ));
}
