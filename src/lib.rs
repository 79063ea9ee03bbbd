//! readygate as a library: every module of the program. The binary (`src/main.rs`) reads its
//! invocation and runs it; the fuzz targets (`fuzz/`) and the property tests (`tests/`) call
//! the parsers here directly. Modules are public only where those need them.
//!
//! # Layout
//!
//! Each layer imports only from the layers below it (`tests/it/layers.rs` fails on a cycle):
//!
//! ```text
//! invocation                  how the process was invoked, run to an exit status
//! compat  serve  run          the commands: wait-for-it/wait-for, serve, wait and probe (and
//!                             the report a wait leaves behind)
//! plan                        the validated plan, built once from the flags before any I/O
//! cli  process                what the user typed (clap); exec, signals, install, sidecar
//! kind                        one module per target kind: its target, parse and check
//! engine                      the retry loop, knowing nothing of protocols
//! net                         resolve, connect, TLS: bytes to a peer, knowing nothing of checks
//! runtime                     the one-thread runtime, the Attempt a check runs in, lanes for
//!                             blocking work
//! exit  log  output           exit statuses; log lines; the one writer of stdout and stderr
//! error  grammar  secrets     an attempt's Failure; option grammars; hiding secrets;
//! text  regular_file          quoting and cutting text; reading files safely
//! ```

#[macro_use]
mod output;
pub mod cli;
pub mod cluster;
mod compat;
mod doctor;
pub mod engine;
mod error;
pub mod exit;
pub mod grammar;
mod inject;
mod invocation;
pub mod kind;
mod log;
mod net;
pub mod plan;
mod process;
pub mod regular_file;
mod run;
mod runtime;
mod secrets;
mod serve;
mod text;
mod webhook;

pub use grammar::{duration, expect, header, matcher, status};
pub use invocation::Invocation;
