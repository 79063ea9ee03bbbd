//! The tokio runtime every command runs on: one thread (a probe or a wait has nothing to run in
//! parallel, and a second thread costs start-up and memory), with I/O, signals and timers; and
//! what work on it is handed: the [`Attempt`] a check runs in, and [`lane`]s that keep blocking
//! work off the runtime's thread.

pub mod attempt;
pub mod lane;

pub use attempt::{Attempt, NOTHING_YET, TLS_HANDSHAKE};

/// Builds the runtime; an error means the environment lacks what it needs (descriptors).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
}
