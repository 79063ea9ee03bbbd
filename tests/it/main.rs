//! readygate's integration tests: one binary, each module a user's session with the real
//! `readygate` executable against real listeners on 127.0.0.1 and real files.

mod support;

mod cli;
mod examples;
mod on_exit;
mod sidecar;
mod wait_for_it;
