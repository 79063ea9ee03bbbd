//! `readygate serve` under the attacks that locked the kubelet out or filled the log: HTTP/2
//! calls whose body never ends, HTTP/1 requests whose body never ends, streams left open and
//! clients that reset streams as fast as they open them, SETTINGS, PING and CONTINUATION
//! floods, all at once over HTTP/1 and h2c, from
//! another address on the pod network, renewed through several connection lifetimes. A
//! well-behaved client (the kubelet's HTTP and gRPC probes) is answered throughout, and the
//! log says no more than it says without the attack.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::support::events::Stop;
use crate::support::h2c::{self, H2c};
use crate::support::served::{ask, closed_within, Served};
use crate::support::wait_until;

/// Another pod's address, as the kubelet's (here 127.0.0.1) is the node's.
const OTHER_POD: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// The kubelet's own address: a pod on the host network, or a test that ignores addresses.
const NODE: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// The bound a probe's answer is held to while the attack runs.
const PROBE_BOUND: Duration = Duration::from_millis(500);

/// The longest any probe may take even on a machine the attackers and other tests load.
const LOOSE_BOUND: Duration = Duration::from_secs(3);

/// Peak memory serve may reach under attack (the debug build; the release one is smaller).
const MEMORY_MIB: u64 = 40;

/// serve's peak resident memory so far, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// RST_STREAM's error code CANCEL.
const CANCEL: u32 = 8;

/// How long the attack lasts: well over two connection lifetimes (`--attempt-timeout` + 5 s).
const ATTACK: Duration = Duration::from_secs(13);

/// A connection from `from` to `to`.
fn connect_from(from: IpAddr, to: SocketAddr) -> Option<TcpStream> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
    socket.bind(&SocketAddr::new(from, 0).into()).ok()?;
    socket.connect(&to.into()).ok()?;
    let stream = TcpStream::from(socket);
    stream.set_nodelay(true).ok()?;
    Some(stream)
}

/// An h2c connection from `from`.
fn h2c_from(from: IpAddr, to: SocketAddr) -> Option<H2c> {
    H2c::start(connect_from(from, to)?)
}

/// Eight gRPC calls on one h2c connection, each sending a message that never ends, a byte
/// every 200 ms; a new connection whenever serve closes this one.
fn endless_grpc_bodies(from: IpAddr, to: SocketAddr, done: &Stop) {
    while !done.given() {
        let Some(mut conn) = h2c_from(from, to) else {
            done.pause(Duration::from_millis(200));
            continue;
        };
        let ids: Vec<u32> = (0..8).map(|_| conn.next_stream()).collect();
        let mut opening = Vec::new();
        for &id in &ids {
            opening.extend(h2c::frame(
                h2c::HEADERS,
                h2c::END_HEADERS,
                id,
                &h2c::grpc_check_headers(),
            ));
            // A message said to be 1000 bytes long: its first byte only.
            opening.extend(h2c::frame(h2c::DATA, 0, id, &[0, 0, 0, 3, 0xe8, 0x0a]));
        }
        let mut alive = conn.send(&opening);
        while alive && !done.given() {
            let drip: Vec<u8> = ids
                .iter()
                .flat_map(|&id| h2c::frame(h2c::DATA, 0, id, b"a"))
                .collect();
            alive =
                conn.send(&drip) && !closed_within(&mut conn.stream, Duration::from_millis(200));
        }
    }
}

/// `GET /ready` over HTTP/1.1 with a chunked body that never ends, a byte every 200 ms.
fn endless_http1_body(from: IpAddr, to: SocketAddr, done: &Stop) {
    while !done.given() {
        let Some(mut stream) = connect_from(from, to) else {
            done.pause(Duration::from_millis(200));
            continue;
        };
        let head = "GET /ready HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n";
        let mut alive = stream.write_all(head.as_bytes()).is_ok();
        while alive && !done.given() {
            alive = stream.write_all(b"1\r\na\r\n").is_ok()
                && !closed_within(&mut stream, Duration::from_millis(200));
        }
    }
}

