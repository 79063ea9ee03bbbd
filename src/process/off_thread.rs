//! File-system work on a path the user named outside a check (`--touch`, `--termination-log`,
//! `install`, the sidecar's state file): it runs on a lane of its own for a bounded time, and a
//! terminating signal ends the wait for it, so a mount that never answers cannot hold the
//! runtime's thread, which keeps the deadline and hears signals.

use std::time::Duration;

use crate::error::Failure;
use crate::runtime::lane::Lane;
use crate::process::signal::Terminations;

/// How long such work may take where no deadline bounds it (`install`, `sidecar native`): a
/// local copy or a small write that has not ended by then is on a file system that is stuck.
pub const UNBOUNDED_WITHIN: Duration = Duration::from_secs(30);

/// Why the work has no result.
#[derive(Debug)]
pub enum Stop {
    /// It did not end in time (`no answer from the file system within 1.0s`), or could not
    /// start.
    Failed(Failure),
    /// A terminating signal came first.
    Signal(i32),
}

/// Runs `job` off the runtime's thread for at most `within`, unless a signal comes first.
pub async fn run<T: Send + 'static>(
    within: Duration,
    signals: &mut Terminations,
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stop> {
    let lane = Lane::default();
    // Cancellation: dropping the lane's future leaves the work to end on its own thread.
    tokio::select! {
        done = lane.run_within(within, job) => done.map_err(Stop::Failed),
        signal = signals.next() => Err(Stop::Signal(signal)),
    }
}
