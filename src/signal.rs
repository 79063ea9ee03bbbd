//! SIGTERM and SIGINT while waiting: readygate is often PID 1, where a signal without a handler
//! is ignored, so it handles them itself and exits 128+N.

use tokio::signal::unix::{signal, Signal, SignalKind};

/// Listens for SIGTERM and SIGINT from the moment it is created.
pub struct Terminations {
    term: Option<Signal>,
    int: Option<Signal>,
}

impl Terminations {
    /// Installs the handlers; call before any waiting so no signal is missed.
    pub fn listen() -> Terminations {
        Terminations {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// Resolves with the signal number (15 or 2) when one arrives.
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = recv(&mut self.term) => libc::SIGTERM,
            _ = recv(&mut self.int) => libc::SIGINT,
        }
    }
}

/// The next delivery of `signal`; never, if its handler could not be installed.
pub async fn recv(signal: &mut Option<Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}
