//! Work a timeout cannot interrupt (a file-system call hung on a dead mount, a `--matches` regex
//! busy for seconds over hostile content) runs on a detached thread, so the runtime's one thread
//! keeps its timers and the attempt stops waiting on time. Each target has its own [`Lane`], so
//! one target's slow work never delays another's; within a lane one job runs at a time, and an
//! attempt waits (within its timeout) for its predecessor's job instead of piling up threads.
//!
//! File-system work on a path the user named outside a check (`--touch`, `--termination-log`,
//! `install`, the sidecar's state file) runs on a lane of its own ([`run_alone`]) for a bounded
//! time, and a terminating signal ends the wait for it, so a mount that never answers cannot
//! hold the runtime's thread, which keeps the deadline and hears signals.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{oneshot, Semaphore};

use crate::error::{describe_io, Failure};
use crate::grammar::duration::humanize;

/// What work on a lane that has not ended is waiting for.
pub const FS_SILENT: &str = "no answer from the file system";

/// How long work on a lane of its own may take where no deadline bounds it (`install`,
/// `sidecar native`): a local copy or a small write that has not ended by then is on a file
/// system that is stuck.
pub const UNBOUNDED_WITHIN: Duration = Duration::from_secs(30);

/// One target's lane for blocking work.
#[derive(Debug, Clone)]
pub struct Lane(Arc<Semaphore>);

impl Default for Lane {
    fn default() -> Self {
        Lane(Arc::new(Semaphore::new(1)))
    }
}

impl Lane {
    /// Runs `job` on a detached thread once the lane is free and waits for its result;
    /// dropping the returned future (a timeout) leaves the job to finish and free the lane.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Failure> {
        let closed = |_| Failure::Text("internal error: the work lane is closed".into());
        let permit = self.0.clone().acquire_owned().await.map_err(closed)?;
        let (sender, receiver) = oneshot::channel();
        let thread = std::thread::Builder::new().name("readygate-check".into());
        // The thread holds the lane's permit until the job ends.
        let spawned = thread.spawn(move || (sender.send(job()), drop(permit)));
        spawned
            .map_err(|e| Failure::Text(format!("cannot start a thread: {}", describe_io(&e))))?;
        let lost = |_| Failure::Text("internal error: the check stopped without a result".into());
        receiver.await.map_err(lost)
    }

    /// As [`Lane::run`], giving up after `within`: `no answer from the file system within 1.0s`.
    pub async fn run_within<T: Send + 'static>(
        &self,
        within: Duration,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Failure> {
        match tokio::time::timeout(within, self.run(job)).await {
            Ok(done) => done,
            Err(_) => Err(Failure::Text(format!(
                "{FS_SILENT} within {}",
                humanize(within)
            ))),
        }
    }

    /// Starts `job` on the lane at once, ahead of any later [`Lane::run`], and returns where
    /// its result will come: for a look at the target before its first attempt. The result
    /// never comes if no thread could start.
    pub fn start<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> oneshot::Receiver<T> {
        let (sender, receiver) = oneshot::channel();
        let job = move || drop(sender.send(job()));
        let Ok(permit) = self.0.clone().try_acquire_owned() else {
            // Busy: the job waits its turn on a task of its own.
            let lane = self.clone();
            tokio::spawn(async move { lane.run(job).await });
            return receiver;
        };
        let thread = std::thread::Builder::new().name("readygate-check".into());
        let _ = thread.spawn(move || (job(), drop(permit)));
        receiver
    }
}

/// Why work on a lane of its own has no result.
#[derive(Debug)]
pub enum Stop {
    /// It did not end in time (`no answer from the file system within 1.0s`), or could not
    /// start.
    Failed(Failure),
    /// A terminating signal came first.
    Signal(i32),
}

/// Runs `job` on a lane of its own for at most `within`, unless `signal` (the next terminating
/// signal's number) comes first.
pub async fn run_alone<T: Send + 'static>(
    within: Duration,
    signal: impl Future<Output = i32>,
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stop> {
    let lane = Lane::default();
    // Cancellation: dropping the lane's future leaves the work to end on its own thread.
    tokio::select! {
        done = lane.run_within(within, job) => done.map_err(Stop::Failed),
        signal = signal => Err(Stop::Signal(signal)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_timeout_cuts_a_job_off_and_the_lane_frees_when_it_ends() {
        let lane = Lane::default();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let slow =
            tokio::time::timeout(Duration::from_millis(50), lane.run(move || held.recv())).await;
        assert!(slow.is_err(), "the timeout must fire while the job runs");
        // The next job waits for the lane while the cut-off job still runs, then runs.
        let mut next = tokio::spawn({
            let lane = lane.clone();
            async move { lane.run(|| 7).await }
        });
        let early = tokio::time::timeout(Duration::from_millis(100), &mut next).await;
        assert!(early.is_err(), "the next job ran beside the cut-off one");
        release.send(()).unwrap();
        assert_eq!(next.await.unwrap(), Ok(7));
    }

    #[tokio::test]
    async fn a_started_job_runs_before_the_next_job_of_its_lane() {
        let lane = Lane::default();
        let (done, seen) = std::sync::mpsc::channel();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let result = lane.start(move || {
            let _ = held.recv();
            done.send(()).unwrap();
            5
        });
        // Released only once the next job is queued behind it.
        let (after, ()) = tokio::join!(lane.run(move || seen.try_recv().is_ok()), async {
            tokio::task::yield_now().await;
            release.send(()).unwrap();
        });
        assert_eq!(
            after,
            Ok(true),
            "the next job ran before the started one ended"
        );
        assert_eq!(result.await, Ok(5));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let silent = lane.run_within(Duration::from_millis(50), move || {
            let _ = held.recv();
        });
        let silent = silent.await.unwrap_err().to_string();
        assert_eq!(silent, "no answer from the file system within 50ms");
        drop(release);
    }

    #[tokio::test]
    async fn a_stuck_lane_does_not_delay_another() {
        let (stuck, other) = (Lane::default(), Lane::default());
        let (release, held) = std::sync::mpsc::channel::<()>();
        let blocker = stuck.clone();
        tokio::spawn(async move { blocker.run(move || held.recv()).await });
        tokio::task::yield_now().await;
        let started = std::time::Instant::now();
        assert_eq!(other.run(|| 7).await, Ok(7));
        assert!(started.elapsed() < Duration::from_secs(2));
        let blocked = tokio::time::timeout(Duration::from_millis(100), stuck.run(|| 8)).await;
        assert!(blocked.is_err(), "the stuck lane ran a second job at once");
        release.send(()).unwrap();
        assert_eq!(stuck.run(|| 9).await, Ok(9));
    }
}
