//! `readygate install DIR`: the copy runs, replaces atomically, fails clearly and cleanly, and
//! never follows a planted symlink. Read-only and full folders are real mounts in a private
//! mount namespace (`unshare -m`), since root ignores permission bits.

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::run::{Outcome, RunExt};
use crate::support::{closed_addr, readygate, require, TempDir};

/// The binary under test, the one `install` must copy byte for byte.
const BINARY: &str = env!("CARGO_BIN_EXE_readygate");

/// Names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Panics unless `path` is a regular file, mode 0755, identical to the binary under test.
#[track_caller]
fn assert_installed(path: &Path) {
    let meta = fs::symlink_metadata(path).expect("installed file");
    assert!(meta.file_type().is_file(), "{path:?} is not a regular file");
    assert_eq!(
        meta.permissions().mode() & 0o7777,
        0o755,
        "mode of {path:?}"
    );
    assert!(
        fs::read(path).expect("read installed") == fs::read(BINARY).expect("read binary"),
        "{path:?} differs from {BINARY}"
    );
}

/// Panics unless stderr is exactly one line.
#[track_caller]
fn assert_one_line(outcome: &Outcome) {
    assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
}

/// The installed copy is a working readygate: `--version`, and probes that pass and fail.
#[track_caller]
fn assert_runs(installed: &Path) {
    let version = Command::new(installed).arg("--version").outcome();
    version
        .expect_code(0)
        .expect_stdout(concat!("readygate ", env!("CARGO_PKG_VERSION")));
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let open = format!("tcp://{}", listener.local_addr().unwrap());
    Command::new(installed)
        .args(["probe", &open])
        .outcome()
        .expect_code(0);
    Command::new(installed)
        .args(["probe", &format!("tcp://{}", closed_addr())])
        .outcome()
        .expect_code(1)
        .expect_stdout("connection refused");
}

/// Runs `script` under `sh` in a private mount namespace, with `$1` = `dir` and `$2` = the
/// binary, so test mounts vanish with the process.
fn in_private_mounts(script: &str, dir: &Path) -> Outcome {
    Command::new(require("unshare"))
        .args([
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(dir)
        .arg(BINARY)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(Stdio::null())
        .outcome()
}

/// The program interpreter cargo's own build names: the test suite's readygate is linked
/// dynamically (the static one is images/static-build.sh's, tests/it/static_root.rs).
fn interpreter_of_the_binary_under_test() -> String {
    let readelf = Command::new(require("readelf"))
        .args(["--program-headers", BINARY])
        .outcome();
    readelf.expect_code(0);
    let line = readelf
        .stdout
        .lines()
        .find(|line| line.contains("Requesting program interpreter"))
        .unwrap_or_else(|| panic!("{BINARY} names no interpreter: {}", readelf.stdout));
    let start = line.find(": ").unwrap() + 2;
    line[start..].trim_end_matches(']').to_owned()
}

#[test]
fn install_copies_a_working_binary_and_says_so_once() {
    let tmp = TempDir::new();
    let shared = tmp.join("shared");
    fs::create_dir(&shared).unwrap();
    let outcome = readygate(["install".as_ref(), shared.as_os_str()]).outcome();
    outcome
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(10))
        .expect_stderr(&format!("installed {}/readygate", shared.display()));
    // One line to say it, after the warning about this dynamically linked build (below).
    assert_eq!(outcome.stderr.lines().count(), 2, "{outcome:#?}");
    assert_eq!(outcome.stdout, "");
    assert_eq!(entries(&shared), ["readygate"], "no temporary file is left");
    assert_installed(&shared.join("readygate"));
    assert_runs(&shared.join("readygate"));
}

/// `cargo install` builds a readygate that needs the C library: copied into an image without
/// it, it would not start. install says so, naming the interpreter, and still copies it.
#[test]
fn a_dynamically_linked_build_is_installed_with_a_warning_that_names_its_loader() {
    let interpreter = interpreter_of_the_binary_under_test();
    let tmp = TempDir::new();
    let outcome = readygate(["install".as_ref(), tmp.0.as_os_str()]).outcome();
    outcome
        .expect_code(0)
        .expect_stderr(&format!("readygate: warning: this readygate is linked dynamically (it needs {interpreter} and the C library)"))
        .expect_stderr("install the release's static binary or image instead");
    let lines: Vec<&str> = outcome.stderr.lines().collect();
    assert!(
        lines[0].contains("linked dynamically") && lines[1].contains("installed"),
        "{lines:?}"
    );
    assert_installed(&tmp.join("readygate"));
}

#[test]
fn install_replaces_an_existing_file_by_rename_not_in_place() {
    let tmp = TempDir::new();
    let shared = tmp.join("shared");
    fs::create_dir(&shared).unwrap();
    let old = shared.join("readygate");
    fs::write(&old, "old").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o644)).unwrap();
    // A second name for the old file: an in-place write would change what it reads.
    fs::hard_link(&old, tmp.join("old-link")).unwrap();
    let old_inode = fs::metadata(&old).unwrap().ino();

    readygate(["install".as_ref(), shared.as_os_str()])
        .outcome()
        .expect_code(0);
    assert_installed(&old);
    assert_ne!(
        fs::metadata(&old).unwrap().ino(),
        old_inode,
        "a new file took the name"
    );
    assert_eq!(fs::read_to_string(tmp.join("old-link")).unwrap(), "old");
    assert_eq!(entries(&shared), ["readygate"]);
    assert_runs(&old);
}

