//! Opening the byte stream an attempt talks over: TCP to the resolved addresses (staggered, as
//! in Happy Eyeballs), or a Unix socket.

mod connect;

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};
use tokio::task::JoinSet;
use tokio::time::{sleep, Instant};

use crate::engine::Reason;
use crate::resolve::resolve;
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
pub async fn connect_tcp(endpoint: &Endpoint) -> Result<TcpStream, Reason> {
    let addrs = match endpoint.host {
        // An IP literal is one address: no list to allocate on every attempt.
        Host::Ip(ip) => return connect_one(SocketAddr::new(ip, endpoint.port)).await,
        Host::Name(_) => resolve(endpoint).await?,
    };
    if let [addr] = addrs[..] {
        return connect_one(addr).await;
    }
    connect_any(&addrs, endpoint).await
}

/// Connects to the first of several addresses that accepts. Each is first tried in place, in
/// order: a loopback peer answers within `connect()` itself, so `localhost` (::1 and
/// 127.0.0.1) costs a refused attempt no task, timer or runtime wake-up. The first connect
/// still on its way (a peer on another machine) starts the staggered race over it and the
/// addresses after it.
async fn connect_any(addrs: &[SocketAddr], endpoint: &Endpoint) -> Result<TcpStream, Reason> {
    let mut last = None;
    for (index, &addr) in addrs.iter().enumerate() {
        match connect::try_now(addr) {
            Ok(connect::Begun::Connected(stream)) => return Ok(stream),
            Ok(connect::Begun::Pending(pending)) => {
                return race(addr, pending, &addrs[index + 1..], last, addrs.len()).await;
            }
            Err(err) => last = Some((addr, err)),
        }
    }
    match last {
        Some((addr, err)) => Err(connect_error(&addr, &err, addrs.len())),
        None => Err(format!("no address to connect to for {}", endpoint.host)),
    }
}

/// Happy Eyeballs from a connect already on its way to `first`: each address in `rest` joins
/// the race [`NEXT_ADDRESS_AFTER`] after the one before, or at once when one fails; the first
/// to connect wins. `last` is the failure before the race, `total` the count for the error.
async fn race(
    first: SocketAddr,
    pending: connect::Pending,
    rest: &[SocketAddr],
    mut last: Option<(SocketAddr, io::Error)>,
    total: usize,
) -> Result<TcpStream, Reason> {
    let mut waiting = rest.iter().copied();
    let mut connecting = JoinSet::new();
    connecting.spawn(async move { (first, pending.finish().await) });
    let next_after = sleep(NEXT_ADDRESS_AFTER);
    tokio::pin!(next_after);
    loop {
        // Cancellation: both arms are cancel-safe; dropping `connecting` aborts every connect.
        tokio::select! {
            () = &mut next_after, if waiting.len() > 0 => {
                let addr = waiting.next().expect("an address is waiting");
                connecting.spawn(async move { (addr, connect::connect(addr).await) });
                next_after.as_mut().reset(Instant::now() + NEXT_ADDRESS_AFTER);
            }
            Some(joined) = connecting.join_next() => match joined {
                Ok((_, Ok(stream))) => return Ok(stream),
                Ok((addr, Err(err))) => {
                    last = Some((addr, err));
                    // A refusal is news at once: the next address need not wait its turn.
                    next_after.as_mut().reset(Instant::now());
                }
                Err(_) => {}
            },
            else => break,
        }
    }
    match last {
        Some((addr, err)) => Err(connect_error(&addr, &err, total)),
        None => Err(format!("no answer from {first}")),
    }
}

/// Connects to a single address in place: with nothing to stagger, that spares a task and a
/// timer, and the runtime two wake-ups, on every attempt (most targets are one IP; `bench/`).
async fn connect_one(addr: SocketAddr) -> Result<TcpStream, Reason> {
    connect::connect(addr)
        .await
        .map_err(|err| connect_error(&addr, &err, 1))
}

thread_local! {
    /// The last connect error's text, with the address, OS error and address count it says:
    /// a target that stays down is refused the same way many times a second, and formatting
    /// the address afresh was a quarter of the instructions such an attempt ran.
    static LAST_CONNECT_ERROR: RefCell<Option<(SocketAddr, i32, usize, Reason)>> =
        const { RefCell::new(None) };
}

