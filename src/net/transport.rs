//! Opening the byte stream an attempt talks over: TCP to the resolved addresses (staggered, as
//! in Happy Eyeballs), or a Unix socket.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};
use tokio::task::JoinSet;
use tokio::time::{sleep, Instant};

use crate::error::describe_io;
use crate::error::Failure;
use crate::net::resolve::resolve;
use crate::target::{Endpoint, Host};

/// Any stream an HTTP or gRPC client can run over.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// A boxed [`Io`]: TCP, Unix or TLS, chosen at run time.
pub type BoxedIo = Box<dyn Io>;

/// How long one address may take to connect before the next one is tried alongside it
/// (RFC 8305's "connection attempt delay"), so an address that drops packets cannot starve
/// the others of the attempt's time.
const NEXT_ADDRESS_AFTER: Duration = Duration::from_millis(250);

/// Connects to the first address of `endpoint` that accepts, trying every address it resolves
/// to; the error names the last failure.
pub async fn connect_tcp(endpoint: &Endpoint) -> Result<TcpStream, Failure> {
    let addrs = match endpoint.host {
        Host::Ip(ip) => vec![SocketAddr::new(ip, endpoint.port)],
        Host::Name(_) => resolve(endpoint).await?,
    };
    connect_any(&addrs, endpoint).await
}

/// Happy Eyeballs (RFC 8305): each address joins the race [`NEXT_ADDRESS_AFTER`] after the one
/// before, or at once when one fails; the first to connect wins.
async fn connect_any(addrs: &[SocketAddr], endpoint: &Endpoint) -> Result<TcpStream, Failure> {
    // One address (an IP literal, most targets): nothing to race.
    if let [addr] = addrs {
        return connect(*addr)
            .await
            .map_err(|err| connect_error(addr, &err, 1));
    }
    let mut waiting = addrs.iter().copied();
    let mut connecting = JoinSet::new();
    let mut last = None;
    // The first address starts at once, the next when its turn comes or the one before fails.
    let mut start_next = |connecting: &mut JoinSet<_>| {
        if let Some(addr) = waiting.next() {
            connecting.spawn(async move { (addr, connect(addr).await) });
        }
        waiting.len() > 0
    };
    let mut more = start_next(&mut connecting);
    let next_after = sleep(NEXT_ADDRESS_AFTER);
    tokio::pin!(next_after);
    loop {
        // Cancellation: both arms are cancel-safe; dropping `connecting` aborts every connect.
        tokio::select! {
            () = &mut next_after, if more => {
                more = start_next(&mut connecting);
                next_after.as_mut().reset(Instant::now() + NEXT_ADDRESS_AFTER);
            }
            Some(joined) = connecting.join_next() => match joined {
                Ok((_, Ok(stream))) => return Ok(stream),
                Ok((addr, Err(err))) => {
                    last = Some((addr, err));
                    // A refusal is news at once: the next address need not wait its turn.
                    more = start_next(&mut connecting);
                    next_after.as_mut().reset(Instant::now() + NEXT_ADDRESS_AFTER);
                }
                Err(_) => {}
            },
            else => break,
        }
    }
    match last {
        Some((addr, err)) => Err(connect_error(&addr, &err, addrs.len())),
        None => Err(Failure::Io(format!(
            "no address to connect to for {}",
            endpoint.host
        ))),
    }
}

/// One TCP connect on a fresh socket, with Nagle's algorithm off: a probe's request is one
/// small write that must not wait for an acknowledgement.
async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// `connection refused to 127.0.0.1:5432`, naming how many other addresses were tried.
fn connect_error(addr: &SocketAddr, err: &io::Error, tried: usize) -> Failure {
    Failure::Connect {
        addr: Some(*addr),
        cause: describe_io(err),
        tried,
    }
}

/// Connects to a Unix stream socket.
pub async fn connect_unix(path: &Path) -> Result<UnixStream, Failure> {
    UnixStream::connect(path)
        .await
        .map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => {
                Failure::Io(format!("no socket at {} (no such file)", path.display()))
            }
            _ => Failure::Io(format!(
                "{} to socket {}",
                describe_io(&err),
                path.display()
            )),
        })
}

/// Opens the stream for an HTTP or gRPC request: through `unix_socket` if given, else TCP.
pub async fn open(endpoint: &Endpoint, unix_socket: Option<&Path>) -> Result<BoxedIo, Failure> {
    match unix_socket {
        Some(path) => Ok(Box::new(connect_unix(path).await?)),
        None => Ok(Box::new(connect_tcp(endpoint).await?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::net::{Ipv4Addr, TcpListener};

    fn endpoint(host: Host, port: u16) -> Endpoint {
        Endpoint { host, port }
    }

    #[tokio::test]
    async fn a_refusal_names_the_address() {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let err = connect_tcp(&endpoint(Host::Ip(Ipv4Addr::LOCALHOST.into()), port))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("connection refused to 127.0.0.1:{port}")
        );
    }

    /// A listener whose accept queue is full: a further SYN to it is dropped, so a connect to
    /// it stays pending as one to an unanswering host. The streams fill the queue.
    fn full_listener() -> (TcpListener, Vec<std::net::TcpStream>) {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
        let listener = socket.listen(0).unwrap().into_std().unwrap();
        listener.set_nonblocking(false).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut fillers = Vec::new();
        for _ in 0..8 {
            match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                Ok(stream) => fillers.push(stream),
                Err(_) => return (listener, fillers),
            }
        }
        panic!("the accept queue never filled");
    }

    #[tokio::test]
    async fn several_addresses_answered_at_once_are_tried_in_order_without_waiting() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let open = listener.local_addr().unwrap();
        let closed = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap();
        let name = endpoint(Host::Name("test".into()), open.port());
        let started = std::time::Instant::now();
        let stream = connect_any(&[closed, open], &name).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap(), open);
        assert!(
            started.elapsed() < NEXT_ADDRESS_AFTER,
            "the refusal was waited on"
        );
        let err = connect_any(&[closed, closed], &name).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("connection refused to {closed} (and 1 other address)")
        );
    }

    #[tokio::test]
    async fn a_first_address_that_does_not_answer_still_races_the_next() {
        let (full, _fillers) = full_listener();
        let unanswered = full.local_addr().unwrap();
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let open = listener.local_addr().unwrap();
        let name = endpoint(Host::Name("test".into()), open.port());
        let started = std::time::Instant::now();
        let stream = tokio::time::timeout(
            Duration::from_secs(5),
            connect_any(&[unanswered, open], &name),
        )
        .await
        .expect("the second address joined the race")
        .unwrap();
        assert_eq!(stream.peer_addr().unwrap(), open);
        assert!(
            started.elapsed() >= NEXT_ADDRESS_AFTER - Duration::from_millis(20),
            "the second address started before the first had its turn"
        );
    }

    #[tokio::test]
    async fn localhost_finds_the_loopback_that_listens() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stream = connect_tcp(&endpoint(Host::Name("localhost".into()), port))
            .await
            .unwrap();
        assert_eq!(stream.peer_addr().unwrap(), listener.local_addr().unwrap());
        drop(listener);
        let err = connect_tcp(&endpoint(Host::Name("localhost".into()), port))
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with("connection refused to ")
                && err.to_string().contains(" other address"),
            "{err}"
        );
    }
}
