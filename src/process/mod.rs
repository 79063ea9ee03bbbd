//! The process around the checks: exec of COMMAND, signals, `--on-exit` supervision,
//! `install` (and the ELF interpreter it warns about), the sidecar handshake, the descriptor limit,
//! and the accept loop `serve` and the webhook share.

pub mod atomic;
pub mod elf;
pub mod exec;
pub mod fdlimit;
pub mod install;
pub mod serving;
pub mod sidecar;
pub mod signal;
pub mod supervise;
