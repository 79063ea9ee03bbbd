//! `https://` against a real nginx with a certificate made by `openssl` at test time:
//! verification by default, `--cacert`, `--insecure`, SNI and the `Host:` override as curl
//! has them, and TLS through `--unix-socket`.

use std::path::Path;
use std::time::Duration;

use crate::support::certs::{Certs, Pair};
use crate::support::measure::measured;
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
    let (nginx, port) = serving(&certs.cert, &certs.key);
    (nginx, certs, port)
}

/// nginx serving [`SITE`] with this certificate and key, and the port.
fn serving(cert: &Path, key: &Path) -> (Nginx, u16) {
    let port = free_port();
    let site = SITE
        .replace("{port}", &port.to_string())
        .replace("{cert}", cert.to_str().unwrap())
        .replace("{key}", key.to_str().unwrap());
    (Nginx::start(&site), port)
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
        .expect_stdout("certificate not valid for app.localhost (it is for localhost, 127.0.0.1")
        .expect_stdout("--tls-server-name");
}

#[test]
fn a_self_signed_certificate_made_by_openssl_req_x509_is_trusted_through_cacert() {
    let pair = Pair::self_signed();
    let (_nginx, port) = serving(&pair.cert, &pair.key);
    let cert = pair.cert.to_str().unwrap();
    let url = format!("https://localhost:{port}/");
    // Named for what it is, with the fix, never webpki's `CaUsedAsEndEntity`.
    let outcome = readygate(["probe", &url]).outcome();
    outcome
        .expect_code(1)
        .expect_stdout("self-signed certificate (trust it with --cacert");
    assert!(!outcome.stdout.contains("Other("), "{outcome:#?}");
    // As curl --cacert: trusted, for the names it holds.
    readygate([
        "probe",
        "--cacert",
        cert,
        "--contains",
        "sni=localhost",
        &url,
    ])
    .outcome()
    .expect_code(0);
    assert_eq!(curl(&["--cacert", cert, &url]), Some(0), "curl --cacert");
    assert_eq!(curl(&[&url]), Some(60), "curl without --cacert");
    readygate([
        "probe",
        "--cacert",
        cert,
        &format!("https://127.0.0.1:{port}/"),
    ])
    .outcome()
    .expect_code(0);
    readygate([
        "probe",
        "--cacert",
        cert,
        &format!("https://app.localhost:{port}/"),
    ])
    .outcome()
    .expect_code(1)
    .expect_stdout("certificate not valid for app.localhost");
}

/// `curl -sS -o /dev/null ARGS...`'s exit status (60: certificate not trusted).
fn curl(args: &[&str]) -> Option<i32> {
    std::process::Command::new(crate::support::daemon::require("curl"))
        .args(["-sS", "-o", "/dev/null"])
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run curl")
        .code()
}

#[test]
fn an_expired_certificate_is_named_with_its_date() {
    let certs = Certs::localhost();
    let expired = certs.expired_localhost();
    let (_nginx, port) = serving(&expired.cert, &expired.key);
    readygate([
        "probe",
        "--cacert",
        certs.ca.to_str().unwrap(),
        &format!("https://localhost:{port}/"),
    ])
    .outcome()
    .expect_code(1)
    .expect_stdout("certificate expired on 2020-01-02T00:00:00Z (renew the server's certificate)");
}

#[test]
fn ca_files_that_are_not_regular_files_never_hang_nor_grow() {
    let (_nginx, certs, port) = https();
    let url = format!("https://localhost:{port}/");
    let dir = TempDir::new();
    let fifo = dir.join("fifo.pem");
    crate::support::make_fifo(&fifo).unwrap();
    let big = dir.join("big.pem");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(1 << 30))
        .unwrap();
    for bad in [fifo.to_str().unwrap(), "/dev/zero", big.to_str().unwrap()] {
        // --cacert: a usage error, at once.
        let run = measured(&mut readygate(["probe", "--cacert", bad, &url]));
        run.outcome
            .expect_code(2)
            .expect_stderr("--cacert")
            .expect_faster_than(Duration::from_secs(5));
        run.expect_memory_under(64);
        // SSL_CERT_FILE: not used, said once, and the chain it would have anchored is not.
        let run = measured(readygate(["probe", "-t", "3s", &url]).env("SSL_CERT_FILE", bad));
        run.outcome
            .expect_code(1)
            .expect_stdout("unknown authority")
            .expect_stderr("not used")
            .expect_faster_than(Duration::from_secs(5));
        run.expect_memory_under(64);
    }
    let err = readygate(["probe", "--cacert", "/dev/zero", &url]).outcome();
    err.expect_stderr("not a regular file");
    assert_eq!(err.stderr.lines().count(), 1, "{err:#?}");
    // A good bundle in SSL_CERT_FILE still works.
    readygate(["probe", &url])
        .env("SSL_CERT_FILE", &certs.ca)
        .outcome()
        .expect_code(0);
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
    // probe writes warnings to stderr, as docs/cli.md says; -q keeps only failures.
    let url = format!("https://localhost:{port}/");
    readygate(["probe", "--insecure", &url])
        .outcome()
        .expect_code(0)
        .expect_stderr("certificates are not verified");
    let outcome = readygate(["probe", "-q", "--insecure", &url]).outcome();
    assert_eq!((outcome.code, outcome.stderr.as_str()), (Some(0), ""));
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

