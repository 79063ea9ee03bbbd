//! `sidecar native|legacy`, driven as the kubelet drives the two copies of an injected sidecar:
//! with built-in sidecar support the native copy's first run exits and it is restarted; without
//! it, the native copy runs once as an ordinary init container and the legacy copy takes over.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::emulated::time_limit;
use crate::support::events::FileReads;
use crate::support::run::{finish, Outcome, RunExt};
use crate::support::{readygate, Running, TempDir};

/// The state file's content, if any.
fn state(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Replaces the state file the way `sidecar native` does (temporary file, then rename), and
/// returns the moment it became visible.
fn write_state_atomically(path: &Path, content: &str) -> Instant {
    let temp = path.with_extension("test-tmp");
    std::fs::write(&temp, content).unwrap();
    std::fs::rename(&temp, path).unwrap();
    Instant::now()
}

/// `readygate sidecar KIND --state STATE WORDS…`: one copy of the injected sidecar.
fn sidecar(kind: &str, state: &Path, words: &[&str]) -> Command {
    let mut command = readygate(["sidecar", kind, "--state"]);
    command.arg(state).args(words);
    command
}

/// [`sidecar`], running.
fn spawn(kind: &str, state: &Path, words: &[&str]) -> Running {
    Running::spawn(&mut sidecar(kind, state, words))
}

/// Waits for it to end: its exit code and stdout.
fn exit_code(running: Running) -> (Option<i32>, String) {
    let outcome = running.finish();
    (outcome.code, outcome.stdout)
}

/// The native copy's first run: it records it and exits at once, sidecar not run.
fn first_run(state_file: &Path) -> Outcome {
    let outcome = sidecar(
        "native",
        state_file,
        &["--", "sh", "-c", "echo sidecar-ran"],
    )
    .outcome();
    outcome
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(3));
    outcome
}

#[test]
fn native_first_run_writes_first_run_and_exits_at_once() {
    let dir = TempDir::new();
    let state_file = dir.join("shared/state");
    let outcome = first_run(&state_file);
    outcome.expect_stderr("first run");
    assert_eq!(
        outcome.stdout, "",
        "the sidecar must not run on the first run"
    );
    assert_eq!(state(&state_file).as_deref(), Some("first-run\n"));
}

#[test]
fn native_restart_writes_native_and_execs_the_sidecar_in_the_same_process() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    first_run(&state_file);
    let (child, started) =
        sidecar("native", &state_file, &["--", "sh", "-c", "echo $$"]).spawn_captured();
    let pid = child.id();
    let outcome = finish(child, started);
    outcome.expect_code(0);
    assert_eq!(
        outcome.stdout.trim(),
        pid.to_string(),
        "not exec'd: {outcome:#?}"
    );
    assert_eq!(state(&state_file).as_deref(), Some("native\n"));
}

#[test]
fn legacy_sees_native_at_once_and_stands_by_until_sigterm() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    first_run(&state_file);
    let mut legacy = spawn(
        "legacy",
        &state_file,
        &["--", "sh", "-c", "echo legacy-ran"],
    );
    legacy.line("waiting up to 30.0s");
    // The kubelet restarts the built-in sidecar: the native copy writes `native` and runs.
    let restarted = Instant::now();
    let mut native = spawn("native", &state_file, &[]);
    let seen = legacy.line("the native sidecar runs");
    let reaction = seen.duration_since(restarted);
    eprintln!("legacy stood down {reaction:?} after the native copy was restarted");
    let limit = time_limit(reaction, Duration::from_secs(1));
    assert!(reaction < limit, "took {reaction:?}");
    native.line("wrote native");

    legacy.signal(libc::SIGTERM);
    let (code, stdout) = exit_code(legacy);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "", "the legacy copy must not run the sidecar");
    native.signal(libc::SIGTERM);
    assert_eq!(exit_code(native).0, Some(0));
    assert_eq!(state(&state_file).as_deref(), Some("native\n"));
}

