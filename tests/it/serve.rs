//! `readygate serve`: the kubelet's httpGet and grpc probes answered on one port, each target
//! checked on demand, at most once per freshness window, one attempt shared by every request
//! that comes while it runs.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::support::emulated::time_limit;
use crate::support::http::{Answer as Scripted, HttpServer};
use crate::support::run::RunExt;
use crate::support::served::{ask, grpc_health, Served, ANSWER_LIMIT};
use crate::support::{closed_addr, readygate, wait_until};

/// A target that is ready: a listener nobody needs to answer.
fn open_port() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = format!("tcp://{}", listener.local_addr().unwrap());
    (listener, target)
}

#[test]
fn ready_and_groups_answer_200_or_503_with_one_line_per_target() {
    let (_listener, up) = open_port();
    let down = format!("tcp://{}", closed_addr());
    let served = Served::start(&[
        &up,
        "--group",
        &format!("up={up}"),
        "--group",
        &format!("down={down},{up}"),
    ]);
    let all = served.get("/ready");
    assert_eq!(all.status, 503, "{all:?}");
    assert_eq!(
        all.body,
        format!("{up}: ready\n{down}: connection refused\n"),
        "every target once, in order: {all:?}"
    );
    assert_eq!(
        all.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let group = served.get("/ready/up");
    assert_eq!(
        (group.status, group.body.as_str()),
        (200, &*format!("{up}: ready\n"))
    );
    let group = served.get("/ready/down");
    assert_eq!(group.status, 503, "{group:?}");
    assert!(group
        .body
        .starts_with(&format!("{down}: connection refused\n")));
    let head = served.ask("HEAD", "/ready");
    assert_eq!((head.status, head.body.as_str()), (503, ""), "{head:?}");
    let head = served.ask("HEAD", "/ready/up");
    assert_eq!(head.status, 200, "{head:?}");
    for path in ["/ready/nope", "/ready/", "/", "/readyz", "/ready/up/x"] {
        let answer = served.get(path);
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
    }
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let answer = served.ask(method, "/ready");
        assert_eq!(answer.status, 405, "{method}: {answer:?}");
        assert_eq!(answer.header("allow"), Some("GET, HEAD"));
    }
    let live = served.get("/livez");
    assert_eq!((live.status, live.body.as_str()), (200, "ok\n"));
    assert_eq!(served.ask("HEAD", "/livez").status, 200);
}

#[test]
fn quiet_body_answers_with_the_status_alone() {
    let down = format!("tcp://{}", closed_addr());
    let served = Served::start(&["--quiet-body", &down]);
    let answer = served.get("/ready");
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (503, ""),
        "{answer:?}"
    );
    assert_eq!(served.get("/ready/x").body, "");
    // The environment says the same.
    let served = Served::start_with(&[&down], |c| {
        c.env("READYGATE_QUIET_BODY", "true");
    });
    assert_eq!(served.get("/ready").body, "");
}

#[test]
fn probe_options_shape_the_attempts() {
    let server = HttpServer::start(|seen, _| match seen.header("x-probe") {
        Some("yes") => Scripted {
            status: 418,
            headers: Vec::new(),
            body: b"ok".to_vec(),
        },
        _ => Scripted::status(500),
    });
    let url = server.url("/health");
    // 418 is ready only with --status 418, and only if -H reached the server.
    let served = Served::start(&[
        "--status",
        "418",
        "-H",
        "X-Probe: yes",
        "--contains",
        "ok",
        &url,
    ]);
    assert_eq!(served.get("/ready").status, 200);
    let served = Served::start(&["--status", "418", &url]);
    let answer = served.get("/ready");
    assert_eq!(answer.body, format!("{url}: status 500\n"));
    let served = Served::start(&[
        "--status",
        "418",
        "-H",
        "X-Probe: yes",
        "--contains",
        "no",
        &url,
    ]);
    let answer = served.get("/ready");
    assert_eq!(answer.status, 503);
    assert!(answer.body.contains("did not contain \"no\""), "{answer:?}");
}

