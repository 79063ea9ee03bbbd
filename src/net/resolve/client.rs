//! Asking the nameservers. The questions of one lookup go over one UDP socket per server,
//! AAAA and A of a name together (TCP when an answer is truncated); server after server, round
//! after round, each wait bounded by `resolv.conf`'s `timeout` and by the attempt's end.
//!
//! Which server is asked first is remembered across lookups: once one fails to answer, later
//! lookups start at the one after it (glibc's resolver rotates past a dead server in the same
//! way), so a dead first nameserver costs one wait, not one per attempt.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::time::{timeout_at, Instant};

use super::conf::Conf;
use super::message::{Answer, Question, RecordType};
use crate::error::describe_io;

/// The DNS port.
const PORT: u16 = 53;

/// How long the other questions are awaited once one has addresses (RFC 8305's "resolution
/// delay"), so a server that drops AAAA queries does not hold up an IPv4 answer.
pub const RESOLUTION_DELAY: Duration = Duration::from_millis(50);

/// The nameserver lookups ask first, once one has failed to answer.
static FIRST: Mutex<Option<IpAddr>> = Mutex::new(None);

/// What became of one question: a definite answer (addresses, NXDOMAIN or NODATA), why none
/// came, or `None` when it was not waited for (another question had addresses).
pub type Outcome = Option<Result<Answer, String>>;

/// One lookup's exchanges with the nameservers of `conf`.
pub struct Exchange<'c> {
    conf: &'c Conf,
    /// When the attempt ends: no wait goes beyond it.
    end: Option<Instant>,
    /// The socket to each server asked so far, shared by every question of the lookup.
    sockets: Vec<(SocketAddr, UdpSocket)>,
}

impl<'c> Exchange<'c> {
    /// A lookup through the servers of `conf` that must be over by `end`.
    pub fn new(conf: &'c Conf, end: Option<Instant>) -> Self {
        Exchange {
            conf,
            end,
            sockets: Vec::new(),
        }
    }

    /// Whether the attempt's end has passed.
    pub fn out_of_time(&self) -> bool {
        self.end.is_some_and(|end| end <= Instant::now())
    }

    /// Asks for each of `qtypes` of `name` at once; one outcome per type, in order. With
    /// `hurry` (addresses of `name` are already known) none is awaited beyond the resolution
    /// delay, as once one of them has addresses.
    pub async fn ask(&mut self, name: &str, qtypes: &[RecordType], hurry: bool) -> Vec<Outcome> {
        let id = fastrand::u16(..);
        let questions: Result<Vec<Question>, String> = (0..)
            .zip(qtypes)
            .map(|(n, qtype)| Question::new(id.wrapping_add(n), name, *qtype))
            .collect();
        let questions = match questions {
            Ok(questions) => questions,
            Err(reason) => return vec![Some(Err(reason)); qtypes.len()],
        };
        let mut state = State {
            outcomes: vec![None; questions.len()],
            open: (0..questions.len()).collect(),
            patience: hurry.then(|| Instant::now() + RESOLUTION_DELAY),
        };
        let conf = self.conf;
        let order = order(&conf.nameservers);
        'rounds: for _ in 0..conf.attempts {
            for &ip in &order {
                let server = SocketAddr::new(ip, PORT);
                let mut end = Instant::now() + conf.timeout;
                end = end.min(self.end.unwrap_or(end));
                if state.open.is_empty() || state.patience_over() || end <= Instant::now() {
                    break 'rounds;
                }
                let guard = Asking {
                    server: ip,
                    servers: &conf.nameservers,
                    settled: false,
                };
                let heard = match self.socket(server).await {
                    Ok(socket) => state.ask(server, socket, &questions, end).await,
                    Err(reason) => {
                        state.fail_open(&reason);
                        Heard::Nothing
                    }
                };
                guard.settle(heard);
            }
        }
        state.outcomes
    }

    /// The lookup's socket to `server`, connected so an ICMP "port unreachable" is an error at
    /// once and datagrams from anywhere else are never read.
    async fn socket(&mut self, server: SocketAddr) -> Result<&UdpSocket, String> {
        let index = match self.sockets.iter().position(|(s, _)| *s == server) {
            Some(index) => index,
            None => {
                let fault = |e: io::Error| format!("{server}: {}", describe_io(&e));
                let local: IpAddr = match server {
                    SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
                    SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
                };
                let socket = UdpSocket::bind((local, 0)).await.map_err(fault)?;
                socket.connect(server).await.map_err(fault)?;
                self.sockets.push((server, socket));
                self.sockets.len() - 1
            }
        };
        Ok(&self.sockets[index].1)
    }
}

