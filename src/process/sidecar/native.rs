//! `sidecar native`: the copy injected as a built-in sidecar. Its first run only leaves a
//! trace and exits; only a kubelet that supports built-in sidecars restarts it, and that
//! restart is the proof it writes down before running the real sidecar.

use super::state::{self, State};
use super::Native;
use crate::exit::Exit;
use crate::process::signal::Terminations;

/// Runs the native side: first run → `first-run` and exit 0; restart → `native`, then COMMAND.
pub async fn run(args: Native, signals: Terminations) -> Exit {
    let path = &args.state;
    let current = match state::read(path) {
        Ok(current) => current,
        Err(fault) => return fault.exit(),
    };
    let Some(previous) = current else {
        if let Err(fault) = state::write(path, State::FirstRun) {
            return fault.exit();
        }
        tracing::info!(
            "first run: wrote first-run to {}; exiting so that a kubelet with built-in sidecars \
             restarts this container",
            path.display()
        );
        return Exit::Ready;
    };
    if let Err(fault) = state::write(path, State::Native) {
        return fault.exit();
    }
    tracing::info!(
        "restarted (state was {previous}): built-in sidecars work; wrote native to {}",
        path.display()
    );
    if args.command.is_empty() {
        super::sleep_until_terminated(signals).await
    } else {
        crate::process::exec::exec(&args.command)
    }
}
