//! A small DNS server whose every query is counted, for tests of what the resolver asks: it
//! answers A records from a table with a chosen TTL, NODATA for other types of those names and
//! NXDOMAIN for other names (both with or without an SOA giving a negative TTL), or, `silent`,
//! nothing at all (a dead nameserver). It runs on a thread that enters a pod's network
//! namespace, so it can serve on the pod's own port 53.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the server answers.
#[derive(Debug, Clone, Default)]
pub struct Zone {
    /// Names (lower case, no trailing dot) and their IPv4 address.
    pub records: Vec<(String, Ipv4Addr)>,
    /// TTL of the A records.
    pub ttl: u32,
    /// With `Some(ttl)`, negative answers carry an SOA with that TTL and MINIMUM.
    pub negative_ttl: Option<u32>,
    /// Answer nothing: the server drops every query.
    pub silent: bool,
}

/// One query the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The name asked for, lower case, no trailing dot.
    pub name: String,
    /// The record type (1 A, 28 AAAA).
    pub qtype: u16,
    /// The client's address and port.
    pub from: SocketAddr,
}

/// A running server; stops when dropped.
pub struct Responder {
    zone: Arc<Mutex<Zone>>,
    queries: Arc<Mutex<Vec<Query>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Responder {
    /// Serves `zone` on UDP `listen` inside the network namespace at `netns` (a
    /// `/proc/PID/ns/net` path).
    #[track_caller]
    pub fn start(netns: &Path, listen: SocketAddr, zone: Zone) -> Responder {
        let zone = Arc::new(Mutex::new(zone));
        let queries = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let namespace = File::open(netns).expect("open the pod's network namespace");
        let (bound, is_bound) = std::sync::mpsc::channel();
        let thread = {
            let (zone, queries, stop) = (zone.clone(), queries.clone(), stop.clone());
            std::thread::spawn(move || {
                // SAFETY: an open namespace file; only this thread changes namespace.
                let entered = unsafe { libc::setns(namespace.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(entered, 0, "setns: {}", std::io::Error::last_os_error());
                let socket = UdpSocket::bind(listen).expect("bind the DNS responder");
                socket
                    .set_read_timeout(Some(Duration::from_millis(20)))
                    .expect("read timeout");
                bound.send(()).expect("report the bind");
                serve(&socket, &zone, &queries, &stop);
            })
        };
        is_bound
            .recv_timeout(Duration::from_secs(10))
            .expect("the DNS responder did not start");
        Responder {
            zone,
            queries,
            stop,
            thread: Some(thread),
        }
    }

    /// Every query so far.
    pub fn queries(&self) -> Vec<Query> {
        self.queries.lock().unwrap().clone()
    }

    /// How many queries asked about `name` with type `qtype`.
    pub fn count(&self, name: &str, qtype: u16) -> usize {
        self.queries()
            .iter()
            .filter(|q| q.name == name && q.qtype == qtype)
            .count()
    }

    /// Answers from `zone` from now on.
    pub fn set_zone(&self, zone: Zone) {
        *self.zone.lock().unwrap() = zone;
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(socket: &UdpSocket, zone: &Mutex<Zone>, queries: &Mutex<Vec<Query>>, stop: &AtomicBool) {
    let mut buffer = [0u8; 512];
    while !stop.load(Ordering::SeqCst) {
        let Ok((length, from)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let Some((name, qtype, question_end)) = parse(&buffer[..length]) else {
            continue;
        };
        queries.lock().unwrap().push(Query {
            name: name.clone(),
            qtype,
            from,
        });
        let zone = zone.lock().unwrap().clone();
        if zone.silent {
            continue;
        }
        let reply = answer(&buffer[..question_end], &name, qtype, &zone);
        let _ = socket.send_to(&reply, from);
    }
}

/// The question's name, type and where the question ends.
fn parse(query: &[u8]) -> Option<(String, u16, usize)> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let length = usize::from(*query.get(at)?);
        at += 1;
        if length == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(query.get(at..at + length)?).to_ascii_lowercase());
        at += length;
    }
    let qtype = u16::from_be_bytes([*query.get(at)?, *query.get(at + 1)?]);
    Some((labels.join("."), qtype, at + 4))
}

/// The response to `question` (the query up to the end of its question).
fn answer(question: &[u8], name: &str, qtype: u16, zone: &Zone) -> Vec<u8> {
    let addresses: Vec<Ipv4Addr> = zone
        .records
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, ip)| *ip)
        .collect();
    let known = !addresses.is_empty();
    let answers: Vec<Ipv4Addr> = if qtype == 1 { addresses } else { Vec::new() };
    let rcode: u16 = if known { 0 } else { 3 };
    let soa = zone.negative_ttl.filter(|_| answers.is_empty());
    let mut reply = question[..2].to_vec();
    reply.extend_from_slice(&(0x8180 | rcode).to_be_bytes());
    reply.extend_from_slice(&1u16.to_be_bytes());
    reply.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    reply.extend_from_slice(&u16::from(soa.is_some()).to_be_bytes());
    reply.extend_from_slice(&0u16.to_be_bytes());
    reply.extend_from_slice(&question[12..]);
    for ip in answers {
        reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
        reply.extend_from_slice(&zone.ttl.to_be_bytes());
        reply.extend_from_slice(&4u16.to_be_bytes());
        reply.extend_from_slice(&ip.octets());
    }
    if let Some(ttl) = soa {
        // Owner: the root; MNAME and RNAME: the root; then five 32-bit fields.
        reply.extend_from_slice(&[0, 0, 6, 0, 1]);
        reply.extend_from_slice(&ttl.to_be_bytes());
        reply.extend_from_slice(&22u16.to_be_bytes());
        reply.extend_from_slice(&[0, 0]);
        for field in [1, 7200, 1800, 86400, ttl] {
            reply.extend_from_slice(&u32::to_be_bytes(field));
        }
    }
    reply
}
