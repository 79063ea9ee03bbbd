//! Gives `--version` the commit and the target triple it was built from: the commit from
//! READYGATE_COMMIT, else the packaged crate's .cargo_vcs_info.json (a `cargo package` crate has
//! no .git), else git; "unknown" when none says.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=READYGATE_COMMIT");
    // Named only when it exists: cargo counts a missing file as changed, on every build.
    rerun_if_changed(".cargo_vcs_info.json");
    let commit = std::env::var("READYGATE_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty())
        .or_else(packaged_commit)
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=READYGATE_COMMIT={commit}");
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=READYGATE_TARGET={target}");
}

/// The `"sha1"` cargo package records, when this is an unpacked `.crate`.
fn packaged_commit() -> Option<String> {
    let info = std::fs::read_to_string(".cargo_vcs_info.json").ok()?;
    let after = &info[info.find("\"sha1\"")? + "\"sha1\"".len()..];
    let start = after.find('"')? + 1;
    let length = after[start..].find('"')?;
    hex(&after[start..start + length])
}

/// HEAD's commit; reruns when HEAD moves (the files git changes on a commit or checkout).
/// Not packed-refs: every worktree shares it, so any ref change anywhere would relink.
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).output().ok()?;
        out.status.success().then_some(())?;
        Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
    };
    let commit = hex(&git(&["rev-parse", "HEAD"])?)?;
    if let Some(path) = git(&["rev-parse", "--git-path", "HEAD"]) {
        rerun_if_changed(&path);
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &branch]) {
            rerun_if_changed(&path);
        }
    }
    Some(commit)
}

fn rerun_if_changed(path: &str) {
    if Path::new(path).exists() {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// `text` when it is a full commit id.
fn hex(text: &str) -> Option<String> {
    let full = text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit());
    full.then(|| text.to_string())
}
