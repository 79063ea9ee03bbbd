//! File targets are released by inotify events, not by polling: a file created or renamed in,
//! folders deleted or swapped, ConfigMap-style symlink swaps, content written in place, and
//! `--invert` until a file is gone.

use crate::support::run::RunExt;
use crate::support::{readygate, Running, TempDir, SECOND};

#[test]
fn two_files_in_two_folders_are_each_noticed_by_their_events() {
    // One inotify instance tells of changes in every watched folder: each file's watch wakes.
    let dir = TempDir::new();
    std::fs::create_dir(dir.join("a")).unwrap();
    std::fs::create_dir(dir.join("b")).unwrap();
    let (a, b) = (dir.join("a/ready"), dir.join("b/ready"));
    let (a_name, b_name) = (a.to_str().unwrap(), b.to_str().unwrap());
    released_by_its_event(&[], &[a_name, b_name], |running| {
        std::fs::write(&a, "").unwrap();
        running.line(&format!("{a_name}: ready after"));
        std::fs::write(&b, "").unwrap();
    });
}

/// Runs `wait -v OPTIONS TARGETS` polling only every minute (no retry before 30 s), waits
/// until each target has had its first attempt, makes `change` (which may wait for what the
/// run says between its steps), and asserts the wait ended soon after: only a file-system
/// event can release it that fast.
fn released_by_its_event(options: &[&str], targets: &[&str], change: impl FnOnce(&mut Running)) {
    let mut argv = vec![
        "wait",
        "-v",
        "--interval",
        "60s",
        "--max-interval",
        "60s",
        "-t",
        "90s",
    ];
    argv.extend_from_slice(options);
    argv.extend_from_slice(targets);
    let mut running = Running::spawn(&mut readygate(argv));
    let first: Vec<String> = targets
        .iter()
        .map(|t| format!("{t}: attempt 1: "))
        .collect();
    running.lines(&first);
    running.expect_running("ready before the change");
    let change_began = running.started().elapsed();
    change(&mut running);
    let changed = running.started().elapsed();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(change_began)
        .expect_faster_than(changed + 10 * SECOND);
}

/// Makes `step`, then waits for the run's next attempt: it has been woken by the step.
fn next_attempt_after(running: &mut Running, step: impl FnOnce()) {
    running.skip_written();
    step();
    running.line(": attempt ");
}

#[test]
fn a_file_is_noticed_by_its_event_not_by_polling() {
    let dir = TempDir::new();
    let path = dir.join("not/yet/there/ready");
    released_by_its_event(&[], &[path.to_str().unwrap()], |_| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "").unwrap();
    });
}

#[test]
fn a_file_renamed_in_from_another_folder_is_noticed_by_its_event() {
    let dir = TempDir::new();
    let (folder, staging) = (dir.join("run"), dir.join("staging"));
    std::fs::create_dir(&folder).unwrap();
    std::fs::create_dir(&staging).unwrap();
    let path = folder.join("ready");
    // Written elsewhere, then moved in: the watched folder sees only the move (MOVED_TO).
    released_by_its_event(&[], &[path.to_str().unwrap()], |_| {
        std::fs::write(staging.join("ready"), "").unwrap();
        std::fs::rename(staging.join("ready"), &path).unwrap();
    });
}

#[test]
fn a_watched_folder_deleted_or_swapped_and_made_again_is_followed() {
    let dir = TempDir::new();
    let folder = dir.join("run");
    let path = folder.join("ready");
    std::fs::create_dir(&folder).unwrap();
    released_by_its_event(&[], &[path.to_str().unwrap()], |running| {
        // Each step waits until readygate has been woken by the one before.
        next_attempt_after(running, || std::fs::remove_dir(&folder).unwrap());
        next_attempt_after(running, || std::fs::create_dir(&folder).unwrap());
        std::fs::write(&path, "").unwrap();
    });
    std::fs::remove_file(&path).unwrap();
    released_by_its_event(&[], &[path.to_str().unwrap()], |running| {
        // Not a change in the watched folder: nothing to wait for.
        std::fs::create_dir(dir.join("next")).unwrap();
        next_attempt_after(running, || {
            std::fs::rename(&folder, dir.join("old")).unwrap();
            std::fs::rename(dir.join("next"), &folder).unwrap();
        });
        std::fs::write(&path, "").unwrap();
    });
}

#[test]
fn file_content_and_configmap_style_symlink_swaps() {
    let dir = TempDir::new();
    // The kubelet's layout: key -> ..data/key, ..data -> ..v1, swapped atomically to ..v2.
    std::fs::create_dir(dir.join("..v1")).unwrap();
    std::fs::write(dir.join("..v1/mode"), "starting").unwrap();
    std::os::unix::fs::symlink("..v1", dir.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/mode", dir.join("mode")).unwrap();
    let key = dir.join("mode");
    let url = format!("file://{}", key.display());
    readygate(["probe", "--contains", "serving", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("content did not contain \"serving\"");
    released_by_its_event(&["--matches", "^serv"], &[&url], |_| {
        std::fs::create_dir(dir.join("..v2")).unwrap();
        std::fs::write(dir.join("..v2/mode"), "serving").unwrap();
        std::os::unix::fs::symlink("..v2", dir.join("..data_tmp")).unwrap();
        std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).unwrap();
    });
}

#[test]
fn content_written_in_place_is_noticed_by_its_event() {
    let dir = TempDir::new();
    let path = dir.join("mode");
    std::fs::write(&path, "starting").unwrap();
    // An existence-only watch does not listen for writes; a content match must.
    released_by_its_event(
        &["--contains", "serving"],
        &[path.to_str().unwrap()],
        |_| {
            std::fs::write(&path, "serving").unwrap();
        },
    );
}

#[test]
fn invert_waits_until_a_file_is_gone() {
    let dir = TempDir::new();
    let path = dir.join("lock");
    std::fs::write(&path, "").unwrap();
    let name = path.to_str().unwrap();
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-v",
        "--invert",
        "--interval",
        "60s",
        "--max-interval",
        "60s",
        "-t",
        "90s",
        name,
    ]));
    // Each attempt that finds the file still there says so at -v, before the goal is judged;
    // the progress line comes only once it was judged not met yet.
    running.line(&format!("{name}: attempt 1: still ready"));
    running.line(&format!("{name} (still ready)"));
    let removed = running.started().elapsed();
    std::fs::remove_file(&path).unwrap();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(removed)
        .expect_faster_than(removed + 10 * SECOND);
}
