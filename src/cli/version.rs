//! What `readygate --version` prints after the name: the release, and the commit and target
//! triple it was built from (set by build.rs), so a binary found in an image names its source.

/// `0.1.0 (commit 0ffc2ab…, x86_64-unknown-linux-gnu)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("READYGATE_COMMIT"),
    ", ",
    env!("READYGATE_TARGET"),
    ")"
);
