//! Many targets at once under a small soft `RLIMIT_NOFILE`: readygate makes room for its
//! fan-out (soft limit raised to the hard one) and leaves COMMAND's limits alone otherwise.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use crate::support::run::RunExt;
use crate::support::{readygate, TempDir};

/// The soft descriptor limit the child starts with: far below what 500 targets need.
const SOFT: libc::rlim_t = 128;

/// 500 listeners on 127.0.0.1 and their `tcp://` targets; the listeners live as long as the Vec.
fn listeners(count: usize) -> (Vec<TcpListener>, Vec<String>) {
    let listeners: Vec<TcpListener> = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0"))
        .collect();
    let targets = listeners
        .iter()
        .map(|l| format!("tcp://{}", l.local_addr().unwrap()))
        .collect();
    (listeners, targets)
}

/// `command` with its soft `RLIMIT_NOFILE` lowered to [`SOFT`] (the hard limit unchanged).
fn with_small_soft_limit(mut command: Command) -> Command {
    // SAFETY: only async-signal-safe calls between fork and exec (getrlimit, setrlimit).
    unsafe {
        command.pre_exec(|| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            limit.rlim_cur = SOFT.min(limit.rlim_max);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

fn hard_limit() -> libc::rlim_t {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    limit.rlim_max
}

#[test]
fn five_hundred_targets_at_once_despite_a_soft_limit_of_128() {
    assert!(
        hard_limit() >= 1100,
        "the hard RLIMIT_NOFILE ({}) is too low for this test",
        hard_limit()
    );
    let (_up, targets) = listeners(500);
    for command in ["wait", "probe"] {
        let mut args = vec![command.to_string(), "-t".into(), "10s".into()];
        args.extend(targets.iter().cloned());
        with_small_soft_limit(readygate(&args))
            .outcome()
            .expect_code(0)
            .expect_faster_than(Duration::from_secs(5));
    }
}

#[test]
fn command_keeps_its_soft_limit_unless_the_fan_out_needed_more() {
    let (_up, targets) = listeners(500);
    let limit_seen = |count: usize| {
        let mut args = vec!["wait".to_string()];
        args.extend(targets[..count].iter().cloned());
        args.extend(["--", "sh", "-c", "ulimit -Sn"].map(String::from));
        let outcome = with_small_soft_limit(readygate(&args)).outcome();
        outcome.expect_code(0);
        outcome.stdout.trim().to_string()
    };
    assert_eq!(
        limit_seen(3),
        SOFT.to_string(),
        "a small wait raised the limit"
    );
    let raised = limit_seen(500);
    assert_ne!(
        raised,
        SOFT.to_string(),
        "500 targets did not raise the limit"
    );
    let expected = match hard_limit() {
        libc::RLIM_INFINITY => "unlimited".to_string(),
        hard => hard.to_string(),
    };
    assert_eq!(raised, expected, "the soft limit is raised to the hard one");
}

#[test]
fn three_hundred_file_targets_under_a_descriptor_limit_of_256() {
    // One inotify instance and one watch per folder, whatever the number of file targets; a
    // read that finds no descriptor free is retried, not fatal.
    let dir = TempDir::new();
    let files: Vec<String> = (0..300)
        .map(|n| {
            let path = dir.join(&format!("ready-{n}"));
            std::fs::write(&path, "starting").unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect();
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -n 256 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_readygate"))
        .args([
            "wait",
            "-q",
            "-t",
            "30s",
            "--max-interval",
            "1s",
            "--contains",
            "READY",
        ])
        .args(&files);
    let (child, started) = command.spawn_captured();
    for file in &files {
        std::fs::write(file, "READY").unwrap();
    }
    crate::support::run::finish(child, started)
        .expect_code(0)
        .expect_faster_than(Duration::from_secs(20));
}
