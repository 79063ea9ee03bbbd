//! `sidecar native`: the copy injected as a built-in sidecar. Its first run only leaves a
//! trace and exits; only a kubelet that supports built-in sidecars restarts it, and that
//! restart is the proof it writes down before running the real sidecar.

use std::path::Path;

use super::state::{self, Step};
use super::Native;
use crate::exit::Exit;
use crate::process::signal::{stopped, Terminations};
use crate::runtime::lane::{self, Stop, UNBOUNDED_WITHIN};

/// First run: write `first-run` and exit 0; restart: write `native`, then run COMMAND.
pub async fn run(args: Native, mut signals: Terminations) -> Result<Exit, Exit> {
    let path = &args.state;
    state::check_path(path)?;
    let owned = path.clone();
    let previous = off_thread(path, &mut signals, move || state::read(&owned)).await?;
    let Some(previous) = previous else {
        let owned = path.clone();
        let job = move || state::write(&owned, Step::FirstRun);
        off_thread(path, &mut signals, job).await?;
        tracing::info!(
            event = "sidecar",
            "first run: wrote first-run to {}; exiting so that a kubelet with built-in sidecars \
             restarts this container",
            path.display()
        );
        return Ok(Exit::Ready);
    };
    let owned = path.clone();
    off_thread(path, &mut signals, move || {
        state::write(&owned, Step::Native)
    })
    .await?;
    tracing::info!(
        event = "sidecar",
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

/// Reads or writes the state file off the runtime's thread: FILE may be on a mount that does
/// not answer. A terminating signal meanwhile ends the run at once.
async fn off_thread<T: Send + 'static>(
    path: &Path,
    signals: &mut Terminations,
    job: impl FnOnce() -> Result<T, Exit> + Send + 'static,
) -> Result<T, Exit> {
    match lane::run_alone(UNBOUNDED_WITHIN, signals.next(), job).await {
        Ok(done) => done,
        Err(Stop::Failed(failure)) => Err(Exit::Failed(format!(
            "state file {}: {failure}",
            path.display()
        ))),
        Err(Stop::Signal(signal)) => Err(stopped(signal, "at the state file")),
    }
}
