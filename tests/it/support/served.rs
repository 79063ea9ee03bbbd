//! `readygate serve` running on a free loopback port, and the clients that ask it: a plain
//! HTTP/1.1 client on a fresh connection per request (as the kubelet's prober asks), and a
//! real gRPC client (grpcio's health stub, installed by `scripts/install-test-deps.sh`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::{free_port, readygate, Running};

/// How long one request may take here before the test fails: generous, for a loaded machine;
/// the benchmark measures the real latency.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// The Python with grpcio that `scripts/install-test-deps.sh` makes.
pub const GRPC_PYTHON: &str = "/opt/readygate-test-python/bin/python3";

/// A running `readygate serve`.
pub struct Served {
    /// The process (stderr lines, signals).
    pub running: Running,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Served {
    /// Starts `readygate serve --listen 127.0.0.1:PORT ARGS...` and waits until it listens.
    #[track_caller]
    pub fn start(args: &[&str]) -> Served {
        Served::start_with(args, |_| {})
    }

    /// As [`Served::start`], with the command adjusted by `adjust` (environment).
    #[track_caller]
    pub fn start_with(args: &[&str], adjust: impl FnOnce(&mut Command)) -> Served {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = readygate(["serve", "--listen", &addr.to_string()]);
        command.args(args);
        adjust(&mut command);
        let mut running = Running::spawn(&mut command);
        running.line(&format!("serving on {addr}"));
        Served { running, addr }
    }

    /// `METHOD PATH` on a fresh connection: the status and the body.
    #[track_caller]
    pub fn ask(&self, method: &str, path: &str) -> Answer {
        ask(self.addr, method, path, &[])
    }

    /// `GET PATH`.
    #[track_caller]
    pub fn get(&self, path: &str) -> Answer {
        self.ask("GET", path)
    }
}

/// One HTTP answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The head's lines after the status line.
    pub headers: Vec<String>,
    /// The body.
    pub body: String,
    /// From connect to the end of the answer.
    pub took: Duration,
}

/// Sends `METHOD PATH HTTP/1.1` with `extra` header lines on a fresh connection to `addr` and
/// reads the answer until the server closes the connection.
#[track_caller]
pub fn ask(addr: SocketAddr, method: &str, path: &str, extra: &[&str]) -> Answer {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(ANSWER_LIMIT)).unwrap();
    let mut request =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: kube-probe/1.31\r\n");
    for line in extra {
        request.push_str(line);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .expect("send the request");
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .unwrap_or_else(|e| panic!("{method} {path}: no complete answer: {e}"));
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: not an HTTP answer: {text:?}"));
    Answer {
        status,
        headers: lines.map(str::to_string).collect(),
        body: body.to_string(),
        took,
    }
}

impl Answer {
    /// The value of header `name`, if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then_some(v.trim())
        })
    }
}

/// Fails the test, saying what to run, unless the venv of scripts/install-test-deps.sh has
/// grpcio and its health stub: a missing client must not pass as, or hide behind, another
/// failure of the gRPC checks.
#[track_caller]
fn grpc_client_installed() {
    static CHECKED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let checked = CHECKED.get_or_init(|| {
        let import = "import grpc, grpc_health.v1.health_pb2_grpc";
        match Command::new(GRPC_PYTHON).args(["-c", import]).output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
            Err(e) => Err(e.to_string()),
        }
    });
    if let Err(why) = checked {
        panic!(
            "the gRPC test client is not installed ({GRPC_PYTHON}: {why}): run \
             scripts/install-test-deps.sh (as root)"
        );
    }
}

/// Asks the gRPC health service at `addr` about `service` with grpcio's own client: the
/// `ServingStatus` name, or the failed call's code name (`NOT_FOUND`, `UNIMPLEMENTED`).
#[track_caller]
pub fn grpc_health(addr: SocketAddr, service: &str, method: &str) -> String {
    grpc_client_installed();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/health_client.py");
    let output = Command::new(GRPC_PYTHON)
        .arg(script)
        .args([&addr.to_string(), service, method])
        .output()
        .expect("run the gRPC client");
    let stdout = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert!(
        output.status.success(),
        "gRPC client failed: {stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Whether serve closed `stream` within `wait` (what it sends is read and dropped).
pub fn closed_within(stream: &mut std::net::TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut sink = [0u8; 4096];
    let started = Instant::now();
    while started.elapsed() < wait {
        match std::io::Read::read(stream, &mut sink) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
    false
}
