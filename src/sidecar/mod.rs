//! `readygate sidecar native|legacy`: the run-time handshake between the two copies of an
//! injected sidecar — one a built-in sidecar (an init container with `restartPolicy: Always`),
//! one a regular container — that agree through a state file in a shared `emptyDir` which of
//! them runs the real sidecar.

mod legacy;
mod native;
mod state;

use crate::cli::{LogArgs, SidecarCommand};
use crate::exit::Exit;
use crate::plan::LogSettings;
use crate::signal::Terminations;

/// Runs one side of the handshake.
pub async fn run(command: SidecarCommand, log: &LogArgs) -> Exit {
    let level = match (log.quiet, log.verbose) {
        (true, _) => tracing::Level::ERROR,
        (_, true) => tracing::Level::DEBUG,
        _ => tracing::Level::INFO,
    };
    crate::log::init(LogSettings {
        level,
        format: log.log_format,
    });
    // Listening before anything else, so a SIGTERM sent while starting is not lost.
    let signals = Terminations::listen();
    let state = match &command {
        SidecarCommand::Native(args) => &args.state,
        SidecarCommand::Legacy(args) => &args.state,
    };
    if let Err(fault) = state::check_path(state) {
        return fault.exit();
    }
    match command {
        SidecarCommand::Native(args) => native::run(args, signals).await,
        SidecarCommand::Legacy(args) => legacy::run(args, signals).await,
    }
}

/// Stands by without doing anything until SIGTERM or SIGINT, then exits 0: the container
/// must stay up (so the kubelet does not restart it) but has nothing to run.
async fn sleep_until_terminated(mut signals: Terminations) -> Exit {
    let signal = signals.next().await;
    tracing::info!("signal {signal}: exiting");
    Exit::Ready
}
