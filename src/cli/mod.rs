//! What the user typed: the clap definitions, with `READYGATE_*` environment fallbacks, and
//! (in [`generate`]) the completions and man page made from them. The plan (`plan.rs`) turns
//! these into a validated plan before any I/O.

mod args;
pub mod cluster;
pub mod dashes;
mod environment;
pub mod generate;
pub mod help;
pub mod placement;
mod usage;
pub mod version;

pub use args::*;
pub use environment::name_variables;
pub use placement::log_format_typed;
pub use usage::usage_error;