#[test]
fn on_exit_shares_the_runs_tls_warnings() {
    // The targets and `--on-exit`'s notice reach a server that asks for a client certificate,
    // with `--insecure`: each warning comes once per run, not once more for the notice.
    let (_nginx, url) = mtls(&Certs::localhost());
    let outcome = readygate(["wait", "-t", "2s", "--insecure", "--on-exit", &url, &url])
        .args(["--", "true"])
        .outcome();
    // A handshake of the targets' completed (nginx answers 400 without a certificate).
    outcome
        .expect_code(1)
        .expect_stderr(&format!("{url}: status 400"))
        .expect_stderr(&format!("POST {url}: status 400"));
    for warning in [
        "asked for a TLS client certificate and none is set",
        "--insecure: TLS certificates are not verified",
    ] {
        let count = outcome.stderr.matches(warning).count();
        assert_eq!(count, 1, "{warning:?} said {count} times: {outcome:#?}");
    }
}

/// An HTTPS site that asks every client for a certificate signed by `{ca}` and says whose it got.
const MTLS_SITE: &str = "
server {
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_client_certificate {ca};
    ssl_verify_client on;
    location / { return 200 \"client=$ssl_client_s_dn\\n\"; }
}";

/// nginx serving [`MTLS_SITE`] with `certs`, and its URL.
fn mtls(certs: &Certs) -> (Nginx, String) {
    let port = free_port();
    let site = MTLS_SITE
        .replace("{port}", &port.to_string())
        .replace("{cert}", certs.cert.to_str().unwrap())
        .replace("{key}", certs.key.to_str().unwrap())
        .replace("{ca}", certs.ca.to_str().unwrap());
    (Nginx::start(&site), format!("https://localhost:{port}/"))
}

#[test]
fn client_certificates_for_a_server_that_requires_them() {
    let certs = Certs::localhost();
    let client = certs.client("probe-client");
    let (_nginx, url) = mtls(&certs);
    let ca = certs.ca.to_str().unwrap();
    let (cert, key) = (client.cert.to_str().unwrap(), client.key.to_str().unwrap());
    // Without one, nginx answers 400 ("No required SSL certificate was sent").
    readygate(["probe", "--cacert", ca, &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("status 400")
        .expect_stderr("asked for a TLS client certificate and none is set");
    readygate([
        "probe",
        "--cacert",
        ca,
        "--cert",
        cert,
        "--key",
        key,
        "--contains",
        "client=CN=probe-client",
        &url,
    ])
    .outcome()
    .expect_code(0);
    // curl agrees on both counts (nginx answers 400 without a certificate).
    let curl_status = |extra: &[&str]| {
        let out = std::process::Command::new(crate::support::daemon::require("curl"))
            .args([
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--cacert",
                ca,
            ])
            .args(extra)
            .arg(&url)
            .output()
            .expect("run curl");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(curl_status(&[]), "400");
    assert_eq!(curl_status(&["--cert", cert, "--key", key]), "200");
    // From the environment too.
    readygate(["probe", "--cacert", ca, &url])
        .env("READYGATE_CERT", cert)
        .env("READYGATE_KEY", key)
        .outcome()
        .expect_code(0);
}

#[test]
fn bad_client_certificate_options_are_usage_errors() {
    let certs = Certs::localhost();
    let client = certs.client("probe-client");
    let other = certs.client("other");
    let dir = TempDir::new();
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a key\n").unwrap();
    let (cert, key) = (client.cert.to_str().unwrap(), client.key.to_str().unwrap());
    let cases: [(Vec<&str>, &str); 6] = [
        (vec!["--cert", cert], "--cert needs --key"),
        (vec!["--key", key], "--key needs --cert"),
        (
            vec!["--cert", cert, "--key", garbage.to_str().unwrap()],
            "--key",
        ),
        (
            vec!["--cert", garbage.to_str().unwrap(), "--key", key],
            "--cert",
        ),
        (
            vec!["--cert", cert, "--key", "/dev/zero"],
            "not a regular file",
        ),
        (
            vec!["--cert", cert, "--key", other.key.to_str().unwrap()],
            "does not match",
        ),
    ];
    for (args, fault) in cases {
        let mut all = vec!["probe"];
        all.extend(args.iter().copied());
        all.push("https://localhost:1/");
        let outcome = readygate(&all).outcome();
        outcome.expect_code(2).expect_stderr(fault);
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    }
}

#[test]
fn tls_server_name_sets_sni_and_the_name_checked() {
    let (_nginx, certs, port) = https();
    let ca = certs.ca.to_str().unwrap();
    // Dialling an IP or a name the certificate lacks, asking for a name it holds.
    for host in ["127.0.0.1", "app.localhost"] {
        readygate([
            "probe",
            "--cacert",
            ca,
            "--tls-server-name",
            "localhost",
            "--contains",
            "sni=localhost",
            &format!("https://{host}:{port}/"),
        ])
        .outcome()
        .expect_code(0);
    }
    // A name the certificate lacks is refused however it is given.
    readygate([
        "probe",
        "--cacert",
        ca,
        "--tls-server-name",
        "db.example",
        &format!("https://localhost:{port}/"),
    ])
    .outcome()
    .expect_code(1)
    .expect_stdout("certificate not valid for db.example");
    readygate([
        "probe",
        "--tls-server-name",
        "bad name",
        "https://localhost:1/",
    ])
    .outcome()
    .expect_code(2)
    .expect_stderr("--tls-server-name");
}
