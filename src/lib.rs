//! readygate as a library: every module of the program. The binary (`src/main.rs`) reads its
//! invocation and runs it; the fuzz targets (`fuzz/`) and the property tests (`tests/`) call
//! the parsers here directly. Modules are public only where those need them.

#[macro_use]
mod say;
pub mod cli;
pub mod cluster;
mod compat;
mod doctor;
pub mod duration;
pub mod engine;
mod error;
pub mod exit;
pub mod expect;
pub mod header;
mod inject;
mod invocation;
pub mod kind;
mod log;
pub mod matcher;
mod net;
mod output;
mod percent;
pub mod plan;
mod process;
mod redact;
pub mod regular_file;
mod report;
mod run;
mod runtime;
mod secrets;
mod serve;
pub mod status;
mod version;
mod webhook;

pub use invocation::Invocation;