/// Floods on one h2c connection until serve closes it: SETTINGS and PING frames (each of which
/// asks for an answer), then a header block continued by CONTINUATION frames without end.
fn floods(from: IpAddr, to: SocketAddr, done: &Stop) {
    while !done.given() {
        let Some(mut conn) = h2c_from(from, to) else {
            done.pause(Duration::from_millis(200));
            continue;
        };
        let mut flood = Vec::new();
        for n in 0u64..1000 {
            flood.extend(h2c::frame(h2c::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]));
            flood.extend(h2c::frame(h2c::PING, 0, 0, &n.to_be_bytes()));
        }
        let id = conn.next_stream();
        flood.extend(h2c::frame(h2c::HEADERS, 0, id, &h2c::get_headers("/ready")));
        let mut alive = conn.send(&flood);
        let more = h2c::header_block(&[("x-more", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]);
        while alive && !done.given() {
            let continued: Vec<u8> = (0..100)
                .flat_map(|_| h2c::frame(h2c::CONTINUATION, 0, id, &more))
                .collect();
            alive = conn.send(&continued)
                && !closed_within(&mut conn.stream, Duration::from_millis(100));
        }
    }
}

/// GETs over HTTP/2 whose stream the client never ends, then streams opened and reset at once,
/// 200 at a time (the "rapid reset" attack, which h2 answers with a GOAWAY and a warning);
/// counts the connections serve closed.
fn rapid_resets(from: IpAddr, to: SocketAddr, done: &Stop, closed: &AtomicUsize) {
    while !done.given() {
        let Some(mut conn) = h2c_from(from, to) else {
            done.pause(Duration::from_millis(200));
            continue;
        };
        let get = h2c::get_headers("/ready");
        let mut burst = Vec::new();
        for _ in 0..4 {
            let id = conn.next_stream();
            burst.extend(h2c::frame(h2c::HEADERS, h2c::END_HEADERS, id, &get));
        }
        for _ in 0..200 {
            let id = conn.next_stream();
            let end = h2c::END_HEADERS | h2c::END_STREAM;
            burst.extend(h2c::frame(h2c::HEADERS, end, id, &get));
            burst.extend(h2c::frame(h2c::RST_STREAM, 0, id, &CANCEL.to_be_bytes()));
        }
        conn.send(&burst);
        if closed_within(&mut conn.stream, Duration::from_millis(1000)) {
            closed.fetch_add(1, Ordering::SeqCst);
        }
        done.pause(Duration::from_millis(100));
    }
}

