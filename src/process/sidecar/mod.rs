//! `readygate sidecar native|legacy`: the run-time handshake between the two copies of an
//! injected sidecar — one a built-in sidecar (an init container with `restartPolicy: Always`),
//! one a regular container — that agree through a state file in a shared `emptyDir` which of
//! them runs the real sidecar.

mod legacy;
mod native;
mod state;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::exit::Exit;
use crate::log::LogSettings;
use crate::process::signal::Terminations;

/// Which side of the handshake to run, as the plan read it.
pub enum Side {
    Native(Native),
    Legacy(Legacy),
}

/// `sidecar native`: the copy run as a built-in sidecar.
pub struct Native {
    /// The state file shared through an emptyDir.
    pub state: PathBuf,
    /// The real sidecar to exec; none: sleep until terminated.
    pub command: Vec<OsString>,
}

/// `sidecar legacy`: the copy run as a regular container.
pub struct Legacy {
    /// The state file shared through an emptyDir.
    pub state: PathBuf,
    /// How long to wait for the state file to say `native`.
    pub grace: Duration,
    pub on_native: OnNative,
    /// The real sidecar to exec when built-in sidecars do not work.
    pub command: Vec<OsString>,
}

/// What the legacy copy does when the native copy runs (`--on-native`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnNative {
    /// Sleep until terminated (pods with restartPolicy: Always).
    Sleep,
    /// Exit 0 at once.
    Exit,
}

/// Runs one side of the handshake, logging as `log` says; a state fault is the exit.
pub async fn run(side: Side, log: LogSettings) -> Exit {
    crate::log::init(log);
    // Listening before anything else, so a SIGTERM sent while starting is not lost.
    let signals = Terminations::listen();
    let ran = match side {
        Side::Native(native) => native::run(native, signals).await,
        Side::Legacy(legacy) => legacy::run(legacy, signals).await,
    };
    ran.unwrap_or_else(|fault| fault)
}

/// Stands by until SIGTERM or SIGINT, then exits 0: the container must stay up (so the kubelet
/// does not restart it) but has nothing to run.
async fn sleep_until_terminated(mut signals: Terminations) -> Exit {
    let signal = signals.next().await;
    tracing::info!(
        event = "signal",
        status = Exit::Ready.code(),
        "signal {signal}: exiting"
    );
    Exit::Ready
}
