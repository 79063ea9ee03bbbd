//! What `serve` and the webhook share as servers: taking connections until a terminating
//! signal ends serving, with status 0, in one line.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use crate::exit::Exit;
use crate::process::signal::Terminations;

/// How long accepting pauses after it failed (out of descriptors): it would fail again at once.
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);

/// Waits for a terminating signal and says that it stopped serving: status 0, as a server is
/// meant to end.
pub async fn stopped(signals: &mut Terminations) -> Exit {
    let signal = signals.next().await;
    let status = Exit::Ready.code();
    tracing::info!(event = "signal", status, "stopped by signal {signal}");
    Exit::Ready
}

/// The next connection on `listener`, or the exit a terminating signal ends serving with.
pub async fn accept(
    listener: &TcpListener,
    signals: &mut Terminations,
) -> Result<(TcpStream, SocketAddr), Exit> {
    // Cancellation: both arms are cancel-safe; a connection not yet taken stays queued.
    tokio::select! {
        exit = stopped(signals) => Err(exit),
        accepted = next_connection(listener) => Ok(accepted),
    }
}

/// The next connection on `listener`, pausing after a failed accept (out of descriptors).
pub async fn next_connection(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(_) => tokio::time::sleep(ACCEPT_PAUSE).await,
        }
    }
}
