//! A stand-in for a pod's Kubernetes API server: HTTPS (rustls, a CA made with openssl) on the
//! host's 127.0.0.1, serving the Jobs the test puts there, and refusing any other token than
//! the service account's. With it comes the service account folder the kubelet mounts
//! (`token`, `ca.crt`, `namespace`). No real API server runs on these machines.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::sandbox::{run, sandbox};

/// The namespace in the service account folder.
pub const NAMESPACE: &str = "default";

#[derive(Default)]
struct State {
    /// Job JSON by name.
    jobs: HashMap<String, String>,
    /// Each request: its path and the status answered.
    seen: Vec<(String, u16)>,
}

/// The server; it stops with the test process.
pub struct ApiServer {
    pub port: u16,
    /// The service account folder to mount at /var/run/secrets/kubernetes.io/serviceaccount.
    pub service_account: PathBuf,
    state: Arc<Mutex<State>>,
}

impl ApiServer {
    pub fn start(name: &str) -> ApiServer {
        let dir = sandbox().join(format!("{name}-serviceaccount"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let token = format!("readygate-test-token-{}", std::process::id());
        std::fs::write(dir.join("token"), &token).unwrap();
        std::fs::write(dir.join("namespace"), NAMESPACE).unwrap();
        let (cert, key) = certificates(&dir);
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(cert, key)
        .expect("server certificate");
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (config, state, token) = (config.clone(), shared.clone(), token.clone());
                thread::spawn(move || serve(stream, config, &state, &token));
            }
        });
        ApiServer {
            port,
            service_account: dir,
            state,
        }
    }

    /// Puts a Job with `status` (the JSON of its `.status`), as the Job controller updates it.
    pub fn set_job(&self, name: &str, status: &str) {
        let job = format!(
            r#"{{"apiVersion":"batch/v1","kind":"Job","metadata":{{"name":"{name}","namespace":"{NAMESPACE}"}},"spec":{{}},"status":{status}}}"#
        );
        self.state.lock().unwrap().jobs.insert(name.into(), job);
    }

    /// The statuses answered so far for `path`, in order.
    pub fn answers(&self, path: &str) -> Vec<u16> {
        let state = self.state.lock().unwrap();
        state
            .seen
            .iter()
            .filter(|(seen, _)| seen == path)
            .map(|(_, status)| *status)
            .collect()
    }
}

/// A CA, and a certificate it signed for 127.0.0.1; writes the CA as `ca.crt` in `dir`.
fn certificates(dir: &std::path::Path) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (ca_key, ca, key, csr, crt, ext) = (
        path("ca.key"),
        path("ca.crt"),
        path("server.key"),
        path("server.csr"),
        path("server.crt"),
        path("server.ext"),
    );
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1,DNS:kubernetes.default.svc\nbasicConstraints=CA:FALSE\n\
         extendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let curve = "ec_paramgen_curve:prime256v1";
    let subject = "/CN=readygate-test-ca";
    let steps: [&[&str]; 3] = [
        &[
            "req", "-x509", "-newkey", "ec", "-pkeyopt", curve, "-nodes", "-days", "1", "-subj",
            subject, "-keyout", &ca_key, "-out", &ca,
        ],
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            curve,
            "-nodes",
            "-subj",
            "/CN=kubernetes",
            "-keyout",
            &key,
            "-out",
            &csr,
        ],
        &[
            "x509",
            "-req",
            "-days",
            "1",
            "-in",
            &csr,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-extfile",
            &ext,
            "-out",
            &crt,
        ],
    ];
    for args in steps {
        let made = run("openssl", args, Duration::from_secs(30));
        assert_eq!(
            made.code,
            0,
            "openssl {}: {}",
            args.join(" "),
            made.output()
        );
    }
    // The folder is mounted into containers that run as other users: readable by all, but the
    // keys stay out of it.
    let cert = CertificateDer::pem_file_iter(&crt)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(&key).unwrap();
    for name in [
        "ca.key",
        "server.key",
        "server.csr",
        "server.ext",
        "ca.srl",
        "server.crt",
    ] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    (cert, key)
}

/// One connection: one request, one answer.
fn serve(tcp: TcpStream, config: Arc<rustls::ServerConfig>, state: &Mutex<State>, token: &str) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(connection) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let mut head = Vec::new();
    let mut chunk = [0; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match tls.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
        if head.len() > 65536 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("").to_string();
    let authorized = head
        .lines()
        .any(|line| line.eq_ignore_ascii_case(&format!("authorization: Bearer {token}")));
    let jobs = format!("/apis/batch/v1/namespaces/{NAMESPACE}/jobs/");
    let (status, body) = {
        let state = state.lock().unwrap();
        match path
            .strip_prefix(&jobs)
            .and_then(|name| state.jobs.get(name))
        {
            _ if !authorized => (401, status_object(401, "Unauthorized", "Unauthorized")),
            Some(job) => (200, job.clone()),
            None => (
                404,
                status_object(404, "NotFound", &format!("{path} not found")),
            ),
        }
    };
    state.lock().unwrap().seen.push((path, status));
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        _ => "Not Found",
    };
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tls.write_all(answer.as_bytes());
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

/// A `Status` object, as the API server answers errors.
fn status_object(code: u16, reason: &str, message: &str) -> String {
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","status":"Failure","message":"{message}","reason":"{reason}","code":{code}}}"#
    )
}
