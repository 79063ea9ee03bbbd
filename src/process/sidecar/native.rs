//! `sidecar native`: the copy injected as a built-in sidecar. Its first run only leaves a
//! trace and exits; only a kubelet that supports built-in sidecars restarts it, and that
//! restart is the proof it writes down before running the real sidecar.

use super::state::{self, State};
use super::Native;
use crate::exit::Exit;
use crate::process::signal::Terminations;

/// First run: write `first-run` and exit 0; restart: write `native`, then run COMMAND.
pub async fn run(args: Native, signals: Terminations) -> Result<Exit, Exit> {
    let path = &args.state;
    state::check_path(path)?;
    let Some(previous) = state::read(path)? else {
        state::write(path, State::FirstRun)?;
        tracing::info!(
            "first run: wrote first-run to {}; exiting so that a kubelet with built-in sidecars \
             restarts this container",
            path.display()
        );
        return Ok(Exit::Ready);
    };
    state::write(path, State::Native)?;
    tracing::info!(
        "restarted (state was {}): built-in sidecars work; wrote native to {}",
        previous.as_str(),
        path.display()
    );
    if args.command.is_empty() {
        Ok(super::sleep_until_terminated(signals).await)
    } else {
        Ok(crate::process::exec::exec(&args.command))
    }
}
