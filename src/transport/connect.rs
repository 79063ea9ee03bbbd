//! One TCP connect that learns a loopback answer without the runtime.
//!
//! A non-blocking `connect()` to a loopback address returns `EINPROGRESS`, yet by then the
//! kernel has already carried the handshake out (or the refusal back): the peer's packets are
//! processed as the socket is released at the end of the call. Asking once more with a second
//! `connect()` tells which: `0` (established), the pending error (`ECONNREFUSED`), or
//! `EALREADY` (still on its way, as for any remote peer). Only that last case waits for tokio.
//! So an answered attempt never registers its socket with epoll, and, never waiting, never
//! arms the engine's attempt timeout (tokio arms a timer on its first poll), which spares
//! the runtime a self-wake; and a refused socket is kept to connect again at the next
//! attempt. An attempt on a closed port went from 11 system calls and 3 parks (socket,
//! connect, epoll_ctl ×2, getsockopt, close, eventfd writes ×2, epoll_wait ×3) to the two
//! `connect()` calls, plus the retry sleep's one `epoll_wait`.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use socket2::{Domain, SockAddr, SockRef, Socket, Type};

use tokio::io::Interest;
use tokio::net::TcpStream;

/// Connects to `addr`: at once when the kernel already has the answer, else by waiting for
/// the socket to become writable. The caller bounds the wait.
pub async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    match try_now(addr)? {
        Begun::Connected(stream) => Ok(stream),
        Begun::Pending(pending) => pending.finish().await,
    }
}

/// A connect as it stands when `connect()` returns: answered (established; a refusal is the
/// `Err` of [`try_now`]), or still on its way, as to any peer that is not on this machine.
pub enum Begun {
    /// Established.
    Connected(TcpStream),
    /// The handshake is on its way.
    Pending(Pending),
}

/// A connect still on its way; [`Pending::finish`] waits for its answer.
pub struct Pending {
    /// The connecting socket, registered with the runtime.
    stream: TcpStream,
    /// The peer, to ask the kernel again with.
    peer: Peer,
}

/// Starts connecting to `addr` and tells at once how it went, without waiting.
pub fn try_now(addr: SocketAddr) -> io::Result<Begun> {
    let peer = Peer::new(&addr);
    let (fd, state) = start(&addr, &peer)?;
    let stream = TcpStream::from_std(std::net::TcpStream::from(fd))?;
    Ok(match state {
        State::Connected => Begun::Connected(nodelay(stream)),
        State::Pending => Begun::Pending(Pending { stream, peer }),
    })
}

impl Pending {
    /// Waits for the answer; the caller bounds the wait.
    pub async fn finish(self) -> io::Result<TcpStream> {
        let Pending { stream, peer } = self;
        // Each wake-up asks the kernel again; a spurious one reads as `WouldBlock` and waits on.
        stream
            .async_io(Interest::WRITABLE, || match ask(stream.as_fd(), &peer)? {
                State::Connected => Ok(()),
                State::Pending => Err(io::ErrorKind::WouldBlock.into()),
            })
            .await?;
        Ok(nodelay(stream))
    }
}

/// A connected stream with Nagle's algorithm off: a probe's request is one small write that
/// must not wait for an acknowledgement.
fn nodelay(stream: TcpStream) -> TcpStream {
    let _ = stream.set_nodelay(true);
    stream
}

/// Where a connect stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Established.
    Connected,
    /// The handshake is on its way.
    Pending,
}

thread_local! {
    /// A socket whose connect to this address was just refused, for the next attempt: the
    /// kernel leaves a refused TCP socket unconnected and ready to connect again (from a new
    /// local port, with a new handshake), and not making and closing a socket every time
    /// spares a fifth of the kernel's work for each attempt on a port that stays closed. Up to
    /// [`KEPT`], the most recent last.
    static REFUSED: RefCell<Vec<(SocketAddr, OwnedFd)>> = const { RefCell::new(Vec::new()) };
}

/// Refused sockets kept at most: one per address of a name such as `localhost` (::1 and
/// 127.0.0.1), whose attempts alternate between them.
const KEPT: usize = 2;

