//! What the user typed: the clap definitions ([`args`]), and the completions and man page
//! generated from them.

mod args;
pub mod generate;

pub use args::*;
