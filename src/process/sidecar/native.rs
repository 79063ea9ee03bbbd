//! `sidecar native`: the copy injected as a built-in sidecar. Its first run only leaves a
//! trace and exits; only a kubelet that supports built-in sidecars restarts it, and that
//! restart is the proof it writes down before running the real sidecar.

use std::path::Path;

use super::state::{self, Step};
use super::Native;
use crate::exit::Exit;
use crate::process::signal::{stopped, Terminations};
use crate::runtime::lane::{run_alone, Stop, UNBOUNDED_WITHIN};

/// First run: write `first-run` and exit 0; restart: write `native`, then run COMMAND.
pub async fn run(args: Native, mut signals: Terminations) -> Result<Exit, Exit> {
    let path = &args.state;
    state::check_path(path)?;
    let owned = path.clone();
    let job = move || state::read(&owned);
    let previous = at_state_file(path, run_alone(UNBOUNDED_WITHIN, signals.next(), job).await)?;
    let Some(previous) = previous else {
        let owned = path.clone();
        let job = move || state::write(&owned, Step::FirstRun);
        at_state_file(path, run_alone(UNBOUNDED_WITHIN, signals.next(), job).await)?;
        tracing::info!(
            event = "sidecar",
            "first run: wrote first-run to {}; exiting so that a kubelet with built-in sidecars \
             restarts this container",
            path.display()
        );
        return Ok(Exit::Ready);
    };
    let owned = path.clone();
    let job = move || state::write(&owned, Step::Native);
    at_state_file(path, run_alone(UNBOUNDED_WITHIN, signals.next(), job).await)?;
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

/// What became of reading or writing the state file on a lane of its own (FILE may be on a
/// mount that does not answer): its result, or the failure or signal that ended the wait.
fn at_state_file<T>(path: &Path, done: Result<Result<T, Exit>, Stop>) -> Result<T, Exit> {
    match done {
        Ok(done) => done,
        Err(Stop::Failed(failure)) => Err(Exit::Failed(format!(
            "state file {}: {failure}",
            path.display()
        ))),
        Err(Stop::Signal(signal)) => Err(stopped(signal, "at the state file")),
    }
}