/// What the kubelet saw: the time of every answer, and the probes that got none.
#[derive(Default)]
struct Seen {
    took: Vec<(&'static str, Duration)>,
    lost: Vec<&'static str>,
}

/// The kubelet: `/ready` and `/livez` over HTTP/1, and the gRPC health check over h2c, each on
/// a fresh connection, until `done`. A wrong answer fails the test; a lost one is counted.
fn probes(to: SocketAddr, done: &Stop) -> Seen {
    let mut seen = Seen::default();
    while !done.given() {
        for path in ["/ready", "/livez"] {
            match std::panic::catch_unwind(|| ask(to, "GET", path, &[])) {
                Ok(answer) => {
                    assert_eq!(answer.status, 200, "{path} under attack: {answer:?}");
                    seen.took.push((path, answer.took));
                }
                Err(_) => seen.lost.push(path),
            }
        }
        let started = Instant::now();
        match H2c::connect(to).is_some_and(|mut grpc| grpc.check_serving(LOOSE_BOUND)) {
            true => seen.took.push(("grpc", started.elapsed())),
            false => seen.lost.push("grpc"),
        }
        done.pause(Duration::from_millis(100));
    }
    seen
}

/// Runs every attack at once from `from` beside the kubelet's probes, through several
/// connection lifetimes; what the kubelet saw, and serve's log.
fn attacked_from(from: IpAddr) -> (Seen, String) {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = format!("tcp://{}", target.local_addr().unwrap());
    let mut served = Served::start(&["--attempt-timeout", "300ms", &ready]);
    let addr = served.addr;
    let (done, closed) = (Stop::default(), AtomicUsize::new(0));
    let seen = thread::scope(|scope| {
        let mut attackers = Vec::new();
        for n in 0..88 {
            let (done, closed) = (&done, &closed);
            attackers.push(scope.spawn(move || match n {
                0..64 => endless_grpc_bodies(from, addr, done),
                64..80 => endless_http1_body(from, addr, done),
                80..84 => rapid_resets(from, addr, done, closed),
                _ => floods(from, addr, done),
            }));
        }
        let kubelet = scope.spawn(|| probes(addr, &done));
        // The attack's length: several connection lifetimes.
        thread::sleep(ATTACK);
        done.give();
        for attacker in attackers {
            attacker.join().unwrap();
        }
        kubelet.join().unwrap()
    });
    let (took, lost) = (&seen.took, &seen.lost);
    let slow: Vec<_> = took.iter().filter(|(_, t)| *t >= PROBE_BOUND).collect();
    let slowest = took.iter().map(|(_, t)| *t).max().unwrap_or_default();
    eprintln!(
        "attack from {from}: {} probes answered, {} lost, {} in {PROBE_BOUND:?} or more, \
         slowest {slowest:?}",
        took.len(),
        lost.len(),
        slow.len()
    );
    assert!(
        took.len() >= 30,
        "only {} probes answered in {ATTACK:?}",
        took.len()
    );
    assert!(slowest < LOOSE_BOUND, "a probe took {slowest:?}: {slow:?}");
    // A stall of the loaded machine may slow one probe in twenty; the attack may not.
    assert!(
        slow.len() * 20 <= took.len(),
        "{} of {} probes took {PROBE_BOUND:?} or more: {slow:?}",
        slow.len(),
        took.len()
    );
    let peak = peak_kib(served.running.pid());
    eprintln!("serve's peak resident memory: {peak} KiB");
    assert!(
        crate::support::skip_under_qemu(crate::support::measure::MEMORY_UNDER_QEMU)
            || peak < MEMORY_MIB * 1024,
        "serve grew to {peak} KiB under attack"
    );
    served.running.signal(libc::SIGTERM);
    (seen, served.running.finish().stderr)
}

/// The log holds serving, the target ready, the signal: nothing the attackers did.
#[track_caller]
fn quiet(log: &str) {
    assert!(
        log.lines().count() <= 4,
        "the attack reached the log:\n{log}"
    );
}

#[test]
fn attacks_from_another_pod_neither_lock_out_probes_nor_fill_the_log() {
    let (seen, log) = attacked_from(OTHER_POD);
    assert_eq!(seen.lost, Vec::<&str>::new(), "probes lost");
    quiet(&log);
}

#[test]
fn attacks_from_the_kubelet_own_address_neither_lock_out_probes_nor_fill_the_log() {
    let (seen, log) = attacked_from(NODE);
    // The kubelet's connection can be taken for an attacker's idle one when the machine stalls
    // it between its connect and its request: a few in a hundred, which failureThreshold
    // absorbs; a lock-out loses them all.
    let asked = seen.took.len() + seen.lost.len();
    assert!(
        seen.lost.len() * 50 <= asked,
        "{} of {asked} probes lost: {:?}",
        seen.lost.len(),
        seen.lost
    );
    quiet(&log);
}

#[test]
fn at_v_the_http_library_complaints_are_capped() {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = format!("tcp://{}", target.local_addr().unwrap());
    let mut served = Served::start(&["-v", &ready]);
    let (addr, done, closed) = (served.addr, Stop::default(), AtomicUsize::new(0));
    thread::scope(|scope| {
        let resets: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| rapid_resets(OTHER_POD, addr, &done, &closed)))
            .collect();
        // h2 complains of each connection: shown at -v, but only the first few of 40.
        served.running.line("reached limit");
        wait_until("40 connections closed for their resets", || {
            closed.load(Ordering::SeqCst) >= 40
        });
        done.give();
        resets.into_iter().for_each(|r| r.join().unwrap());
    });
    served.running.signal(libc::SIGTERM);
    let log = served.running.finish().stderr;
    let complaints = log.lines().filter(|l| l.contains("reached limit")).count();
    assert!(complaints <= 10, "{complaints} lines from h2:\n{log}");
}

