//! `sidecar legacy`: the copy injected as a regular container. It stands down when the
//! native copy proves built-in sidecars work, and runs the real sidecar itself when no such
//! proof arrives within the grace period.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::{sleep, sleep_until, Instant};

use super::state::{self, Step};
use super::{Legacy, OnNative};
use crate::engine::Watch as _;
use crate::exit::Exit;
use crate::grammar::duration::humanize;
use crate::kind::file::{FileWatch, HubSlot, Wake};
use crate::process::signal::Terminations;
use crate::runtime::lane::Lane;

/// Re-read interval while file-system events are watched: they do the real work.
const POLL_WITH_EVENTS: Duration = Duration::from_secs(2);
/// Re-read interval when the kernel offers no folder events.
const POLL_WITHOUT_EVENTS: Duration = Duration::from_millis(100);
/// How long the read after the grace period may take before it counts as "not native".
const LAST_READ: Duration = Duration::from_secs(1);

/// Waits up to the grace period for `native`, then stands down or runs COMMAND.
pub async fn run(args: Legacy, mut signals: Terminations) -> Result<Exit, Exit> {
    let path = &args.state;
    state::check_path(path)?;
    // Watching before the first read, so a write between the read and the wait is not missed;
    // the state is content, and a hand-written one may be written in place. Each read's lane
    // job aims the watch first.
    let lane = Lane::default();
    let mut watch = FileWatch::new(path, Wake::OnContent, &HubSlot::default());
    let aim = watch.as_ref().map(|watch| Arc::clone(&watch.aim));
    let poll = match watch {
        Some(_) => POLL_WITH_EVENTS,
        None => POLL_WITHOUT_EVENTS,
    };
    let (grace, deadline) = (humanize(args.grace), Instant::now() + args.grace);
    tracing::info!(
        event = "sidecar",
        "waiting up to {grace} for {} to say native",
        path.display()
    );
    let mut expired = false;
    loop {
        let (owned, aim) = (path.clone(), aim.clone());
        let read = lane.run(move || {
            aim.inspect(|aim| aim.refresh());
            state::read(&owned)
        });
        // A read stuck on a hung mount counts as "not native" once its time is up.
        let until = match expired {
            true => Instant::now() + LAST_READ,
            false => deadline,
        };
        let state = tokio::select! {
            read = read => read.map_err(|failure| {
                Exit::Failed(format!("cannot read state file {}: {failure}", path.display()))
            })??,
            () = sleep_until(until) => None,
            signal = signals.next() => return Ok(stopped(signal)),
        };
        match state {
            Some(Step::Native) => return Ok(stand_down(args.on_native, signals).await),
            _ if expired => break,
            _ => {}
        }
        tokio::select! {
            // Something in the state's folder changed: read again at once.
            () = watch.changed() => {}
            () = sleep(poll) => {}
            // One last read follows, so a write landing with the deadline still counts.
            () = sleep_until(deadline) => expired = true,
            signal = signals.next() => return Ok(stopped(signal)),
        }
    }
    tracing::info!(
        event = "sidecar",
        "{} did not say native within {grace}: built-in sidecars do not run here; running the \
         sidecar in this container",
        path.display()
    );
    Ok(crate::process::exec::exec(&args.command))
}

/// A terminating signal ended the wait.
fn stopped(signal: i32) -> Exit {
    crate::process::signal::stopped(signal, "while waiting for the native sidecar")
}

/// The native copy runs the sidecar: this container has nothing left to do.
async fn stand_down(on_native: OnNative, signals: Terminations) -> Exit {
    if on_native == OnNative::Exit {
        tracing::info!(event = "sidecar", "the native sidecar runs: exiting");
        return Exit::Ready;
    }
    tracing::info!(
        event = "sidecar",
        "the native sidecar runs: standing by until terminated"
    );
    super::sleep_until_terminated(signals).await
}
