//! The webhook's threads beside the main one. A review is CPU work (TLS records, JSON in and
//! out, the pod's tree), and one thread answers concurrent reviews one after the other: each
//! worker runs a single-thread runtime of its own on a copy of the listening socket, taking
//! connections as the main thread does and sharing what it counts.

use std::io;
use std::os::fd::AsFd;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::{take_connections, Shared};
use crate::error::describe_io;

/// The most threads that take connections, whatever the cores.
const MOST: usize = 4;

/// Workers to start beside the main thread: one per core the process may use (its CPU quota
/// counted), less the main thread's.
pub fn count() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    cores.clamp(1, MOST) - 1
}

/// Starts up to `count` workers taking connections on copies of `listener`; returns how many
/// started. One that cannot start is said once, and the threads already running serve.
pub fn start(listener: &TcpListener, count: usize, shared: &Arc<Shared>) -> usize {
    for started in 0..count {
        if let Err(e) = spawn(listener, shared.clone()) {
            tracing::warn!(
                event = "webhook",
                "cannot start a worker thread: {}",
                describe_io(&e)
            );
            return started;
        }
    }
    count
}

/// One worker: its runtime and socket made here, so that a failure is the caller's to say.
fn spawn(listener: &TcpListener, shared: Arc<Shared>) -> io::Result<()> {
    let copy = std::net::TcpListener::from(listener.as_fd().try_clone_to_owned()?);
    copy.set_nonblocking(true)?;
    let runtime = crate::runtime::runtime()?;
    let listener = {
        let _inside = runtime.enter();
        TcpListener::from_std(copy)?
    };
    std::thread::Builder::new()
        .name("webhook-worker".into())
        .spawn(move || runtime.block_on(take_connections(listener, shared)))?;
    Ok(())
}