/// An HTTP target that counts the connections it accepts and holds every answer until the
/// test opens its gate.
struct Gated {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl Gated {
    fn start() -> Gated {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let (count, held) = (accepted.clone(), gate.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let held = held.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let (open, opened) = &*held;
                    let mut open = open.lock().unwrap();
                    while !*open {
                        open = opened.wait(open).unwrap();
                    }
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                });
            }
        });
        Gated {
            addr,
            accepted,
            gate,
        }
    }

    fn open(&self) {
        *self.gate.0.lock().unwrap() = true;
        self.gate.1.notify_all();
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

#[test]
fn fifty_requests_together_share_one_attempt() {
    let target = Gated::start();
    let url = format!("http://{}/", target.addr);
    // No freshness window: only single flight keeps the attempts to one.
    let args = [
        "-v",
        "--fresh-for",
        "0",
        "--attempt-timeout",
        "60s",
        "--timeout",
        "60s",
        &url,
    ];
    let mut served = Served::start(&args);
    let addr = served.addr;
    let clients: Vec<_> = (0..50)
        .map(|_| std::thread::spawn(move || ask(addr, "GET", "/ready", &[])))
        .collect();
    // Every request has been read while the one attempt is held at the target.
    served.running.lines(&vec!["GET /ready"; 50]);
    wait_until("the attempt to reach the target", || target.accepted() >= 1);
    target.open();
    for client in clients {
        let answer = client.join().unwrap();
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (200, &*format!("{url}: ready\n"))
        );
    }
    assert_eq!(
        target.accepted(),
        1,
        "50 requests made more than one attempt"
    );
    // With the window at 0, the next request makes the next attempt.
    assert_eq!(served.get("/ready").status, 200);
    assert_eq!(target.accepted(), 2);
}

#[test]
fn a_result_answers_within_its_freshness_window_and_nothing_is_polled() {
    let server = HttpServer::start(|_, n| Scripted::status(if n == 0 { 200 } else { 503 }));
    let url = server.url("/");
    let served = Served::start(&["--fresh-for", "1h", &url]);
    assert_eq!(served.get("/ready").status, 200);
    // The target now fails, but the first result is fresh for an hour.
    for _ in 0..5 {
        assert_eq!(served.get("/ready").status, 200);
    }
    assert_eq!(served.get("/ready/x").status, 404);
    assert_eq!(server.hits(), 1, "a fresh result was not reused");
    // A short window: a request after it makes a new attempt; none is made while nobody asks.
    let server = HttpServer::start(|_, n| Scripted::status(if n == 0 { 200 } else { 503 }));
    let url = server.url("/");
    let served = Served::start(&["--fresh-for", "300ms", &url]);
    assert_eq!(served.get("/ready").status, 200);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server.hits(), 1, "serve attempted while nobody asked");
    let answer = served.get("/ready");
    assert_eq!(
        (answer.status, answer.body),
        (503, format!("{url}: status 503\n"))
    );
    assert_eq!(server.hits(), 2);
}

#[test]
fn the_body_is_redacted_exactly_as_probe_output_is() {
    let server = HttpServer::start(|_, _| Scripted::status(503));
    let port = server.addr.port();
    let secret_url = format!("http://user:hunter2@127.0.0.1:{port}/?token=swordfish&page=1");
    let served = Served::start(&["--fresh-for", "0", &secret_url]);
    let answer = served.get("/ready");
    let probe = readygate(["probe", &secret_url]).outcome();
    probe.expect_code(1);
    assert_eq!(
        answer.body, probe.stdout,
        "serve's body and probe's output differ"
    );
    for secret in ["hunter2", "swordfish"] {
        assert!(!answer.body.contains(secret), "{secret} shown: {answer:?}");
    }
    assert!(answer.body.contains("user:***@") && answer.body.contains("token=***"));
    let mut served = served;
    served.running.signal(libc::SIGTERM);
    let ended = served.running.finish();
    assert!(!ended.stderr.contains("hunter2") && !ended.stderr.contains("swordfish"));
}

