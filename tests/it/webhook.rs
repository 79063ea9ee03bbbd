//! `readygate webhook`: the spawned binary, a real TLS client. A Pod CREATE review gets exactly
//! the patch `inject --output patch` writes for that pod; other reviews pass; invalid
//! annotations are refused with inject's words; hostile requests (a huge body, deep nesting,
//! garbage, plain text on the TLS port) get an error and leave the server answering; a
//! certificate replaced on disk is served from the next handshake; the log has names only.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use crate::support::certs::Certs;
use crate::support::run::RunExt;
use crate::support::{readygate_cluster, Running, TempDir};

/// The webhook running on a port of 127.0.0.1, with its certificate files in `dir`.
pub(crate) struct Webhook {
    pub(crate) running: Running,
    pub(crate) port: u16,
    dir: TempDir,
}

/// Starts the webhook with `certs` copied into a folder of its own (so they can be replaced),
/// and `extra` options; returns once it serves.
fn start(certs: &Certs, extra: &[&str]) -> Webhook {
    start_with(certs, extra, |_| {})
}

/// As [`start`], with the command's environment (a pod's, a kubeconfig) set by `setup`.
pub(crate) fn start_with(
    certs: &Certs,
    extra: &[&str],
    setup: impl FnOnce(&mut std::process::Command),
) -> Webhook {
    let dir = TempDir::new();
    std::fs::copy(&certs.cert, dir.join("tls.crt")).unwrap();
    std::fs::copy(&certs.key, dir.join("tls.key")).unwrap();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let mut command = readygate_cluster(["webhook", "--listen", "127.0.0.1:0", "--tls-cert"]);
    command.arg(&cert).arg("--tls-key").arg(&key).args(extra);
    setup(&mut command);
    let mut running = Running::spawn(&mut command);
    running.line("serving admission reviews on https://127.0.0.1:");
    let written = running.written();
    let port = written
        .split("https://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {written}"));
    Webhook { running, port, dir }
}

/// A TLS client trusting only `ca`.
fn client(ca: &Path) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// One HTTPS request (`Connection: close`), its status and body; `Err` when TLS fails.
pub(crate) fn request(
    port: u16,
    ca: &Path,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<(u16, String), String> {
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = rustls::ClientConnection::new(client(ca), name).unwrap();
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut stream = rustls::Stream::new(&mut tls, &mut tcp);
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .map_err(|e| e.to_string())?;
    // A body past the cap is refused on its declared length, before it is sent: sending it
    // would have the refusal's connection reset under the answer.
    if body.len() <= 4 * 1024 * 1024 {
        stream.write_all(body).map_err(|e| e.to_string())?;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("no HTTP answer: {text:?}"))?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// An AdmissionReview of `operation` on `object` (JSON) of `kind`.
pub(crate) fn review(kind: &str, operation: &str, object: &str) -> String {
    format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"0b1c-42","kind":{{"group":"","version":"v1","kind":"{kind}"}},"resource":{{"group":"","version":"v1","resource":"pods"}},"operation":"{operation}","namespace":"shop","name":"web","object":{object},"oldObject":null,"dryRun":false}}}}"#
    )
}

/// An annotated pod, its readygate annotations `annotations` (JSON members).
fn pod(annotations: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"web","namespace":"shop","annotations":{{{annotations}}}}},"spec":{{"containers":[{{"name":"app","image":"registry.example.com/app:1.0","env":[{{"name":"TOKEN","value":"s3cr3t-env"}}]}}]}}}}"#
    )
}

/// The response member of an answer.
pub(crate) fn response(body: &str) -> serde_json::Value {
    let answer: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1", "{body}");
    assert_eq!(answer["kind"], "AdmissionReview", "{body}");
    assert_eq!(answer["response"]["uid"], "0b1c-42", "{body}");
    answer["response"].clone()
}

/// The patch `readygate inject --output patch` writes for `object` (JSON).
fn inject_patch(object: &str) -> String {
    let dir = TempDir::new();
    let file = dir.join("pod.json");
    std::fs::write(&file, object).unwrap();
    let outcome = readygate_cluster(["inject", "--output", "patch"])
        .arg(&file)
        .outcome();
    outcome.expect_code(0);
    outcome.stdout.trim_end().to_owned()
}

