//! Opening the byte stream an attempt talks over: TCP to the resolved addresses (staggered, as
//! in Happy Eyeballs), or a Unix socket.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};
use tokio::task::JoinSet;
use tokio::time::sleep;

use super::endpoint::{Endpoint, Host};
use crate::error::{describe_io, Failure};
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;

/// Any stream an HTTP or gRPC client can run over.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// A boxed [`Io`]: TCP, Unix or TLS, chosen at run time.
pub type BoxedIo = Box<dyn Io>;

/// How long one address may take to connect before the next one is tried alongside it
/// (RFC 8305's "connection attempt delay"), so an address that drops packets cannot starve
/// the others of the attempt's time.
const NEXT_ADDRESS_AFTER: Duration = Duration::from_millis(250);

/// Connects to the first address of `endpoint` that accepts, racing them as Happy Eyeballs
/// (RFC 8305) does: each joins [`NEXT_ADDRESS_AFTER`] after the one before, or at once when
/// one fails. The error names the last failure. A name is looked up by `resolver` within `at`.
pub async fn connect_tcp(
    endpoint: &Endpoint,
    resolver: &Resolver,
    at: &Attempt,
) -> Result<TcpStream, Failure> {
    let ips = match &endpoint.host {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => resolver.lookup(name, at).await?,
    };
    let addrs: Vec<_> = ips.iter().map(|&ip| (ip, endpoint.port).into()).collect();
    connect_any(&addrs, endpoint).await
}

async fn connect_any(addrs: &[SocketAddr], endpoint: &Endpoint) -> Result<TcpStream, Failure> {
    let mut waiting = addrs.iter().copied();
    let mut connecting = JoinSet::new();
    let mut last = None;
    loop {
        if let Some(addr) = waiting.next() {
            connecting.spawn(async move {
                let stream = TcpStream::connect(addr).await;
                // Nagle's algorithm off: a probe's request is one small write that must not
                // wait for an acknowledgement.
                let _ = stream.as_ref().map(|stream| stream.set_nodelay(true));
                (addr, stream)
            });
        }
        // Cancellation: both arms are cancel-safe; dropping `connecting` aborts every connect.
        tokio::select! {
            () = sleep(NEXT_ADDRESS_AFTER), if waiting.len() > 0 => {}
            Some(joined) = connecting.join_next() => match joined {
                Ok((_, Ok(stream))) => return Ok(stream),
                Ok((addr, Err(err))) => last = Some((addr, err)),
                Err(_) => {}
            },
            else => break,
        }
    }
    // `connection refused to 127.0.0.1:5432`, naming how many other addresses were tried.
    Err(match last {
        Some((addr, err)) => Failure::Connect {
            addr: Some(addr),
            cause: describe_io(&err),
            tried: addrs.len(),
        },
        None => Failure::Text(format!("no address to connect to for {}", endpoint.host)),
    })
}

/// Connects to a Unix stream socket.
pub async fn connect_unix(path: &Path) -> Result<UnixStream, Failure> {
    UnixStream::connect(path).await.map_err(|err| {
        let path = path.display();
        Failure::Text(match err.kind() {
            io::ErrorKind::NotFound => format!("no socket at {path} (no such file)"),
            _ => format!("{} to socket {path}", describe_io(&err)),
        })
    })
}

/// Opens the stream for an HTTP or gRPC request: through `unix_socket` if given, else TCP.
pub async fn open(
    endpoint: &Endpoint,
    unix_socket: Option<&Path>,
    resolver: &Resolver,
    at: &Attempt,
) -> Result<BoxedIo, Failure> {
    match unix_socket {
        Some(path) => Ok(Box::new(connect_unix(path).await?)),
        None => Ok(Box::new(connect_tcp(endpoint, resolver, at).await?)),
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, TcpListener};
    use std::time::Instant;

    use super::*;

    fn listener() -> (TcpListener, SocketAddr) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr)
    }

    fn named(name: &str, port: u16) -> Endpoint {
        let host = Host::Name(name.into());
        Endpoint { host, port }
    }

    #[tokio::test]
    async fn several_addresses_answered_at_once_are_tried_in_order_without_waiting() {
        let ((_listener, open), closed) = (listener(), listener().1);
        let started = Instant::now();
        let name = named("test", open.port());
        let stream = connect_any(&[closed, open], &name).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap(), open);
        assert!(
            started.elapsed() < NEXT_ADDRESS_AFTER,
            "the refusal was waited on"
        );
        let err = connect_any(&[closed, closed], &name).await.unwrap_err();
        let refused = format!("connection refused to {closed} (and 1 other address)");
        assert_eq!(err.to_string(), refused);
    }

    #[tokio::test]
    async fn a_first_address_that_does_not_answer_still_races_the_next() {
        // A listener whose accept queue is full drops a further SYN, so a connect to it stays
        // pending as one to an unanswering host.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
        let full = socket.listen(0).unwrap();
        let unanswered = full.local_addr().unwrap();
        let connect = |_| std::net::TcpStream::connect_timeout(&unanswered, NEXT_ADDRESS_AFTER);
        let fillers: Vec<_> = (0..8).map_while(|n| connect(n).ok()).collect();
        assert!(fillers.len() < 8, "the accept queue never filled");
        let (_listener, open) = listener();
        let started = Instant::now();
        let (addrs, name) = ([unanswered, open], named("test", open.port()));
        let stream = tokio::time::timeout(Duration::from_secs(5), connect_any(&addrs, &name)).await;
        let stream = stream.expect("the second address joined the race").unwrap();
        assert_eq!(stream.peer_addr().unwrap(), open);
        let turn = NEXT_ADDRESS_AFTER - Duration::from_millis(20);
        assert!(
            started.elapsed() >= turn,
            "the second address started before its turn"
        );
    }
}