/// The questions of one [`Exchange::ask`] as they get answers.
struct State {
    /// One per question.
    outcomes: Vec<Outcome>,
    /// The questions still without a definite answer.
    open: Vec<usize>,
    /// Once a question has addresses: when the others stop being awaited.
    patience: Option<Instant>,
}

/// What a server did for the questions put to it.
enum Heard {
    /// Gave at least one definite answer.
    Answers,
    /// Answered nothing usable within the wait: it is passed over from now on.
    Nothing,
    /// Still had questions open when they stopped being awaited: no verdict.
    CutShort,
}

impl State {
    /// Whether the questions still open are no longer awaited.
    fn patience_over(&self) -> bool {
        self.patience.is_some_and(|at| at <= Instant::now())
    }

    /// Puts the open questions to `server` and reads its answers until all have one, `end`,
    /// or the patience runs out.
    async fn ask(
        &mut self,
        server: SocketAddr,
        socket: &UdpSocket,
        questions: &[Question],
        end: Instant,
    ) -> Heard {
        let fault = |e: io::Error| format!("{server}: {}", describe_io(&e));
        for &index in &self.open {
            if let Err(err) = socket.send(questions[index].wire()).await {
                self.fail_open(&fault(err));
                return Heard::Nothing;
            }
        }
        let mut waiting = self.open.clone();
        let mut answered = false;
        let mut buffer = vec![0; 4096];
        while !waiting.is_empty() {
            let until = self.patience.map_or(end, |at| at.min(end));
            let length = match timeout_at(until, socket.recv(&mut buffer)).await {
                Ok(Ok(length)) => length,
                Ok(Err(err)) => {
                    self.fail(&waiting, &fault(err));
                    break;
                }
                Err(_) if self.patience_over() => return Heard::CutShort,
                Err(_) => {
                    self.fail(&waiting, &format!("{server} timed out"));
                    break;
                }
            };
            // A datagram answers at most one question; others (a late answer to an earlier
            // question of this lookup) are ignored.
            let datagram = &buffer[..length];
            let Some((at, answer)) = waiting.iter().enumerate().find_map(|(at, &index)| {
                questions[index]
                    .answer(datagram)
                    .transpose()
                    .map(|answer| (at, answer))
            }) else {
                continue;
            };
            let index = waiting.swap_remove(at);
            let answer = match answer {
                Ok(Answer::Truncated) => timeout_at(until, tcp(server, &questions[index]))
                    .await
                    .unwrap_or_else(|_| Err(format!("{server} timed out (TCP)"))),
                Ok(answer) => Ok(answer),
                Err(reason) => Err(format!("{server}: {reason}")),
            };
            answered |= self.settle(index, server, answer);
        }
        match answered {
            true => Heard::Answers,
            false => Heard::Nothing,
        }
    }

    /// Records what `server` said to question `index`; `true` for a definite answer.
    fn settle(&mut self, index: usize, server: SocketAddr, answer: Result<Answer, String>) -> bool {
        let answer = match answer {
            Ok(Answer::Failed(rcode)) => Err(format!("{server} {}", rcode_name(rcode))),
            Ok(Answer::Truncated) => Err(format!("{server} (TCP): truncated answer")),
            other => other,
        };
        let definite = answer.is_ok();
        if definite {
            self.open.retain(|&open| open != index);
        }
        if matches!(answer, Ok(Answer::Addresses(..))) && self.patience.is_none() {
            self.patience = Some(Instant::now() + RESOLUTION_DELAY);
        }
        self.outcomes[index] = Some(answer);
        definite
    }