/// Starts connecting to `peer` and asks at once how it went: an error is the connect's own
/// (`connection refused` for a loopback port nobody listens on).
fn start(addr: &SocketAddr, peer: &Peer) -> io::Result<(OwnedFd, State)> {
    let reused = REFUSED.with_borrow_mut(|kept| {
        let index = kept.iter().position(|(at, _)| at == addr)?;
        Some(kept.remove(index).1)
    });
    if let Some(fd) = reused {
        // A system that does not take a second connect on a refused socket gets a fresh one.
        if let Ok(begun) = begin(&fd, peer) {
            return finish(addr, peer, fd, begun);
        }
    }
    let fd = open(peer)?;
    let begun = begin(&fd, peer)?;
    finish(addr, peer, fd, begun)
}

/// A new non-blocking TCP socket for `peer`'s family (close-on-exec, as socket2 makes them).
fn open(peer: &Peer) -> io::Result<OwnedFd> {
    let socket = Socket::new(peer.domain(), Type::STREAM, None)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// The first `connect()`: `Connected` if it already is, else `Pending` (in progress).
fn begin(fd: &OwnedFd, peer: &Peer) -> io::Result<State> {
    match connect_raw(fd.as_fd(), peer) {
        Ok(()) => Ok(State::Connected),
        // An interrupted non-blocking connect goes on in the background, as one in progress.
        Err(err) if matches!(err.raw_os_error(), Some(libc::EINPROGRESS | libc::EINTR)) => {
            Ok(State::Pending)
        }
        Err(err) => Err(err),
    }
}

/// After the first `connect()`: asks once more if it is pending, and keeps a refused socket
/// for the next attempt.
fn finish(
    addr: &SocketAddr,
    peer: &Peer,
    fd: OwnedFd,
    begun: State,
) -> io::Result<(OwnedFd, State)> {
    if begun == State::Connected {
        return Ok((fd, begun));
    }
    match ask(fd.as_fd(), peer) {
        Ok(state) => Ok((fd, state)),
        Err(err) => {
            if err.raw_os_error() == Some(libc::ECONNREFUSED) {
                REFUSED.with_borrow_mut(|kept| {
                    if kept.len() == KEPT {
                        kept.remove(0);
                    }
                    kept.push((*addr, fd));
                });
            }
            Err(err)
        }
    }
}

/// Asks a connecting socket how its connect went, by connecting it to the same peer again:
/// established (`0`, or `EISCONN` where a system says so), still pending (`EALREADY`), or the
/// connect's error, which the kernel hands over (and clears) as it would through `SO_ERROR`.
fn ask(fd: BorrowedFd<'_>, peer: &Peer) -> io::Result<State> {
    match connect_raw(fd, peer) {
        Ok(()) => Ok(State::Connected),
        Err(err) => match err.raw_os_error() {
            Some(libc::EISCONN) => Ok(State::Connected),
            Some(libc::EALREADY | libc::EINPROGRESS | libc::EINTR) => Ok(State::Pending),
            _ => Err(err),
        },
    }
}

/// `connect(2)` on `fd`, its failure as the OS error.
fn connect_raw(fd: BorrowedFd<'_>, peer: &Peer) -> io::Result<()> {
    SockRef::from(&fd).connect(&peer.address)
}

/// A peer in the C form `connect(2)` takes, made once per attempt and reused by its calls.
struct Peer {
    /// The `sockaddr_in` or `sockaddr_in6`.
    address: SockAddr,
}

impl Peer {
    /// The C form of `addr`.
    fn new(addr: &SocketAddr) -> Peer {
        Peer {
            address: SockAddr::from(*addr),
        }
    }

    /// The address family, for `socket(2)`.
    fn domain(&self) -> Domain {
        self.address.domain()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    use std::os::fd::{AsRawFd, RawFd};

    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, Ipv6Addr, TcpListener};
    use std::time::Duration;

    use tokio::io::AsyncReadExt;

    /// A loopback port that nothing listens on (just freed).
    fn closed_port() -> SocketAddr {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        listener.local_addr().unwrap()
    }

    /// A listener whose accept queue is full, and the connections that fill it: a further SYN
    /// to it is dropped, so a connect to it stays pending as one to an unanswering host.
    pub(in crate::transport) fn full_listener() -> (TcpListener, Vec<OwnedFd>) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        // A second `listen` only changes the backlog.
        SockRef::from(&listener).listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = Peer::new(&addr);
        let mut fillers = Vec::new();
        for _ in 0..8 {
            let (fd, state) = start(&addr, &peer).unwrap();
            fillers.push(fd);
            if state == State::Pending {
                return (listener, fillers);
            }
        }
        panic!("the accept queue never filled");
    }

    #[test]
    fn a_refusal_is_known_when_connect_returns() {
        let addr = closed_port();
        let err = start(&addr, &Peer::new(&addr)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn an_accepted_connect_is_known_when_connect_returns() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let (_fd, state) = start(&addr, &Peer::new(&addr)).unwrap();
        assert_eq!(state, State::Connected);
    }

    #[tokio::test]
    async fn refused_on_both_loopbacks() {
        let err = connect(closed_port()).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        let Ok(v6) = TcpListener::bind((Ipv6Addr::LOCALHOST, 0)) else {
            return; // no IPv6 loopback here
        };
        let addr = v6.local_addr().unwrap();
        drop(v6);
        let err = connect(addr).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
    }

    fn kept() -> Option<(SocketAddr, RawFd)> {
        REFUSED.with_borrow(|kept| kept.last().map(|(at, fd)| (*at, fd.as_raw_fd())))
    }

    #[tokio::test]
    async fn a_refused_socket_connects_again_at_the_next_attempt() {
        let addr = closed_port();
        assert!(connect(addr).await.is_err());
        let first = kept().expect("the refused socket is kept");
        assert_eq!(first.0, addr);
        assert!(connect(addr).await.is_err());
        assert_eq!(kept(), Some(first), "the same socket was refused again");
        // Another address gets a socket of its own, and the first one's is still kept, as
        // attempts to `localhost` alternate between ::1 and 127.0.0.1.
        let other = closed_port();
        assert!(connect(other).await.is_err());
        assert_eq!(kept().map(|(at, _)| at), Some(other));
        assert!(connect(addr).await.is_err());
        assert_eq!(kept(), Some(first), "the first address's socket was kept");
        let Ok(listener) = TcpListener::bind(addr) else {
            return; // the port was taken meanwhile
        };
        let stream = connect(addr).await.unwrap();
        assert_eq!(stream.as_raw_fd(), first.1, "the kept socket connected");
        assert_eq!(
            kept().map(|(at, _)| at),
            Some(other),
            "a connected socket is not kept"
        );
        let (mut accepted, _) = listener.accept().unwrap();
        accepted.write_all(b"up").unwrap();
        let mut got = [0; 2];
        let mut stream = stream;
        stream.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"up");
    }

    #[tokio::test]
    async fn an_accepted_connect_gives_a_usable_stream() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut stream = connect(listener.local_addr().unwrap()).await.unwrap();
        let (mut accepted, _) = listener.accept().unwrap();
        accepted.write_all(b"hello").unwrap();
        let mut got = [0; 5];
        stream.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello");
        assert_eq!(stream.peer_addr().unwrap(), listener.local_addr().unwrap());
        tokio::io::AsyncWriteExt::write_all(&mut stream, b"back")
            .await
            .unwrap();
        let mut back = [0; 4];
        accepted.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"back");
    }

    #[tokio::test]
    async fn an_unanswered_connect_waits_within_its_bound_and_ends_when_answered() {
        let (listener, _fillers) = full_listener();
        let addr = listener.local_addr().unwrap();
        let pending = connect(addr);
        tokio::pin!(pending);
        let bounded = tokio::time::timeout(Duration::from_millis(100), &mut pending).await;
        assert!(bounded.is_err(), "a dropped SYN was answered: {bounded:?}");
        // Room in the queue: the retransmitted SYN (after about a second) is answered.
        let (_first, _) = listener.accept().unwrap();
        let stream = tokio::time::timeout(Duration::from_secs(10), pending)
            .await
            .expect("connected after the retransmission")
            .unwrap();
        assert_eq!(stream.peer_addr().unwrap(), addr);
    }
}
