//! readygate's self-contained parser modules, included by path: the crate is a binary, and these
//! modules only name each other (as `crate::…`) and their own dependencies.

#[path = "../../src/cli/args.rs"]
pub mod cli;
#[path = "../../src/duration.rs"]
pub mod duration;
#[path = "../../src/expect.rs"]
pub mod expect;
#[path = "../../src/header.rs"]
pub mod header;
#[path = "../../src/matcher.rs"]
pub mod matcher;
#[path = "../../src/percent.rs"]
pub mod percent;
#[path = "../../src/redact.rs"]
pub mod redact;
#[path = "../../src/status.rs"]
pub mod status;
/// The parts of `kind` the parsers name: targets, HTTP requests and redirects.
#[path = "kind.rs"]
pub mod kind;

/// Stand-in for `version`, which needs build.rs.
pub mod version {
    pub const VERSION: &str = "fuzz";
}
/// Stand-in for `log::LogFormat`, which the clap definitions name: the real module needs the
/// whole binary. Same variants.
pub mod log {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
    pub enum LogFormat {
        Text,
        Json,
    }
}
/// Stand-in for `process::sidecar::OnNative`, for the same reason.
pub mod process {
    pub mod sidecar {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum OnNative {
            Sleep,
            Exit,
        }
    }
}

/// Panics unless a rejection is one line, as the contract promises.
pub fn assert_one_line(message: &str) {
    assert!(!message.is_empty(), "empty message");
    assert!(
        !message.contains('\n') && !message.contains('\r'),
        "more than one line: {message:?}"
    );
}