#[test]
fn legacy_reacts_to_the_state_change_through_events_not_polling() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    first_run(&state_file);
    let reads = FileReads::watch(&state_file);
    let mut legacy = spawn(
        "legacy",
        &state_file,
        &["--on-native", "exit", "--", "sh", "-c", "echo legacy-ran"],
    );
    // Past the first read, so only an event (or the 2 s fallback poll) can wake it.
    reads.next_read();
    legacy.line("waiting up to");
    let written = write_state_atomically(&state_file, "native\n");
    let seen = legacy.line("the native sidecar runs: exiting");
    let reaction = seen.duration_since(written);
    eprintln!("legacy saw native {reaction:?} after the state file was replaced");
    let limit = time_limit(reaction, Duration::from_secs(1));
    assert!(reaction < limit, "took {reaction:?}");
    let (code, stdout) = exit_code(legacy);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "");
}

#[test]
fn without_native_support_legacy_runs_the_sidecar_after_the_grace_period() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    // The native copy was an ordinary init container: it ran once and is never restarted.
    first_run(&state_file);
    let (child, started) = sidecar(
        "legacy",
        &state_file,
        &["--grace", "1s", "--", "sh", "-c", "echo legacy-ran $$"],
    )
    .spawn_captured();
    let pid = child.id();
    let outcome = finish(child, started);
    outcome
        .expect_code(0)
        .expect_slower_than(Duration::from_secs(1))
        .expect_faster_than(Duration::from_secs(4))
        .expect_stderr("did not say native within 1.0s");
    assert_eq!(outcome.stdout.trim(), format!("legacy-ran {pid}"));
    assert_eq!(state(&state_file).as_deref(), Some("first-run\n"));
}

#[test]
fn legacy_passes_the_sidecars_exit_status_through() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    sidecar(
        "legacy",
        &state_file,
        &["--grace", "200ms", "--", "sh", "-c", "exit 5"],
    )
    .outcome()
    .expect_code(5);
    sidecar(
        "legacy",
        &state_file,
        &["--grace", "0", "--", "/no/such/sidecar"],
    )
    .outcome()
    .expect_code(127);
}

#[test]
fn a_crashed_native_sidecar_is_restarted_as_native() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    first_run(&state_file);
    sidecar("native", &state_file, &["--", "sh", "-c", "exit 3"])
        .outcome()
        .expect_code(3);
    assert_eq!(state(&state_file).as_deref(), Some("native\n"));
    // The kubelet restarts the crashed sidecar: it runs again at once, no first-run exit.
    sidecar(
        "native",
        &state_file,
        &["--", "sh", "-c", "echo sidecar-ran"],
    )
    .outcome()
    .expect_code(0)
    .expect_stdout("sidecar-ran");
    assert_eq!(state(&state_file).as_deref(), Some("native\n"));
    sidecar(
        "legacy",
        &state_file,
        &["--on-native", "exit", "--", "sh", "-c", "echo legacy-ran"],
    )
    .outcome()
    .expect_code(0)
    .expect_faster_than(Duration::from_secs(3));
}

#[test]
fn native_without_a_command_sleeps_until_sigterm() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    first_run(&state_file);
    let mut native = spawn("native", &state_file, &[]);
    native.line("wrote native");
    native.expect_running("exited without a signal");
    native.signal(libc::SIGTERM);
    // Its word that the signal, not something else, ended it.
    native.line("signal 15: exiting");
    assert_eq!(exit_code(native).0, Some(0));
}

#[test]
fn legacy_stopped_while_waiting_exits_128_plus_the_signal() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    let mut legacy = spawn(
        "legacy",
        &state_file,
        &["--", "sh", "-c", "echo legacy-ran"],
    );
    legacy.line("waiting up to");
    legacy.signal(libc::SIGTERM);
    let (code, stdout) = exit_code(legacy);
    assert_eq!(code, Some(143));
    assert_eq!(stdout, "");
}

