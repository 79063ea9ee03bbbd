//! readygate as a library: every module of the program. The binary (`src/main.rs`) reads its
//! invocation and runs it; the fuzz targets (`fuzz/`) and the property tests (`tests/`) call
//! the parsers here directly. Modules are public only where those need them.
//!
//! # Layout
//!
//! Each line imports only from the lines below it (`tests/it/layers.rs` holds the modules to
//! this map):
//!
//! ```text
//! invocation  cluster         how each binary was invoked (readygate, readygate-cluster), run
//!                             to an exit status
//! compat  serve  run          the commands: wait-for-it and wait-for, serve, wait and probe
//! webhook  doctor             (run/, with the report a wait leaves behind); the admission
//!                             webhook and doctor of readygate-cluster
//! plan  inject                the validated plan, built once from the flags before any I/O;
//!                             the gate and sidecar added to manifests
//! cli  process                what the user typed (clap); exec, signals, install, sidecar
//! kind                        one module per target kind: its target, parse and check
//! engine                      the retry loop, knowing nothing of protocols
//! net                         resolve, connect, TLS: bytes to a peer, knowing nothing of checks
//! runtime                     the one-thread runtime, the Attempt a check runs in, lanes that
//!                             keep blocking work off the runtime's thread
//! exit                        exit statuses, and the one place a failure is said
//! log                         log lines, text or JSON
//! output                      the one writer of stdout and stderr, secrets hidden
//! grammar  error              option grammars cli and fuzz share; why an attempt failed
//! secrets  regular_file       hiding secrets; reading files readygate did not make
//! text                        quoting and cutting text for one line; percent-encoding
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
