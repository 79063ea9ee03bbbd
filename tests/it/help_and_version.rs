//! `--help`, `help` and `--version` exit 0; the version names the release, the commit and the
//! architecture.

use crate::support::readygate;
use crate::support::run::RunExt;

#[test]
fn help_and_version_exit_0() {
    readygate(["--help"])
        .outcome()
        .expect_code(0)
        .expect_stdout("Usage");
    readygate(["wait", "--help"])
        .outcome()
        .expect_code(0)
        .expect_stdout("--attempt-timeout");
}

/// `--version` names the release, the commit (HEAD's, when built from this clone) and the
/// architecture the binary runs on.
#[test]
fn version_names_the_release_the_commit_and_the_target() {
    let outcome = readygate(["--version"]).outcome();
    outcome.expect_code(0);
    let line = outcome.stdout.trim_end();
    let rest = line
        .strip_prefix(concat!(
            "readygate ",
            env!("CARGO_PKG_VERSION"),
            " (commit "
        ))
        .unwrap_or_else(|| panic!("{line:?}"));
    let (commit, target) = rest
        .strip_suffix(')')
        .and_then(|rest| rest.split_once(", "))
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!(
        commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
        "{line:?}"
    );
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|head| head.status.success());
    if let Some(head) = head {
        assert_eq!(
            commit,
            String::from_utf8_lossy(&head.stdout).trim(),
            "{line:?}"
        );
    }
    assert!(
        target.starts_with(&format!("{}-", std::env::consts::ARCH)) && target.contains("-linux-"),
        "{line:?}"
    );
    assert_eq!(outcome.stdout.lines().count(), 1, "{line:?}");
}

#[test]
fn help_is_a_command_too() {
    let outcome = readygate(["help"]).outcome();
    outcome.expect_code(0).expect_stdout("Usage: readygate");
    let outcome = readygate(["help", "wait"]).outcome();
    outcome
        .expect_code(0)
        .expect_stdout("Usage: readygate wait")
        .expect_stdout("--timeout");
}
