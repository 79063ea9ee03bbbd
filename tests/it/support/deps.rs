//! The system programs the suite runs (servers, namespaces, reference tools): found on `PATH`,
//! or the test fails with one line saying how to install them.

use std::path::PathBuf;

/// The full path of a program the suite needs. Missing is a loud failure, never a skip: CI
/// installs it with `scripts/install-test-deps.sh`.
#[track_caller]
pub fn require(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!("{program} is not installed: run scripts/install-test-deps.sh (as root)")
        })
}