#[test]
fn pod_create_gets_injects_patch() {
    let certs = Certs::localhost();
    let mut webhook = start(&certs, &[]);
    let annotated = pod(
        r#""readygate.dev/wait-for":"postgres://app:hunter2@db:5432 tcp://cache:6379","readygate.dev/startup-probe.app":"http://127.0.0.1:8080/healthz""#,
    );
    let (status, body) = request(
        webhook.port,
        &certs.ca,
        "POST",
        "/mutate",
        review("Pod", "CREATE", &annotated).as_bytes(),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let answer = response(&body);
    assert_eq!(answer["allowed"], true, "{body}");
    assert_eq!(answer["patchType"], "JSONPatch", "{body}");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(answer["patch"].as_str().unwrap())
        .unwrap();
    assert_eq!(String::from_utf8(patch).unwrap(), inject_patch(&annotated));

    // Not annotated: allowed, no patch. Not a Pod CREATE: allowed as it is.
    for review in [
        review("Pod", "CREATE", &pod("")),
        review("Pod", "UPDATE", &annotated),
        review("Deployment", "CREATE", &annotated),
    ] {
        let (status, body) = request(
            webhook.port,
            &certs.ca,
            "POST",
            "/mutate",
            review.as_bytes(),
        )
        .unwrap();
        assert_eq!(status, 200, "{body}");
        let answer = response(&body);
        assert_eq!(answer["allowed"], true, "{body}");
        assert!(answer.get("patch").is_none(), "{body}");
    }

    // Invalid annotations: refused, with inject's words.
    let bad = pod(r#""readygate.dev/wait-for":"postgres//db:5432""#);
    let (status, body) = request(
        webhook.port,
        &certs.ca,
        "POST",
        "/mutate",
        review("Pod", "CREATE", &bad).as_bytes(),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let answer = response(&body);
    assert_eq!(answer["allowed"], false, "{body}");
    assert_eq!(answer["status"]["code"], 400, "{body}");
    let message = answer["status"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "metadata.annotations[readygate.dev/wait-for]: invalid target \"postgres//db:5432\""
        ),
        "{message}"
    );

    for (method, path, status) in [
        ("GET", "/healthz", 200),
        ("GET", "/readyz", 200),
        ("GET", "/mutate", 405),
        ("GET", "/nope", 404),
    ] {
        let (got, body) = request(webhook.port, &certs.ca, method, path, b"").unwrap();
        assert_eq!(got, status, "{method} {path}: {body}");
    }

    webhook.running.lines(&[
        "mutated shop/web",
        "unchanged shop/web",
        "skipped shop/web",
        "refused shop/web",
    ]);
    let log = webhook.running.written();
    for secret in [
        "hunter2",
        "s3cr3t-env",
        "registry.example.com",
        "postgres//db",
    ] {
        assert!(!log.contains(secret), "the log shows {secret}:\n{log}");
    }
    webhook.running.signal(libc::SIGTERM);
    let ended = webhook.running.end();
    assert_eq!(ended.status.code(), Some(0), "{ended:?}");
    let said = "stopped by signal 15";
    assert!(
        ended.outcome.stderr.contains(said),
        "{}",
        ended.outcome.stderr
    );
}

#[test]
fn hostile_requests_leave_it_answering() {
    let certs = Certs::localhost();
    let webhook = start(&certs, &[]);
    let port = webhook.port;
    let huge = vec![b' '; 8 * 1024 * 1024];
    let deep = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"1","kind":{{"group":"","version":"v1","kind":"Pod"}},"operation":"CREATE","object":{}1{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let wrong_shape = review(
        "Pod",
        "CREATE",
        r#"{"apiVersion":"v1","kind":"Pod","metadata":"web","spec":7}"#,
    );
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("a body past the cap", huge, 413),
        ("deep nesting", deep.into_bytes(), 400),
        ("garbage", b"\x00\xff{{{{ not json".to_vec(), 400),
        ("not a review", br#"{"kind":"Pod"}"#.to_vec(), 400),
        ("a pod of the wrong shape", wrong_shape.into_bytes(), 200),
    ];
    for (what, body, status) in cases {
        let started = Instant::now();
        let (got, answer) = request(port, &certs.ca, "POST", "/mutate", &body).unwrap();
        assert_eq!(got, status, "{what}: {answer}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{what} took {:?}",
            started.elapsed()
        );
    }
    // A chunked body, whose length is known only as it comes, past the cap: the server stops
    // reading at the cap (the answer may be lost to the reset that follows) and goes on.
    let started = Instant::now();
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = rustls::ClientConnection::new(client(&certs.ca), name).unwrap();
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut stream = rustls::Stream::new(&mut tls, &mut tcp);
    let head = "POST /mutate HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let chunk = format!("100000\r\n{}\r\n", " ".repeat(0x100000));
    for _ in 0..8 {
        if stream.write_all(chunk.as_bytes()).is_err() {
            break;
        }
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.is_empty() || answer.contains(" 413 "), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "chunked took {:?}",
        started.elapsed()
    );

    // Plain HTTP on the TLS port, and a connection that says nothing: closed, no harm done.
    let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut sink = Vec::new();
    let _ = plain.read_to_end(&mut sink);
    assert!(
        !String::from_utf8_lossy(&sink).contains("ok"),
        "plain HTTP was answered"
    );
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (status, _) = request(port, &certs.ca, "GET", "/healthz", b"").unwrap();
    assert_eq!(status, 200, "not answering after hostile requests");
    drop(silent);
    let log = webhook.running.written();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_replaced_certificate_is_served_from_the_next_handshake() {
    let first = Certs::localhost();
    let second = Certs::localhost();
    let mut webhook = start(&first, &[]);
    let port = webhook.port;
    assert_eq!(
        request(port, &first.ca, "GET", "/healthz", b"").unwrap().0,
        200
    );
    assert!(
        request(port, &second.ca, "GET", "/healthz", b"").is_err(),
        "the second CA was trusted already"
    );
    // As an operator copies them: one file, then the other (a mismatched pair meanwhile), each
    // renamed into place.
    for (from, to) in [(&second.cert, "tls.crt"), (&second.key, "tls.key")] {
        let staged = webhook.dir.join(".staged");
        std::fs::copy(from, &staged).unwrap();
        std::fs::rename(&staged, webhook.dir.join(to)).unwrap();
    }
    webhook.running.line("certificate reloaded");
    assert_eq!(
        request(port, &second.ca, "GET", "/healthz", b"").unwrap().0,
        200
    );
    assert!(
        request(port, &first.ca, "GET", "/healthz", b"").is_err(),
        "the old certificate is still served"
    );
}

#[test]
fn bad_certificates_and_sidecars_are_usage_errors() {
    let certs = Certs::localhost();
    let dir = TempDir::new();
    let missing = dir.join("missing.pem");
    readygate_cluster(["webhook", "--tls-cert"])
        .arg(&missing)
        .arg("--tls-key")
        .arg(&certs.key)
        .outcome()
        .expect_code(2)
        .expect_stderr("--tls-cert")
        .expect_stderr("missing.pem");
    let other = Certs::localhost();
    readygate_cluster(["webhook", "--tls-cert"])
        .arg(&certs.cert)
        .arg("--tls-key")
        .arg(&other.key)
        .outcome()
        .expect_code(2)
        .expect_stderr("does not match the certificate");
    let sidecar = dir.join("sidecar.yaml");
    std::fs::write(&sidecar, "image: x\n").unwrap();
    readygate_cluster(["webhook", "--tls-cert"])
        .arg(&certs.cert)
        .arg("--tls-key")
        .arg(&certs.key)
        .arg("--sidecar")
        .arg(&sidecar)
        .outcome()
        .expect_code(2)
        .expect_stderr("the container has no name");
}

#[test]
fn metrics_count_admissions_by_verdict_and_answers_by_code() {
    use crate::support::scraped::Scrape;
    let certs = Certs::localhost();
    let webhook = start(&certs, &[]);
    let scrape = || {
        let (status, body) = request(webhook.port, &certs.ca, "GET", "/metrics", b"").unwrap();
        assert_eq!(status, 200, "{body}");
        for secret in ["s3cr3t-env", "hunter2"] {
            assert!(!body.contains(secret), "{secret} shown: {body}");
        }
        Scrape::parse(&body)
    };
    let first = scrape();
    for verdict in ["mutated", "unchanged", "skipped", "refused"] {
        let labels = [("verdict", verdict)];
        assert_eq!(first.get("readygate_admissions_total", &labels), 0.0);
    }
    assert_eq!(first.family("readygate_admissions").kind, "counter");
    let durations = first.family("readygate_admission_duration_seconds");
    assert_eq!(durations.kind, "histogram");
    assert_eq!(
        first.get("readygate_admission_duration_seconds_count", &[]),
        0.0
    );

    let annotated = pod(r#""readygate.dev/wait-for":"postgres://app:hunter2@db:5432""#);
    let misspelt = pod(r#""readygate.dev/wait-fro":"tcp://db:5432""#);
    for (object, operation) in [
        (annotated.as_str(), "CREATE"),
        (annotated.as_str(), "CREATE"),
        (&pod(""), "CREATE"),
        (&annotated, "UPDATE"),
        (&misspelt, "CREATE"),
    ] {
        let body = review("Pod", operation, object);
        let (status, _) =
            request(webhook.port, &certs.ca, "POST", "/mutate", body.as_bytes()).unwrap();
        assert_eq!(status, 200);
    }
    let (status, _) = request(webhook.port, &certs.ca, "POST", "/mutate", b"garbage").unwrap();
    assert_eq!(status, 400);
    let (status, _) = request(webhook.port, &certs.ca, "DELETE", "/metrics", b"").unwrap();
    assert_eq!(status, 405);

    let after = scrape();
    for (verdict, count) in [
        ("mutated", 2.0),
        ("unchanged", 1.0),
        ("skipped", 1.0),
        ("refused", 1.0),
    ] {
        let labels = [("verdict", verdict)];
        assert_eq!(
            after.get("readygate_admissions_total", &labels),
            count,
            "{verdict}"
        );
    }
    // Every review on /mutate timed, the garbage one too.
    assert_eq!(
        after.get("readygate_admission_duration_seconds_count", &[]),
        6.0
    );
    let inf = [("le", "+Inf")];
    assert_eq!(
        after.get("readygate_admission_duration_seconds_bucket", &inf),
        6.0
    );
    // Five reviews and the first scrape answered 200; the garbage 400, the DELETE 405.
    for (code, count) in [("200", 6.0), ("400", 1.0), ("405", 1.0)] {
        assert_eq!(
            after.get("readygate_answers_total", &[("code", code)]),
            count,
            "{code}"
        );
    }
}

/// A review at a time would leave every core but one idle under a burst of pod creations: one
/// thread per core the process may use serves, and a process held to one core has one.
#[test]
fn reviews_are_served_by_a_thread_per_core_the_process_may_use() {
    let certs = Certs::localhost();
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    let threads = |count: usize| match count {
        1 => "(1 thread)".to_string(),
        count => format!("({count} threads)"),
    };
    let webhook = start(&certs, &[]);
    let written = webhook.running.written();
    assert!(written.contains(&threads(cores.min(4))), "{written}");
    // A burst of fifty reviews at once, over connections the threads share out: all answered.
    let body = review(
        "Pod",
        "CREATE",
        &pod(r#""readygate.dev/wait-for":"tcp://db:5432""#),
    );
    std::thread::scope(|scope| {
        let answers: Vec<_> = (0..50)
            .map(|_| {
                let body = body.as_bytes();
                scope.spawn(|| request(webhook.port, &certs.ca, "POST", "/mutate", body))
            })
            .collect();
        for answer in answers {
            let (status, body) = answer.join().unwrap().unwrap();
            assert_eq!(status, 200, "{body}");
            assert!(response(&body)["patch"].is_string(), "{body}");
        }
    });
    // Held to one CPU (as a pod with a CPU limit of one core is), one thread serves.
    let pinned = start_with(&certs, &[], |command| {
        use std::os::unix::process::CommandExt;
        // SAFETY: sched_setaffinity on the child's own thread, between fork and exec.
        unsafe {
            command.pre_exec(|| {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(0, &mut set);
                match libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            })
        };
    });
    let written = pinned.running.written();
    assert!(written.contains(&threads(1)), "{written}");
    let (status, body) =
        request(pinned.port, &certs.ca, "POST", "/mutate", body.as_bytes()).unwrap();
    assert_eq!(status, 200, "{body}");
}