    /// Every question in `which` got no answer, for `reason`.
    fn fail(&mut self, which: &[usize], reason: &str) {
        for &index in which {
            self.outcomes[index] = Some(Err(reason.to_string()));
        }
    }

    /// Every open question got no answer, for `reason`.
    fn fail_open(&mut self, reason: &str) {
        let open = self.open.clone();
        self.fail(&open, reason);
    }
}

/// A server being asked: when the asking ends without an answer (or is cancelled, by the
/// attempt timeout or the deadline), later lookups start at the next server.
struct Asking<'s> {
    server: IpAddr,
    servers: &'s [IpAddr],
    settled: bool,
}

impl Asking<'_> {
    /// The asking ended; `heard` says whether the server is passed over.
    fn settle(mut self, heard: Heard) {
        self.settled = !matches!(heard, Heard::Nothing);
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if !self.settled {
            pass_over(self.server, self.servers);
        }
    }
}

/// The servers in the order to ask them: from the remembered first one, round the list.
fn order(servers: &[IpAddr]) -> Vec<IpAddr> {
    let first = *FIRST.lock().expect("nameserver lock");
    let start = servers
        .iter()
        .position(|server| Some(*server) == first)
        .unwrap_or(0);
    servers[start..]
        .iter()
        .chain(&servers[..start])
        .copied()
        .collect()
}

/// `server` did not answer: if lookups start with it, they start with the next one instead.
fn pass_over(server: IpAddr, servers: &[IpAddr]) {
    let mut first = FIRST.lock().expect("nameserver lock");
    let current = servers.iter().position(|s| Some(*s) == *first).unwrap_or(0);
    if servers.get(current) == Some(&server) {
        let next = servers[(current + 1) % servers.len()];
        if next != server {
            tracing::debug!("DNS: {server} did not answer; asking {next} first from now on");
        }
        *first = Some(next);
    }
}

/// One exchange over TCP (each message with a two-byte length before it).
async fn tcp(server: SocketAddr, question: &Question) -> Result<Answer, String> {
    let fault = |e: io::Error| format!("{server} (TCP): {}", describe_io(&e));
    let mut stream = TcpStream::connect(server).await.map_err(fault)?;
    let query = question.wire();
    let mut framed = (query.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(query);
    stream.write_all(&framed).await.map_err(fault)?;
    let length = stream.read_u16().await.map_err(fault)?;
    let mut response = vec![0; usize::from(length)];
    stream.read_exact(&mut response).await.map_err(fault)?;
    question
        .answer(&response)?
        .ok_or_else(|| format!("{server} (TCP): unrelated answer"))
}

/// An RCODE in words.
fn rcode_name(rcode: u16) -> String {
    match rcode {
        1 => "could not read the query (FORMERR)".into(),
        2 => "failed (SERVFAIL)".into(),
        4 => "does not do this (NOTIMP)".into(),
        5 => "refused (REFUSED)".into(),
        other => format!("answered RCODE {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_fails_is_passed_over_for_the_next_and_round_again() {
        let servers: Vec<IpAddr> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .map(|s| s.parse().unwrap())
            .to_vec();
        *FIRST.lock().unwrap() = None;
        assert_eq!(order(&servers), servers);
        pass_over(servers[1], &servers);
        assert_eq!(order(&servers), servers, "only the first is passed over");
        pass_over(servers[0], &servers);
        assert_eq!(order(&servers), [servers[1], servers[2], servers[0]]);
        pass_over(servers[1], &servers);
        pass_over(servers[2], &servers);
        assert_eq!(order(&servers), servers, "round the list");
        // Another resolv.conf: the remembered server is not in it, so its first comes first.
        let other = vec![servers[2], servers[1]];
        pass_over(servers[0], &servers);
        assert_eq!(order(&other), [servers[1], servers[2]]);
        *FIRST.lock().unwrap() = Some("10.9.9.9".parse().unwrap());
        assert_eq!(order(&other), other);
        *FIRST.lock().unwrap() = None;
    }
}
