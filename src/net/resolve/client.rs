//! Asking the nameservers: AAAA and A of a name together over one UDP socket per server (TCP
//! when an answer is truncated), server after server, round after round, each wait bounded by
//! `resolv.conf`'s `timeout` and by the attempt's end. Answers are kept in the run's [`Cache`].
//!
//! A server that fails to answer is passed over by later lookups too (as glibc's resolver
//! rotates past a dead one, [`Rotation`]), so a dead first nameserver costs one wait, not one
//! per attempt.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::Duration;

use hickory_proto::rr::RecordType;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::time::{timeout_at, Instant};

use super::cache::Cache;
use super::conf::Conf;
use super::message::{Answer, Question};
use crate::error::describe_io;

/// How long the other question is awaited once one has addresses (RFC 8305's "resolution
/// delay"), so a server that drops AAAA queries does not hold up an IPv4 answer.
const RESOLUTION_DELAY: Duration = Duration::from_millis(50);

/// The record types asked for, IPv6 first.
const TYPES: [RecordType; 2] = [RecordType::AAAA, RecordType::A];

/// The nameserver a run's lookups ask first, once one has failed to answer.
#[derive(Debug, Default)]
pub struct Rotation(Mutex<Option<IpAddr>>);

/// What became of one question: a definite answer (addresses or negative), why none came, or
/// `None` when it was not waited for (the other question had addresses).
pub type QuestionOutcome = Option<Result<Answer, String>>;

/// One lookup's exchanges with the nameservers of `conf`, which must be over by `end`.
pub struct Lookup<'r> {
    pub conf: Conf,
    pub end: Option<Instant>,
    /// The socket to each server asked so far, shared by every question of the lookup.
    pub sockets: Vec<(SocketAddr, UdpSocket)>,
    /// The run's answers, read and kept.
    pub cache: &'r Mutex<Cache>,
    /// The run's first nameserver.
    pub rotation: &'r Rotation,
}

impl Lookup<'_> {
    /// AAAA and A of `name`, from the cache or else asked together: once one has addresses,
    /// the other is awaited no longer than the resolution delay.
    pub async fn ask(&mut self, name: &str) -> [QuestionOutcome; 2] {
        let id = fastrand::u16(..);
        let mut asking = Asking {
            name,
            cache: self.cache,
            questions: Vec::new(),
            outcomes: [None, None],
            patience: None,
        };
        for (n, qtype) in TYPES.into_iter().enumerate() {
            let cached = self.cache.lock().expect("DNS cache lock").get(name, qtype);
            if let Some(Answer::Addresses(..)) = cached {
                asking.patience = Some(Instant::now() + RESOLUTION_DELAY);
            }
            asking.outcomes[n] = cached.map(Ok);
            match Question::new(id.wrapping_add(n as u16), name, qtype) {
                Ok(question) => asking.questions.push(question),
                Err(reason) => return [Some(Err(reason.clone())), Some(Err(reason))],
            }
        }
        let conf = &self.conf;
        let servers = self.rotation.order(&conf.nameservers);
        for &ip in servers.iter().cycle().take(conf.attempts * servers.len()) {
            let server = SocketAddr::new(ip, 53);
            let (now, wait) = (Instant::now(), conf.timeout);
            let end = self.end.map_or(now + wait, |end| end.min(now + wait));
            if asking.open().is_empty() || asking.patience_over() || end <= now {
                break;
            }
            // Dropped unanswered or cancelled: later lookups start after this server.
            let pass_over = PassOver(ip, &conf.nameservers, self.rotation);
            let answered = match socket(&mut self.sockets, server).await {
                Ok(socket) => asking.ask(server, socket, end).await,
                Err(reason) => asking.fail(&asking.open(), &reason),
            };
            if answered {
                std::mem::forget(pass_over);
            }
        }
        asking.outcomes
    }
}

/// The questions of one [`Lookup::ask`] as they get answers.
struct Asking<'n> {
    name: &'n str,
    cache: &'n Mutex<Cache>,
    questions: Vec<Question>,
    outcomes: [QuestionOutcome; 2],
    /// Once a question has addresses: when the other stops being awaited.
    patience: Option<Instant>,
}