#[test]
fn a_state_file_with_unexpected_content_is_a_usage_error() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    std::fs::write(&state_file, "enabled\n").unwrap();
    for side in [
        vec!["native", "--state", state_file.to_str().unwrap()],
        vec![
            "legacy",
            "--state",
            state_file.to_str().unwrap(),
            "--",
            "true",
        ],
    ] {
        let outcome = readygate(["sidecar"]).args(&side).outcome();
        outcome
            .expect_code(2)
            .expect_faster_than(Duration::from_secs(3))
            .expect_stderr("holds \"enabled\", not first-run or native");
        let errors: Vec<_> = outcome
            .stderr
            .lines()
            .filter(|l| l.contains("readygate:"))
            .collect();
        assert_eq!(errors.len(), 1, "{outcome:#?}");
        assert!(
            errors[0].contains(state_file.to_str().unwrap()),
            "{outcome:#?}"
        );
    }
    assert_eq!(
        state(&state_file).as_deref(),
        Some("enabled\n"),
        "must not be overwritten"
    );
}

#[test]
fn concurrent_readers_never_see_a_partial_state() {
    let dir = TempDir::new();
    let state_file = dir.join("state");
    let stop = Arc::new(AtomicBool::new(false));
    let counts: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (path, stop, counts) = (state_file.clone(), stop.clone(), counts.clone());
            std::thread::spawn(move || {
                let mut bad = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    match std::fs::read_to_string(&path) {
                        Ok(text) if text == "first-run\n" => {
                            counts[0].fetch_add(1, Ordering::Relaxed)
                        }
                        Ok(text) if text == "native\n" => counts[1].fetch_add(1, Ordering::Relaxed),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                            counts[2].fetch_add(1, Ordering::Relaxed)
                        }
                        other => {
                            bad.push(format!("{other:?}"));
                            0
                        }
                    };
                }
                bad
            })
        })
        .collect();
    for _ in 0..30 {
        // Each cycle as a pod's life: a first run, then restarts that write `native` again.
        let _ = std::fs::remove_file(&state_file);
        for _ in 0..3 {
            sidecar("native", &state_file, &["--", "true"])
                .outcome()
                .expect_code(0);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let bad: Vec<String> = readers
        .into_iter()
        .flat_map(|r| r.join().unwrap())
        .collect();
    assert!(
        bad.is_empty(),
        "{} partial or unexpected states seen, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    let seen: Vec<usize> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    eprintln!(
        "reads: first-run {}, native {}, absent {}",
        seen[0], seen[1], seen[2]
    );
    assert!(
        seen[0] > 0 && seen[1] > 0,
        "the readers saw too little: {seen:?}"
    );
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("state")],
        "temporary files left behind"
    );
}

#[test]
fn legacy_reads_a_state_written_in_place_as_not_yet_until_it_is_whole() {
    // `echo native > state`: the shell truncates the file, then writes. A reader in between
    // sees an empty file; that is a state being written, not a usage error.
    let dir = TempDir::new();
    let state_file = dir.join("state");
    std::fs::write(&state_file, "").unwrap();
    let reads = FileReads::watch(&state_file);
    let mut legacy = spawn(
        "legacy",
        &state_file,
        &[
            "--on-native",
            "exit",
            "--grace",
            "30s",
            "--",
            "sh",
            "-c",
            "echo legacy-ran",
        ],
    );
    // It has read the empty file (and is still running).
    reads.next_read();
    legacy.line("waiting up to");
    std::fs::write(&state_file, "nat").unwrap();
    reads.next_read();
    std::fs::write(&state_file, "native\n").unwrap();
    legacy.line("the native sidecar runs: exiting");
    let (code, stdout) = exit_code(legacy);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "");
}

#[test]
fn a_state_path_naming_a_folder_is_a_usage_error() {
    let dir = TempDir::new();
    let folder = format!("{}/", dir.join("shared").display());
    for side in [
        vec!["native", "--state", &folder],
        vec!["legacy", "--state", &folder, "--grace", "1s", "--", "true"],
    ] {
        readygate(["sidecar"])
            .args(&side)
            .outcome()
            .expect_code(2)
            .expect_stderr("names a folder, not a file")
            .expect_faster_than(Duration::from_secs(3));
    }
}
