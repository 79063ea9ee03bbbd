//! `https://` against a real nginx with a certificate made by `openssl` at test time:
//! verification by default, `--cacert`, `--insecure`, SNI and the `Host:` override as curl
//! has them, and TLS through `--unix-socket`.

use crate::support::certs::Certs;
use crate::support::nginx::Nginx;
use crate::support::run::RunExt;
use crate::support::{free_port, readygate, TempDir};

/// An HTTPS site that says which server name (SNI) and Host it was asked for.
const SITE: &str = "
server {
    listen 127.0.0.1:{port} ssl;
    listen unix:{dir}/https.sock ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    location / { return 200 \"sni=$ssl_server_name host=$host\\n\"; }
}";

/// nginx serving HTTPS with a fresh certificate for localhost, and the port.
fn https() -> (Nginx, Certs, u16) {
    let certs = Certs::localhost();
    let port = free_port();
    let site = SITE
        .replace("{port}", &port.to_string())
        .replace("{cert}", certs.cert.to_str().unwrap())
        .replace("{key}", certs.key.to_str().unwrap());
    (Nginx::start(&site), certs, port)
}

#[test]
fn an_unknown_authority_fails_verification_with_a_reason() {
    let (_nginx, _certs, port) = https();
    let url = format!("https://localhost:{port}/");
    let outcome = readygate(["probe", &url]).outcome();
    outcome
        .expect_code(1)
        .expect_stdout("certificate signed by an unknown authority")
        .expect_stdout("--cacert");
}

#[test]
fn a_root_only_the_system_bundle_holds_is_trusted() {
    // The system bundle is read only when the built-in roots and --cacert anchor nothing;
    // a chain that needs it must still verify.
    let (_nginx, certs, port) = https();
    let url = format!("https://localhost:{port}/");
    let dir = TempDir::new();
    let bundle = dir.join("bundle.pem");
    let ca = std::fs::read_to_string(&certs.ca).unwrap();
    std::fs::write(&bundle, format!("{ca}{ca}")).unwrap();
    readygate(["probe", &url])
        .env("SSL_CERT_FILE", &bundle)
        .outcome()
        .expect_code(0);
    // (A chain no root anchors: `an_unknown_authority_fails_verification_with_a_reason`.)
}

#[test]
fn cacert_makes_it_trusted_with_the_url_host_as_sni() {
    let (_nginx, certs, port) = https();
    let ca = certs.ca.to_str().unwrap();
    let url = format!("https://localhost:{port}/");
    readygate([
        "probe",
        "--cacert",
        ca,
        "--contains",
        "sni=localhost host=localhost",
        &url,
    ])
    .outcome()
    .expect_code(0);
    // As curl: the Host header changes, the TLS name stays the URL's.
    readygate([
        "probe",
        "--cacert",
        ca,
        "-H",
        "Host: app.example",
        "--contains",
        "sni=localhost host=app.example",
        &url,
    ])
    .outcome()
    .expect_code(0);
    // An IP literal is checked against the certificate's IP names, with no SNI sent.
    readygate([
        "probe",
        "--cacert",
        ca,
        "--contains",
        "sni= host=127.0.0.1",
        &format!("https://127.0.0.1:{port}/"),
    ])
    .outcome()
    .expect_code(0);
}

#[test]
fn a_name_the_certificate_lacks_fails() {
    let (_nginx, certs, port) = https();
    // `*.localhost` is loopback (RFC 6761) but not a name in the certificate.
    let url = format!("https://app.localhost:{port}/");
    readygate(["probe", "--cacert", certs.ca.to_str().unwrap(), &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("certificate not valid for app.localhost");
}

#[test]
fn insecure_accepts_the_certificate_and_warns_once() {
    let (_nginx, _certs, port) = https();
    let outcome = readygate([
        "wait",
        "--insecure",
        "--timeout",
        "10s",
        &format!("https://localhost:{port}/"),
        &format!("https://127.0.0.1:{port}/"),
    ])
    .outcome();
    outcome.expect_code(0);
    assert_eq!(
        outcome
            .stderr
            .matches("certificates are not verified")
            .count(),
        1,
        "{outcome:#?}"
    );
    readygate(["probe", "--insecure", &format!("https://localhost:{port}/")])
        .outcome()
        .expect_code(0);
}

#[test]
fn https_through_a_unix_socket() {
    let (nginx, certs, _port) = https();
    let socket = nginx.path("https.sock");
    readygate([
        "probe",
        "--unix-socket",
        socket.to_str().unwrap(),
        "--cacert",
        certs.ca.to_str().unwrap(),
        "--contains",
        "sni=localhost host=localhost",
        "https://localhost/",
    ])
    .outcome()
    .expect_code(0);
}

#[test]
fn a_bad_cacert_is_a_usage_error() {
    let dir = TempDir::new();
    let missing = dir.join("missing.pem");
    let outcome = readygate([
        "probe",
        "--cacert",
        missing.to_str().unwrap(),
        "https://localhost:1/",
    ])
    .outcome();
    outcome
        .expect_code(2)
        .expect_stderr("--cacert")
        .expect_stderr("no such file");
    assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    readygate([
        "probe",
        "--cacert",
        garbage.to_str().unwrap(),
        "https://localhost:1/",
    ])
    .outcome()
    .expect_code(2)
    .expect_stderr("no PEM certificate");
}
