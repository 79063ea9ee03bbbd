//! Asking the nameservers: one question over UDP (TCP when the answer is truncated), server
//! after server, round after round, each wait bounded by `resolv.conf`'s `timeout`.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::time::timeout;

use super::conf::Conf;
use super::message::{Answer, Question, RecordType};
use crate::transport::describe_io;

/// The DNS port.
const PORT: u16 = 53;

/// The definite answer of the first server that gives one (addresses, NXDOMAIN or NODATA), or
/// why none did.
pub async fn ask(conf: &Conf, name: &str, qtype: RecordType) -> Result<Answer, String> {
    let question = Question::new(fastrand::u16(..), name, qtype)?;
    let mut last = String::from("no nameserver");
    for _ in 0..conf.attempts {
        for server in &conf.nameservers {
            let server = SocketAddr::new(*server, PORT);
            let answer = match timeout(conf.timeout, udp(server, &question)).await {
                Ok(Ok(Answer::Truncated)) => timeout(conf.timeout, tcp(server, &question))
                    .await
                    .unwrap_or_else(|_| Err(format!("{server} timed out (TCP)"))),
                Ok(answer) => answer,
                Err(_) => Err(format!("{server} timed out")),
            };
            match answer {
                Ok(Answer::Failed(rcode)) => last = format!("{server} {}", rcode_name(rcode)),
                Ok(answer) => return Ok(answer),
                Err(reason) => last = reason,
            }
        }
    }
    Err(last)
}

/// One exchange over a connected UDP socket, so an ICMP "port unreachable" is an error at
/// once, and datagrams from anywhere else are never read.
async fn udp(server: SocketAddr, question: &Question) -> Result<Answer, String> {
    let fault = |e: io::Error| format!("{server}: {}", describe_io(&e));
    let local: IpAddr = match server {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let socket = UdpSocket::bind((local, 0)).await.map_err(fault)?;
    socket.connect(server).await.map_err(fault)?;
    socket.send(question.wire()).await.map_err(fault)?;
    let mut buffer = vec![0; 4096];
    loop {
        let length = socket.recv(&mut buffer).await.map_err(fault)?;
        if let Some(answer) = question.answer(&buffer[..length])? {
            return Ok(answer);
        }
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