#[test]
fn grpc_health_answers_a_real_grpc_client_on_the_same_port() {
    let (_listener, up) = open_port();
    let down = format!("tcp://{}", closed_addr());
    let served = Served::start(&[
        &up,
        "--group",
        &format!("up={up}"),
        "--group",
        &format!("down={down}"),
    ]);
    let addr = served.addr;
    assert_eq!(grpc_health(addr, "", "Check"), "NOT_SERVING");
    assert_eq!(grpc_health(addr, "up", "Check"), "SERVING");
    assert_eq!(grpc_health(addr, "down", "Check"), "NOT_SERVING");
    assert_eq!(grpc_health(addr, "nope", "Check"), "NOT_FOUND");
    assert_eq!(grpc_health(addr, "", "Watch"), "UNIMPLEMENTED");
    // HTTP/1 still answers on the same port, and the gRPC health client was really answered.
    assert_eq!(served.get("/ready/up").status, 200);
}

/// readygate's own gRPC probe against serve, apart from the Python client above, so that a
/// machine without that client still runs (and fails) this check on its own.
#[test]
fn grpc_probes_of_serve_read_serving_and_not_serving() {
    let (_listener, up) = open_port();
    let down = format!("tcp://{}", closed_addr());
    let served = Served::start(&[&up, "--group", &format!("up={up}"), &down]);
    let addr = served.addr;
    let ready = readygate(["probe", &format!("grpc://{addr}/up")]).outcome();
    ready.expect_code(0);
    let not_ready = readygate(["probe", &format!("grpc://{addr}")]).outcome();
    not_ready.expect_code(1).expect_stdout("NOT_SERVING");
}

#[test]
fn sigterm_stops_accepting_and_exits_0_at_once() {
    let (_listener, up) = open_port();
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut served = Served::start(&[&up]);
        assert_eq!(served.get("/ready").status, 200);
        let addr = served.addr;
        let sent = std::time::Instant::now();
        served.running.signal(signal);
        let ended = served.running.end();
        assert_eq!(ended.status.code(), Some(0), "{:#?}", ended.outcome);
        let said = format!("stopped by signal {signal}");
        assert!(
            ended.outcome.stderr.contains(&said),
            "{}",
            ended.outcome.stderr
        );
        // Within 1 s is the goal; the margin is for a loaded machine.
        let took = ended.at.duration_since(sent);
        assert!(
            took < time_limit(took, Duration::from_secs(3)),
            "took {took:?} to stop"
        );
        assert!(
            std::net::TcpStream::connect(addr).is_err(),
            "still accepting"
        );
    }
}

#[test]
fn bad_serve_command_lines_are_one_line_usage_errors() {
    let (_listener, up) = open_port();
    let group = format!("g={up}");
    for (args, fault) in [
        (vec!["serve"], "no target given"),
        (vec!["serve", "--listen", "nowhere", &up], "--listen"),
        (vec!["serve", "--group", "g", &up], "expected NAME=TARGET"),
        (
            vec!["serve", "--group", "a/b=tcp://h:1"],
            "the name must be",
        ),
        (
            vec!["serve", "--group", &group, "--group", &group],
            "given twice",
        ),
        (vec!["serve", "--group", "g=nope://x"], "invalid target"),
        (
            vec!["serve", "--touch", "/tmp/x", &up],
            "--touch is an option of wait",
        ),
        (vec!["serve", "--fresh-for", "soon", &up], "--fresh-for"),
        (
            vec!["serve", "--attempt-timeout", "2s", "--timeout", "1s", &up],
            "longer than",
        ),
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(2).expect_stderr(fault);
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    }
    // A port already taken: the environment's fault, status 1, said in one line.
    let (taken, _) = open_port();
    let addr = taken.local_addr().unwrap().to_string();
    let outcome = readygate(["serve", "--listen", &addr, &up]).outcome();
    outcome.expect_code(1).expect_stderr("cannot listen on");
    assert!(outcome.elapsed < ANSWER_LIMIT);
}

#[test]
fn listen_takes_a_port_alone_on_every_address_as_the_default() {
    let (_listener, up) = open_port();
    for written in ["PORT", ":PORT"] {
        let port = crate::support::free_port();
        let listen = written.replace("PORT", &port.to_string());
        let mut command = readygate(["serve", "--listen", &listen, &up]);
        let mut running = crate::support::Running::spawn(&mut command);
        running.line(&format!("serving on 0.0.0.0:{port}"));
        let answer = ask(
            SocketAddr::from(([127, 0, 0, 1], port)),
            "GET",
            "/ready",
            &[],
        );
        assert_eq!(answer.status, 200, "--listen {listen}: {answer:?}");
    }
}
