//! readygate as a library: every module of the program. The binaries (`src/main.rs`,
//! `src/bin/readygate-cluster.rs`) run an invocation; the fuzz targets (`fuzz/`) and the
//! property tests (`tests/`) call the parsers directly. Those uses are the public face, re-exported
//! at the end of this file; every module is private to the crate.
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
//! text  metrics               quoting and cutting text for one line; percent-encoding; the
//!                             Prometheus text format
//! ```

#[macro_use]
mod output;
mod cli;
pub mod cluster;
mod compat;
mod doctor;
mod engine;
mod error;
mod exit;
mod grammar;
mod inject;
mod invocation;
mod kind;
mod log;
mod metrics;
mod net;
mod plan;
mod process;
mod regular_file;
mod run;
mod runtime;
mod secrets;
mod serve;
mod text;
mod webhook;

// The binaries' entry points.
pub use invocation::Invocation;

// The parsers the fuzz targets and property tests call, with the types they return.
pub use cli::{usage_error, Cli, Command};
pub use exit::Exit;
pub use grammar::duration::parse_duration;
pub use grammar::expect::{HeaderMatch, JsonField};
pub use grammar::header::{is_secret, Header};
pub use grammar::matcher::Matcher;
pub use grammar::status::StatusRanges;
pub use kind::target::{redact_userinfo, Target};
pub use kind::{Host, Kind};
pub use plan::Plan;

// What the HTTP check asks and how it follows a redirect: the fuzz target feeds it raw answers.
pub use kind::http::{redirect, request, HttpTarget};

// The spacing of attempts, whose bounds a property test holds.
pub use engine::{Backoff, Schedule};

// What anyone who can create a pod, or hand `inject` a manifest, controls: the fuzz targets feed
// bytes to the webhook's review and to inject's manifest stream, with an injection made as
// `--image`, `--sidecar` and `--mode` make it, and the sidecar's form `--mode auto` would choose.
pub use cli::SidecarMode;
pub use inject::sidecar::Mode as SidecarForm;
pub use inject::{injection_of, manifests as inject_manifests, Injection};
pub use webhook::review::answer as admission_answer;

// Reading a file readygate did not make, which a test points at odd files.
pub use regular_file::read_head;