#[test]
fn install_into_a_missing_folder_is_a_usage_error() {
    let tmp = TempDir::new();
    let missing = tmp.join("no-such-dir");
    let outcome = readygate(["install".as_ref(), missing.as_os_str()]).outcome();
    outcome
        .expect_code(2)
        .expect_stderr(&format!("no such folder {}", missing.display()));
    assert_one_line(&outcome);
    assert!(!missing.exists(), "install must not create DIR");
}

#[test]
fn install_into_a_file_is_a_usage_error() {
    let tmp = TempDir::new();
    let file = tmp.join("a-file");
    fs::write(&file, "x").unwrap();
    let outcome = readygate(["install".as_ref(), file.as_os_str()]).outcome();
    outcome.expect_code(2).expect_stderr("is not a folder");
    assert_one_line(&outcome);
    assert_eq!(fs::read_to_string(&file).unwrap(), "x");
    let below = file.join("sub");
    let outcome = readygate(["install".as_ref(), below.as_os_str()]).outcome();
    outcome.expect_code(2).expect_stderr("no such folder");
    assert_one_line(&outcome);
}

#[test]
fn install_without_arguments_is_a_usage_error() {
    let outcome = readygate(["install"]).outcome();
    outcome.expect_code(2);
    assert_one_line(&outcome);
}

#[test]
fn install_into_a_read_only_folder_fails_with_status_1() {
    let tmp = TempDir::new();
    let shared = tmp.join("shared");
    fs::create_dir(&shared).unwrap();
    // The write check proves the mount really is read-only (root ignores mode bits).
    let outcome = in_private_mounts(
        r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 90
           touch "$1/write-check" 2>/dev/null && exit 91
           exec "$2" install "$1""#,
        &shared,
    );
    outcome
        .expect_code(1)
        .expect_stderr("install: cannot create a file in")
        .expect_stderr("read-only file system");
    assert_one_line(&outcome);
    assert!(entries(&shared).is_empty(), "{:?}", entries(&shared));
}

#[test]
fn a_folder_that_refuses_the_file_is_named_as_typed() {
    // Nobody may create a file in /proc, root included.
    let outcome = readygate(["install", "/proc/"]).outcome();
    outcome
        .expect_code(1)
        .expect_stderr("install: cannot create a file in /proc/: ");
    assert_one_line(&outcome);
}

#[test]
fn install_that_runs_out_of_space_leaves_no_temporary_file() {
    let tmp = TempDir::new();
    let shared = tmp.join("shared");
    fs::create_dir(&shared).unwrap();
    // 256 KiB holds the temporary file's start but not the binary: the write fails midway.
    let outcome = in_private_mounts(
        r#"mount -t tmpfs -o size=256k tmpfs "$1" || exit 90
           "$2" install "$1"; status=$?
           echo "left:[$(ls -A "$1")]"
           exit $status"#,
        &shared,
    );
    outcome
        .expect_code(1)
        .expect_stderr("no space left on device")
        .expect_stdout("left:[]");
    assert_one_line(&outcome);
}

#[test]
fn a_symlink_planted_at_the_temporary_name_is_not_followed() {
    let tmp = TempDir::new();
    let shared = tmp.join("shared");
    fs::create_dir(&shared).unwrap();
    let planted = shared.join(".readygate.tmp");
    let aim = tmp.join("created-through-the-link");
    std::os::unix::fs::symlink(&aim, &planted).unwrap();

    readygate(["install".as_ref(), shared.as_os_str()])
        .outcome()
        .expect_code(0);
    assert!(!aim.exists(), "install wrote through a planted symlink");
    assert_eq!(
        fs::read_link(&planted).unwrap(),
        aim,
        "the planted link is left alone"
    );
    assert_eq!(entries(&shared), [".readygate.tmp", "readygate"]);
    assert_installed(&shared.join("readygate"));
}

#[test]
fn a_symlink_at_the_destination_is_replaced_not_written_through() {
    let tmp = TempDir::new();
    let shared = tmp.join("shared");
    fs::create_dir(&shared).unwrap();
    let victim = tmp.join("victim");
    fs::write(&victim, "victim").unwrap();
    std::os::unix::fs::symlink(&victim, shared.join("readygate")).unwrap();

    readygate(["install".as_ref(), shared.as_os_str()])
        .outcome()
        .expect_code(0);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "victim");
    assert_installed(&shared.join("readygate"));
}
