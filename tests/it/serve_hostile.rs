//! `readygate serve` against hostile clients: slowloris (heads dripped a byte at a time),
//! 10,000 connections that send nothing, huge and endless heads, clients that never read. A
//! well-behaved client keeps being answered throughout, and serve's memory stays small. The
//! bound on each answer here is loose (a loaded 2-core machine also runs the attackers); the
//! benchmark measures the real latency.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::events::Stop;
use crate::support::served::{ask, Served};
use crate::support::wait_until;

/// The longest a well-behaved request may take while the attack runs, here.
const LOOSE_BOUND: Duration = Duration::from_secs(3);

/// Peak memory serve may reach under attack (the debug build; the release one is smaller).
const MEMORY_MIB: u64 = 40;

/// A serve with one ready target whose result stays fresh, so every answer is the cached one.
fn served() -> (Served, TcpListener) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = format!("tcp://{}", listener.local_addr().unwrap());
    (Served::start(&["--fresh-for", "1h", &target]), listener)
}

/// The well-behaved client, as the attack sees it: told when to stop, and counting its answers.
#[derive(Default)]
struct Client {
    /// Given once the attack is over.
    stop: Stop,
    /// Answers it has had so far.
    answered: AtomicUsize,
    /// Set when it stops asking (told to, or failed): no more answers will come.
    ended: AtomicBool,
}

impl Client {
    /// Waits until the client has had `n` more answers: the attack held while serve went on
    /// answering.
    #[track_caller]
    fn answered_more(&self, n: usize) {
        let from = self.answered.load(Ordering::SeqCst);
        wait_until(&format!("{n} more answers to the client"), || {
            self.answered.load(Ordering::SeqCst) >= from + n || self.ended.load(Ordering::SeqCst)
        });
    }
}

/// Marks the client ended when it stops, even by a failed assertion (whose panic its thread
/// then carries to the test).
struct Ending<'a>(&'a AtomicBool);

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Asks `/ready` over and over until told to stop, each answer 200 within [`LOOSE_BOUND`];
/// returns how many were asked and the slowest. A connection of this client can be evicted as
/// one of the attacker's when the machine stalls it between connecting and sending its request
/// (the benchmark counts these): a few such losses in a hundred are tolerated, as the
/// kubelet's failureThreshold tolerates them, never a wrong or slow answer.
fn keep_asking(addr: SocketAddr, client: &Client) -> (usize, Duration) {
    let _ending = Ending(&client.ended);
    let (mut asked, mut lost, mut slowest) = (0, 0, Duration::ZERO);
    while !client.stop.given() || asked < 5 {
        asked += 1;
        let Some(answer) = std::panic::catch_unwind(|| ask(addr, "GET", "/ready", &[])).ok() else {
            lost += 1;
            continue;
        };
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(
            answer.took < LOOSE_BOUND,
            "answered in {:?} under attack",
            answer.took
        );
        slowest = slowest.max(answer.took);
        client.answered.fetch_add(1, Ordering::SeqCst);
        // A client's pace, cut short when the attack ends.
        client.stop.pause(Duration::from_millis(20));
    }
    assert!(
        lost * 50 <= asked,
        "{lost} of {asked} requests lost under attack"
    );
    (asked, slowest)
}

/// serve's peak resident memory so far, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Runs `attack` beside a well-behaved client (which it can wait on), then checks serve's memory.
fn under_attack(label: &str, attack: impl FnOnce(SocketAddr, &Client) + Send) {
    let (served, _target) = served();
    let addr = served.addr;
    let client = Client::default();
    let (asked, slowest) = thread::scope(|scope| {
        let asking = scope.spawn(|| keep_asking(addr, &client));
        attack(addr, &client);
        client.stop.give();
        asking.join().unwrap()
    });
    let peak = peak_kib(served.running.pid());
    eprintln!("{label}: {asked} answers, slowest {slowest:?}, serve's peak {peak} KiB");
    if crate::support::skip_under_qemu(crate::support::measure::MEMORY_UNDER_QEMU) {
        return;
    }
    assert!(
        peak < MEMORY_MIB * 1024,
        "{label}: serve grew to {peak} KiB"
    );
}

/// Raises this process's soft descriptor limit to the hard one; returns it.
fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit on a struct owned here.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    limit.rlim_cur
}

