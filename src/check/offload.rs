//! Work that a timeout cannot interrupt runs here, on a detached thread: file-system calls that
//! may hang (a stale network mount), and a `--matches` regular expression over a megabyte of
//! hostile content, which can take seconds. On the runtime's one thread such work would stall
//! every timer, so the attempt timeout and the deadline would fire late; here the attempt just
//! stops waiting for it, on time.
//!
//! One job runs at a time in the whole process: an attempt whose predecessor's job is still
//! running waits for it (within its own timeout) instead of piling up threads, CPU and memory.
//! A job still running when readygate exits ends with the process.

use tokio::sync::{oneshot, Semaphore};

use crate::engine::Reason;

/// The one lane jobs run in.
static LANE: Semaphore = Semaphore::const_new(1);

/// Runs `job` on a detached thread and waits for its result; dropping the returned future
/// (a timeout) leaves the job to finish on its own and free the lane.
pub async fn run<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Result<T, Reason> {
    let permit = LANE
        .acquire()
        .await
        .map_err(|_| "internal error: the work lane is closed".to_string())?;
    let (sender, receiver) = oneshot::channel();
    std::thread::Builder::new()
        .name("readygate-check".into())
        .spawn(move || {
            crate::signal::block_all();
            let _permit = permit;
            let _ = sender.send(job());
        })
        .map_err(|e| {
            format!(
                "cannot start a thread: {}",
                crate::transport::describe_io(&e)
            )
        })?;
    receiver
        .await
        .map_err(|_| "internal error: the check stopped without a result".to_string())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_timeout_cuts_a_job_off_and_the_lane_frees_when_it_ends() {
        let slow = tokio::time::timeout(
            Duration::from_millis(50),
            run(|| std::thread::sleep(Duration::from_millis(300))),
        )
        .await;
        assert!(slow.is_err(), "the timeout must fire while the job runs");
        // The next job waits for the lane, then runs.
        let started = std::time::Instant::now();
        assert_eq!(run(|| 7).await, Ok(7));
        assert!(started.elapsed() >= Duration::from_millis(150));
    }
}