impl Asking<'_> {
    /// The questions still without a definite answer.
    fn open(&self) -> Vec<usize> {
        (0..2)
            .filter(|&n| !matches!(self.outcomes[n], Some(Ok(_))))
            .collect()
    }

    fn patience_over(&self) -> bool {
        self.patience.is_some_and(|at| at <= Instant::now())
    }

    /// Puts the open questions to `server` and reads its answers until each has one, `end`, or
    /// the patience runs out. `false` when the server gave no definite answer: it is passed
    /// over from now on.
    async fn ask(&mut self, server: SocketAddr, socket: &UdpSocket, end: Instant) -> bool {
        let fault = |e: io::Error| format!("{server}: {}", describe_io(&e));
        let mut waiting = self.open();
        for &n in &waiting {
            if let Err(err) = socket.send(&self.questions[n].wire).await {
                return self.fail(&waiting, &fault(err));
            }
        }
        let mut answered = false;
        let mut buffer = vec![0; 4096];
        while !waiting.is_empty() {
            let until = self.patience.map_or(end, |at| at.min(end));
            let length = match timeout_at(until, socket.recv(&mut buffer)).await {
                Ok(Ok(length)) => length,
                Ok(Err(err)) => return self.fail(&waiting, &fault(err)) || answered,
                // Not awaited to the end: no verdict on the server.
                Err(_) if self.patience_over() => return true,
                Err(_) => return self.fail(&waiting, &format!("{server} timed out")) || answered,
            };
            // A datagram answers at most one question; others (a late answer to an earlier
            // question of this lookup) are ignored.
            let datagram = &buffer[..length];
            let Some((at, answer)) = waiting.iter().enumerate().find_map(|(at, &n)| {
                let answer = self.questions[n].answer(datagram).transpose()?;
                Some((at, answer))
            }) else {
                continue;
            };
            let n = waiting.swap_remove(at);
            let answer = match answer {
                Ok(Answer::Truncated) => timeout_at(until, tcp(server, &self.questions[n]))
                    .await
                    .unwrap_or_else(|_| Err(format!("{server} timed out (TCP)"))),
                Ok(Answer::Failed(rcode)) => Err(format!("{server} {}", rcode_name(rcode))),
                Ok(answer) => Ok(answer),
                Err(reason) => Err(format!("{server}: {reason}")),
            };
            if let Ok(answer) = &answer {
                let mut cache = self.cache.lock().expect("DNS cache lock");
                cache.put(self.name, TYPES[n], answer);
                if matches!(answer, Answer::Addresses(..)) && self.patience.is_none() {
                    self.patience = Some(Instant::now() + RESOLUTION_DELAY);
                }
                answered = true;
            }
            self.outcomes[n] = Some(answer);
        }
        answered
    }

    /// Every question in `which` got no answer, for `reason`; `false`.
    fn fail(&mut self, which: &[usize], reason: &str) -> bool {
        for &n in which {
            self.outcomes[n] = Some(Err(reason.to_string()));
        }
        false
    }
}

/// The lookup's socket to `server`, connected so an ICMP "port unreachable" is an error at
/// once and datagrams from anywhere else are never read.
async fn socket(
    sockets: &mut Vec<(SocketAddr, UdpSocket)>,
    server: SocketAddr,
) -> Result<&UdpSocket, String> {
    if let Some(at) = sockets.iter().position(|(s, _)| *s == server) {
        return Ok(&sockets[at].1);
    }
    let fault = |e: io::Error| format!("{server}: {}", describe_io(&e));
    let local: IpAddr = match server {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let socket = UdpSocket::bind((local, 0)).await.map_err(fault)?;
    socket.connect(server).await.map_err(fault)?;
    sockets.push((server, socket));
    Ok(&sockets[sockets.len() - 1].1)
}

/// A server being asked: when dropped (not forgotten), later lookups start at the next server.
struct PassOver<'s>(IpAddr, &'s [IpAddr], &'s Rotation);

impl Drop for PassOver<'_> {
    fn drop(&mut self) {
        self.2.pass_over(self.0, self.1);
    }
}

impl Rotation {
    /// The servers in the order to ask them: from the remembered first one, round the list.
    fn order(&self, servers: &[IpAddr]) -> Vec<IpAddr> {
        let first = *self.0.lock().expect("nameserver lock");
        let start = servers.iter().position(|s| Some(*s) == first).unwrap_or(0);
        [&servers[start..], &servers[..start]].concat()
    }

    /// `server` did not answer: if lookups start with it, they start with the next one instead.
    fn pass_over(&self, server: IpAddr, servers: &[IpAddr]) {
        let mut first = self.0.lock().expect("nameserver lock");
        let current = servers.iter().position(|s| Some(*s) == *first).unwrap_or(0);
        if servers.get(current) == Some(&server) {
            let next = servers[(current + 1) % servers.len()];
            if next != server {
                tracing::debug!("DNS: {server} did not answer; asking {next} first from now on");
            }
            *first = Some(next);
        }
    }
}

/// One exchange over TCP (each message with a two-byte length before it).
async fn tcp(server: SocketAddr, question: &Question) -> Result<Answer, String> {
    let fault = |e: io::Error| format!("{server} (TCP): {}", describe_io(&e));
    let mut stream = TcpStream::connect(server).await.map_err(fault)?;
    let framed = [
        &(question.wire.len() as u16).to_be_bytes()[..],
        &question.wire,
    ]
    .concat();
    stream.write_all(&framed).await.map_err(fault)?;
    let mut response = vec![0; usize::from(stream.read_u16().await.map_err(fault)?)];
    stream.read_exact(&mut response).await.map_err(fault)?;
    match question.answer(&response) {
        Ok(Some(Answer::Truncated)) => Err(format!("{server} (TCP): truncated answer")),
        Ok(Some(Answer::Failed(rcode))) => Err(format!("{server} {}", rcode_name(rcode))),
        Ok(Some(answer)) => Ok(answer),
        Ok(None) => Err(format!("{server} (TCP): unrelated answer")),
        Err(reason) => Err(reason),
    }
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
        let rotation = Rotation::default();
        assert_eq!(rotation.order(&servers), servers);
        rotation.pass_over(servers[1], &servers);
        assert_eq!(
            rotation.order(&servers),
            servers,
            "only the first is passed over"
        );
        rotation.pass_over(servers[0], &servers);
        assert_eq!(
            rotation.order(&servers),
            [servers[1], servers[2], servers[0]]
        );
        rotation.pass_over(servers[1], &servers);
        rotation.pass_over(servers[2], &servers);
        assert_eq!(rotation.order(&servers), servers, "round the list");
        // Another resolv.conf: the remembered server is not in it, so its first comes first.
        let other = vec![servers[2], servers[1]];
        rotation.pass_over(servers[0], &servers);
        assert_eq!(rotation.order(&other), [servers[1], servers[2]]);
        *rotation.0.lock().unwrap() = Some("10.9.9.9".parse().unwrap());
        assert_eq!(rotation.order(&other), other);
    }
}
