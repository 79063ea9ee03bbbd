//! Opening the byte stream an attempt talks over: TCP to each resolved address in turn, or a
//! Unix socket, and TLS on top when asked.

use std::io;
use std::net::SocketAddr;
use std::path::Path;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};

use crate::engine::Reason;
use crate::resolve::resolve;
use crate::target::Endpoint;

/// Any stream an HTTP or gRPC client can run over.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// A boxed [`Io`]: TCP, Unix or TLS, chosen at run time.
pub type BoxedIo = Box<dyn Io>;

/// Connects to the first address of `endpoint` that accepts; the error names the last failure.
pub async fn connect_tcp(endpoint: &Endpoint) -> Result<TcpStream, Reason> {
    let addrs = resolve(endpoint).await?;
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(err) => last = Some((*addr, err)),
        }
    }
    let (addr, err) = last.expect("resolve returns at least one address");
    Err(connect_error(&addr, &err, addrs.len()))
}

fn connect_error(addr: &SocketAddr, err: &io::Error, tried: usize) -> Reason {
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
        .map_err(|err| format!("{} to {}", describe_io(&err), path.display()))
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