/// `connection refused to 127.0.0.1:5432`, naming how many other addresses were tried.
fn connect_error(addr: &SocketAddr, err: &io::Error, tried: usize) -> Reason {
    let Some(code) = err.raw_os_error() else {
        return format_connect_error(addr, err, tried);
    };
    LAST_CONNECT_ERROR.with_borrow_mut(|last| match last {
        Some((a, c, t, text)) if a == addr && *c == code && *t == tried => text.clone(),
        _ => {
            let text = format_connect_error(addr, err, tried);
            *last = Some((*addr, code, tried, text.clone()));
            text
        }
    })
}

fn format_connect_error(addr: &SocketAddr, err: &io::Error, tried: usize) -> Reason {
    let also = if tried > 1 {
        format!(
            " (and {} other address{})",
            tried - 1,
            if tried > 2 { "es" } else { "" }
        )
    } else {
        String::new()
    };
    format!("{} to {addr}{also}", describe_io(err))
}

/// Connects to a Unix stream socket.
pub async fn connect_unix(path: &Path) -> Result<UnixStream, Reason> {
    UnixStream::connect(path)
        .await
        .map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => format!("no socket at {} (no such file)", path.display()),
            _ => format!("{} to socket {}", describe_io(&err), path.display()),
        })
}

/// Opens the stream for an HTTP or gRPC request: through `unix_socket` if given, else TCP.
pub async fn open(endpoint: &Endpoint, unix_socket: Option<&Path>) -> Result<BoxedIo, Reason> {
    match unix_socket {
        Some(path) => Ok(Box::new(connect_unix(path).await?)),
        None => Ok(Box::new(connect_tcp(endpoint).await?)),
    }
}

/// An I/O error in a few lower-case words, without the `(os error N)` noise.
pub fn describe_io(err: &io::Error) -> String {
    use io::ErrorKind::*;
    let words = match err.kind() {
        ConnectionRefused => "connection refused",
        ConnectionReset => "connection reset",
        ConnectionAborted => "connection aborted",
        NotFound => "no such file",
        PermissionDenied => "permission denied",
        TimedOut => "timed out",
        AddrNotAvailable => "address not available",
        UnexpectedEof => "connection closed",
        BrokenPipe => "connection closed",
        _ => {
            let text = err.to_string();
            return match text.find(" (os error") {
                Some(cut) => text[..cut].to_ascii_lowercase(),
                None => text,
            };
        }
    };
    words.to_string()
}

/// An error with its chain of causes in a few words: I/O causes as [`describe_io`] puts them,
/// repeated wording left out.
pub fn describe_error(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = match cause.downcast_ref::<io::Error>() {
            Some(io) => describe_io(io),
            None => cause.to_string(),
        };
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
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
        assert_eq!(err, format!("connection refused to 127.0.0.1:{port}"));
    }

    #[test]
    fn a_repeated_connect_error_is_told_as_it_is() {
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        let unreachable = io::Error::from_raw_os_error(libc::ENETUNREACH);
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "[::1]:1".parse().unwrap();
        let cases = [
            (a, &refused, 1, "connection refused to 127.0.0.1:1"),
            (
                b,
                &refused,
                2,
                "connection refused to [::1]:1 (and 1 other address)",
            ),
            (
                b,
                &unreachable,
                2,
                "network is unreachable to [::1]:1 (and 1 other address)",
            ),
            (
                b,
                &refused,
                3,
                "connection refused to [::1]:1 (and 2 other addresses)",
            ),
        ];
        // Each twice in a row (the second from the cache), and the whole list twice (each
        // after a different one).
        for _ in 0..2 {
            for (addr, err, count, text) in &cases {
                assert_eq!(connect_error(addr, err, *count), *text);
                assert_eq!(connect_error(addr, err, *count), *text);
            }
        }
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
            err,
            format!("connection refused to {closed} (and 1 other address)")
        );
    }

    #[tokio::test]
    async fn a_first_address_that_does_not_answer_still_races_the_next() {
        let (full, _fillers) = super::connect::tests::full_listener();
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
            err.starts_with("connection refused to ") && err.contains(" other address"),
            "{err}"
        );
    }
}
