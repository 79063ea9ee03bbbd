//! Work that a timeout cannot interrupt runs on a detached thread: file-system calls that may
//! hang (a dead network mount), and a `--matches` regular expression over a megabyte of hostile
//! content, which can take seconds. On the runtime's one thread such work would stall every
//! timer; here the attempt just stops waiting for it, on time.
//!
//! Each target has its own [`Lane`], so one target's slow work never delays another's. Within
//! a lane one job runs at a time: an attempt whose predecessor's job is still running waits for
//! it (within its own timeout) instead of piling up threads. A job still running when readygate
//! exits ends with the process.

use std::sync::Arc;

use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

use crate::error::Failure;

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
        let permit = self.0.clone().acquire_owned().await.map_err(|_| closed())?;
        let (sender, receiver) = oneshot::channel();
        detach(permit, move || {
            let _ = sender.send(job());
        })?;
        receiver
            .await
            .map_err(|_| Failure::Io("internal error: the check stopped without a result".into()))
    }

    /// Queues `job` in the lane without waiting for it: at once if the lane is free, so that
    /// it runs before any job queued after this call.
    pub fn start(&self, job: impl FnOnce() + Send + 'static) {
        match self.0.clone().try_acquire_owned() {
            Ok(permit) => {
                let _ = detach(permit, job);
            }
            Err(_) => {
                let lane = self.0.clone();
                tokio::spawn(async move {
                    if let Ok(permit) = lane.acquire_owned().await {
                        let _ = detach(permit, job);
                    }
                });
            }
        }
    }
}

/// Runs `job` on a new thread that holds the lane's permit until the job ends.
fn detach(
    permit: OwnedSemaphorePermit,
    job: impl FnOnce() + Send + 'static,
) -> Result<(), Failure> {
    std::thread::Builder::new()
        .name("readygate-check".into())
        .spawn(move || {
            let _permit = permit;
            job();
        })
        .map(drop)
        .map_err(|e| {
            Failure::Io(format!(
                "cannot start a thread: {}",
                crate::error::describe_io(&e)
            ))
        })
}

fn closed() -> Failure {
    Failure::Io("internal error: the work lane is closed".to_string())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_timeout_cuts_a_job_off_and_the_lane_frees_when_it_ends() {
        let lane = Lane::default();
        let slow = tokio::time::timeout(
            Duration::from_millis(50),
            lane.run(|| std::thread::sleep(Duration::from_millis(300))),
        )
        .await;
        assert!(slow.is_err(), "the timeout must fire while the job runs");
        // The next job waits for the lane, then runs.
        let started = std::time::Instant::now();
        assert_eq!(lane.run(|| 7).await, Ok(7));
        assert!(started.elapsed() >= Duration::from_millis(150));
    }

    #[tokio::test]
    async fn a_stuck_lane_does_not_delay_another() {
        let (stuck, other) = (Lane::default(), Lane::default());
        let (release, held) = std::sync::mpsc::channel::<()>();
        stuck.start(move || {
            let _ = held.recv();
        });
        let started = std::time::Instant::now();
        assert_eq!(other.run(|| 7).await, Ok(7));
        assert!(started.elapsed() < Duration::from_secs(2));
        let blocked = tokio::time::timeout(Duration::from_millis(100), stuck.run(|| 8)).await;
        assert!(blocked.is_err(), "the stuck lane ran a second job at once");
        release.send(()).unwrap();
        assert_eq!(stuck.run(|| 9).await, Ok(9));
    }
}