#[test]
fn slowloris_heads_do_not_lock_out_a_well_behaved_client() {
    under_attack("slowloris", |addr, _| {
        // 200 connections, each dripping one byte of its head every 50 ms for 3 s.
        let mut drips: Vec<TcpStream> = (0..200)
            .filter_map(|_| TcpStream::connect(addr).ok())
            .collect();
        let head = b"GET /ready HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        for byte in head.iter().cycle().take(60) {
            for drip in &mut drips {
                let _ = drip.write_all(&[*byte]);
            }
            thread::sleep(Duration::from_millis(50));
        }
        // By now serve has closed each: evicted, or out of time for its head.
        let closed = drips
            .iter_mut()
            .map(|drip| {
                drip.set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut rest = Vec::new();
                match drip.read_to_end(&mut rest) {
                    Ok(_) => true,
                    Err(e) => !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                }
            })
            .filter(|closed| *closed)
            .count();
        assert_eq!(closed, drips.len());
    });
}

#[test]
fn ten_thousand_idle_connections_do_not_lock_out_a_well_behaved_client() {
    let limit = raise_fd_limit();
    let count = 10_000.min(limit.saturating_sub(500) as usize);
    assert!(
        count >= 1000,
        "descriptor limit {limit} is too low for this test"
    );
    under_attack("idle connections", |addr, client| {
        let mut held = Vec::with_capacity(count);
        let started = Instant::now();
        while held.len() < count {
            match TcpStream::connect(addr) {
                Ok(stream) => held.push(stream),
                Err(e) => panic!("connection {} refused: {e}", held.len()),
            }
        }
        eprintln!("{count} connections opened in {:?}", started.elapsed());
        // Held open while the well-behaved client is answered again.
        client.answered_more(5);
    });
}

#[test]
fn clients_that_never_read_do_not_block_serve() {
    under_attack("never read", |addr, client| {
        // 500 full requests whose answers are never read, on connections kept open.
        let held: Vec<TcpStream> = (0..500)
            .filter_map(|_| {
                let mut stream = TcpStream::connect(addr).ok()?;
                stream
                    .write_all(b"GET /ready HTTP/1.1\r\nHost: x\r\n\r\n")
                    .ok()?;
                Some(stream)
            })
            .collect();
        assert!(held.len() > 400);
        client.answered_more(5);
    });
}

#[test]
fn huge_and_endless_heads_are_refused_and_do_not_grow_serve() {
    let refused = AtomicUsize::new(0);
    under_attack("huge heads", |addr, _| {
        for round in 0..20 {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            // A 1 MiB header value, or a flood of small headers, or a head that never ends.
            let mut head = b"GET /ready HTTP/1.1\r\nHost: x\r\n".to_vec();
            match round % 3 {
                0 => head.extend(b"X-Huge: ".iter().chain(&vec![b'a'; 1 << 20])),
                1 => (0..20_000).for_each(|n| head.extend(format!("X-{n}: v\r\n").as_bytes())),
                _ => head.extend(std::iter::repeat_n(b'a', 1 << 20)),
            }
            // serve stops reading (and closes) long before all of it is sent.
            let _ = stream.write_all(&head);
            let mut answer = Vec::new();
            let _ = stream.read_to_end(&mut answer);
            let text = String::from_utf8_lossy(&answer);
            assert!(
                !text.starts_with("HTTP/1.1 200"),
                "a huge head was answered 200"
            );
            if text.starts_with("HTTP/1.1 431") || answer.is_empty() {
                refused.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    assert_eq!(refused.load(Ordering::SeqCst), 20);
}

#[test]
fn a_head_that_never_ends_is_cut_at_the_header_timeout() {
    let (served, _target) = served();
    let mut stream = TcpStream::connect(served.addr).unwrap();
    stream.write_all(b"GET /ready HTTP/1.1\r\n").unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let took = started.elapsed();
    // 2 s for the head, with a margin for a loaded machine.
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(6),
        "closed after {took:?}"
    );
    assert!(!String::from_utf8_lossy(&answer).contains(" 200 "));
}

#[test]
fn a_head_of_12_kib_in_three_headers_is_refused_and_one_of_6_kib_is_answered() {
    let (served, _target) = served();
    let head = |kib: usize| -> Vec<String> {
        (0..3)
            .map(|n| format!("X-Big-{n}: {}", "a".repeat(kib * 1024 / 3)))
            .collect()
    };
    let small = head(6);
    let small: Vec<&str> = small.iter().map(String::as_str).collect();
    assert_eq!(ask(served.addr, "GET", "/ready", &small).status, 200);
    let large = head(12);
    let large: Vec<&str> = large.iter().map(String::as_str).collect();
    let answer = ask(served.addr, "GET", "/ready", &large);
    assert_eq!(answer.status, 431, "{answer:?}");
}