#[test]
fn at_the_cap_the_oldest_idle_connection_makes_room() {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = format!("tcp://{}", target.local_addr().unwrap());
    // Connections live 5 s past the attempt timeout: long enough to fill the cap in.
    let served = Served::start(&["--attempt-timeout", "10s", &ready]);
    let limit = Duration::from_secs(10);
    // 64 HTTP/2 connections, each asked once and kept open, idle, oldest first.
    let mut open: Vec<H2c> = (0..64)
        .map(|n| {
            let mut conn = H2c::connect(served.addr).unwrap();
            assert!(conn.check_serving(limit), "connection {n} was not answered");
            conn
        })
        .collect();
    // One more: the first is closed for it; the second and the last still answer.
    let mut newest = H2c::connect(served.addr).unwrap();
    assert!(
        newest.check_serving(limit),
        "the new connection was not answered"
    );
    assert!(
        closed_within(&mut open[0].stream, limit),
        "the oldest idle connection is still open"
    );
    for n in [1, 63] {
        assert!(open[n].check_serving(limit), "connection {n} was closed");
    }
}

#[test]
fn a_request_body_is_bounded_over_http2_and_not_waited_for_over_http1() {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = format!("tcp://{}", target.local_addr().unwrap());
    // Connections may live 15 s: only the body's own bound can end the call sooner.
    let served = Served::start(&["--attempt-timeout", "10s", &ready]);
    // A gRPC call whose message never ends: refused once its 2 s are up, the connection kept.
    let mut conn = H2c::connect(served.addr).unwrap();
    let id = conn.next_stream();
    let mut call = h2c::frame(
        h2c::HEADERS,
        h2c::END_HEADERS,
        id,
        &h2c::grpc_check_headers(),
    );
    call.extend(h2c::frame(h2c::DATA, 0, id, &[0, 0, 0, 3, 0xe8, 0x0a]));
    assert!(conn.send(&call));
    let sent = Instant::now();
    let by = sent + Duration::from_secs(12);
    loop {
        let (kind, flags, on, _) = conn.read_frame(by).expect("the call was never ended");
        if on == id && (kind == h2c::RST_STREAM || flags & h2c::END_STREAM != 0) {
            break;
        }
    }
    let took = sent.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(6),
        "the call ended after {took:?}"
    );
    assert!(
        conn.check_serving(Duration::from_secs(10)),
        "the connection was lost"
    );
    // HTTP/1: answered at once, and the connection closed with the body still coming.
    let mut stream = TcpStream::connect(served.addr).unwrap();
    let head = "GET /ready HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let sent = Instant::now();
    assert!(
        closed_within(&mut stream, Duration::from_secs(10)),
        "still open"
    );
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "closed after {:?}",
        sent.elapsed()
    );
}

#[test]
fn a_connection_that_floods_frames_is_cut_off_at_its_budget() {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = format!("tcp://{}", target.local_addr().unwrap());
    // Connections may live 15 s: only the budget can end this one sooner.
    let served = Served::start(&["--attempt-timeout", "10s", &ready]);
    for (label, kind, payload) in [
        ("PING", h2c::PING, vec![0u8; 8]),
        ("SETTINGS", h2c::SETTINGS, vec![0, 3, 0, 0, 0, 100]),
    ] {
        // A well-behaved call first, then 10,000 frames that each ask for an answer.
        let mut conn = H2c::connect(served.addr).unwrap();
        assert!(conn.check_serving(Duration::from_secs(10)));
        let flood: Vec<u8> = (0..10_000)
            .flat_map(|_| h2c::frame(kind, 0, 0, &payload))
            .collect();
        let sent = Instant::now();
        let _ = conn.send(&flood);
        assert!(
            closed_within(&mut conn.stream, Duration::from_secs(5)),
            "a {label} flood kept its connection for {:?}",
            sent.elapsed()
        );
    }
}
