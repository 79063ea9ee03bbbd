//! Bad input beyond the core cases in `usage_errors.rs`: every malformed target form, option
//! value, environment value (non-UTF-8 too), empty strings, huge arguments and
//! extreme-but-valid values.
//! Each must end in status 2 with one line naming the fault — never a panic, never status 101 —
//! and extreme values that are valid must run without a panic.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::run::{Outcome, RunExt};
use crate::support::{closed_addr, readygate};

/// Panics unless `outcome` is a usage error: status 2, nothing on stdout, one line on stderr
/// that starts with `readygate: ` and contains `fault`.
#[track_caller]
fn expect_usage_error(what: &str, outcome: &Outcome, fault: &str) {
    assert_eq!(outcome.code, Some(2), "{what}: {outcome:#?}");
    assert_eq!(outcome.stdout, "", "{what}");
    assert!(!outcome.stderr.contains("panicked"), "{what}: {outcome:#?}");
    let line = outcome.stderr.strip_suffix('\n').unwrap_or(&outcome.stderr);
    assert!(!line.contains('\n'), "{what}: more than one line: {line}");
    assert!(line.starts_with("readygate: "), "{what}: {line}");
    assert!(
        line.contains(fault),
        "{what}: {line:?} should mention {fault:?}"
    );
}

/// Runs `readygate ARGS` with `env` set and expects a usage error naming `fault`.
#[track_caller]
fn rejects(args: &[&str], env: &[(&str, &str)], fault: &str) {
    let mut command = readygate(args);
    command.envs(env.iter().copied());
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(40).collect()).collect();
    expect_usage_error(&format!("{shown:?} {env:?}"), &command.outcome(), fault);
}

#[test]
fn every_malformed_target_form_is_named() {
    let long_label = format!("tcp://{}.example:80", "a".repeat(64));
    let long_name = format!("tcp://{}:80", ["abc"; 64].join("."));
    let long_path = format!("http://127.0.0.1/{}", "p".repeat(100_000));
    let cases: &[(&str, &str)] = &[
        ("tcp://[zz]:80", "invalid IPv6 address \"zz\""),
        ("[127.0.0.1]:80", "invalid IPv6 address"),
        ("tcp://[::1]x:80", "missing port"),
        ("tcp://", "missing port"),
        ("tcp://h", "missing port"),
        ("tcp://h:", "missing port"),
        ("tcp://h:-1", "invalid port \"-1\""),
        ("tcp://h:+80", "invalid port \"+80\""),
        ("tcp://h: 80", "invalid port"),
        ("[::1]:0", "port 0"),
        (" db:1", "invalid host name \" db\""),
        ("tcp://bücher.de:80", "invalid host name"),
        ("tcp://a..b:1", "invalid host name"),
        ("tcp://-a:1", "invalid host name"),
        (&long_label, "invalid host name"),
        (&long_name, "invalid host name"),
        ("h\t:1", "control characters"),
        ("\u{202e}x:1", "\\u{202e}"),
        ("http://h:0/", "port 0"),
        ("https://h:65536/", "invalid port \"65536\""),
        ("http://:80/", "missing host"),
        ("HTTP://", "invalid URL"),
        ("http://h/a b", "invalid URL"),
        ("http://[::1/", "invalid URL"),
        ("http://[fe80::1%eth0]/", "invalid"),
        (&long_path, "invalid URL"),
        ("file://", "absolute path"),
        ("file:///", "missing path"),
        ("unix://", "absolute path"),
        ("unix:///", "missing path"),
        ("unix://relative.sock", "absolute path"),
        ("grpc://", "missing port"),
        ("grpc://h:0", "port 0"),
        ("grpcs://h:65536", "invalid port"),
        ("grpc://[::1]:0/svc", "port 0"),
        ("://x", "unknown scheme \"\""),
        ("$(touch /tmp/pwned):1", "invalid host name"),
        ("postgres://app:s3cret@db/app#top", "no query or fragment"),
        ("postgres://db:0", "port 0"),
        ("redis://s3cret@cache", ":PASSWORD or USER:PASSWORD"),
        ("redis://cache:65536", "invalid port"),
        ("mysql://root:s3cret@db:0/app", "port 0"),
        ("amqp://guest:s3cret@mq:99999/vhost", "invalid port"),
        ("nats://", "missing host"),
        ("zk://zk/chroot", "takes no path"),
        ("dns://db:53", "host name only"),
        ("mongodb://db:27017", "unknown scheme \"mongodb\""),
    ];
    for (target, fault) in cases {
        rejects(&["wait", target], &[], fault);
        rejects(&["probe", target], &[], fault);
    }
    // A refused URL is named with its password hidden.
    for target in cases
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| t.contains("s3cret"))
    {
        let outcome = readygate(["probe", target]).outcome();
        assert!(!outcome.stderr.contains("s3cret"), "{outcome:#?}");
    }
    // The first bad target is named even among good ones, from the environment as well.
    rejects(&["wait", "db:1", "db:0", "db:2"], &[], "\"db:0\": port 0");
    rejects(
        &["wait"],
        &[("READYGATE_TARGETS", "db:1, http://h:99999/")],
        "invalid port \"99999\"",
    );
}

#[test]
fn every_malformed_option_value_is_named() {
    let huge_number = "9".repeat(100_000);
    let huge_status = "2".repeat(100_000);
    let huge_header_name = format!("{}: v", "X".repeat(100_000));
    let parens = "(".repeat(1000);
    let cases: &[(&[&str], &str)] = &[
        (&["-t", ""], "--timeout"),
        (&["-t", "-1s"], "'-1'"),
        (&["-t", "1e3"], "--timeout"),
        (&["-t", "99999999999999999999"], "out of range"),
        (&["-t", &huge_number], "out of range"),
        (&["-t", "18446744073709551616s"], "--timeout"),
        (
            &["-t", "18446744073709551615s"],
            "longer than the maximum, 366 days",
        ),
        (&["-t", "500000000000y"], "--timeout"),
        (&["-t", "367d"], "longer than the maximum"),
        (
            &["--interval", "9223372036854775807s"],
            "longer than the maximum",
        ),
        (
            &["-t", "0.0000000001"],
            "below 1ns (write 0 if you mean none)",
        ),
        (&["--attempt-timeout", "0.0000000001"], "below 1ns"),
        (&["-t", "∞"], "--timeout"),
        (&["-t", "1.5.2"], "--timeout"),
        (&["--attempt-timeout", ""], "--attempt-timeout"),
        (&["--interval", "abc"], "--interval"),
        (&["--max-interval", "1x"], "--max-interval"),
        (
            &["--timeout", "1s", "--attempt-timeout", "1001ms"],
            "--attempt-timeout 1s 1ms is longer than --timeout 1s",
        ),
        (&["--status", ""], "--status"),
        (&["--status", ","], "--status"),
        (&["--status", "200,"], "--status"),
        (&["--status", "200-300-400"], "--status"),
        (&["--status", "2e2"], "--status"),
        (&["--status", "65536"], "not an HTTP status"),
        (&["--status", "-"], "--status"),
        (&["--status", &huge_status], "not an HTTP status"),
        (&["-H", ""], "--header"),
        (&["-H", ":"], "invalid header name"),
        (&["-H", "X\u{1}: y"], "invalid header name"),
        (&["-H", "X: \u{7f}"], "invalid value for header x"),
        (&["-H", "Ünicode: x"], "invalid header name"),
        (&["-H", &huge_header_name], "invalid header name"),
        (&["--matches", "["], "--matches"),
        (&["--matches", "\\"], "--matches"),
        (&["--matches", "(?P<"], "--matches"),
        (&["--matches", "a{99999999}"], "size limit"),
        (&["--matches", "a{1000}{1000}"], "size limit"),
        (&["--matches", &parens], "--matches"),
        (&["--method", ""], "--method"),
        (&["--method", "DELETE"], "--method"),
        (&["--log-format", ""], "--log-format"),
        (&["--success-threshold", ""], "--success-threshold"),
        (&["--success-threshold", "-1"], "'-1'"),
        (&["--success-threshold", "1.5"], "--success-threshold"),
        (
            &["--success-threshold", "4294967296"],
            "--success-threshold",
        ),
        (&["--unix-socket", ""], "--unix-socket"),
        (&["--touch", ""], "--touch"),
        (&["--cacert", ""], "--cacert"),
        (&["--quiet", "--verbose"], "--quiet"),
        (&["--any=maybe"], "--any"),
    ];
    for (options, fault) in cases {
        let mut args = vec!["wait"];
        args.extend_from_slice(options);
        args.push("db:1");
        rejects(&args, &[], fault);
    }
}

#[test]
fn commands_and_their_combinations_are_named() {
    rejects(&[], &[], "subcommand");
    rejects(&["-t", "1s", "wait", "db:1"], &[], "'-t'");
    rejects(&["probe"], &[], "no target given");
    rejects(
        &["wait", "--on-exit", "", "db:1", "--", "true"],
        &[],
        "--on-exit",
    );
    rejects(
        &["wait", "--on-exit", "tcp://h:1", "db:1", "--", "true"],
        &[],
        "--on-exit needs an http:// or https:// URL",
    );
    rejects(
        &["probe", "db:1", "--", "true"],
        &[],
        "probe takes no command (\"true\" after --)",
    );
}

#[test]
fn every_malformed_environment_value_is_named() {
    let cases: &[(&str, &str, &str)] = &[
        ("READYGATE_TIMEOUT", "", "empty duration"),
        (
            "READYGATE_ATTEMPT_TIMEOUT",
            "fast",
            "READYGATE_ATTEMPT_TIMEOUT=\"fast\": invalid duration",
        ),
        (
            "READYGATE_INTERVAL",
            "-5",
            "READYGATE_INTERVAL=\"-5\": invalid duration",
        ),
        (
            "READYGATE_ANY",
            "maybe",
            "READYGATE_ANY=\"maybe\" is not a boolean",
        ),
        (
            "READYGATE_INVERT",
            "2",
            "READYGATE_INVERT=\"2\" is not a boolean",
        ),
        (
            "READYGATE_QUIET",
            "loud",
            "READYGATE_QUIET=\"loud\" is not a boolean",
        ),
        ("READYGATE_INSECURE", "y e s", "READYGATE_INSECURE"),
        (
            "READYGATE_SUCCESS_THRESHOLD",
            "0",
            "READYGATE_SUCCESS_THRESHOLD=\"0\"",
        ),
        (
            "READYGATE_METHOD",
            "post",
            "READYGATE_METHOD=\"post\": expected one of",
        ),
        (
            "READYGATE_LOG_FORMAT",
            "xml",
            "READYGATE_LOG_FORMAT=\"xml\"",
        ),
        ("READYGATE_STATUS", "0", "READYGATE_STATUS=\"0\""),
        ("READYGATE_MATCHES", "(", "READYGATE_MATCHES=\"(\""),
        (
            "READYGATE_HEADER",
            "nocolon",
            "READYGATE_HEADER: invalid header",
        ),
        ("READYGATE_DISABLED", "", "--"),
        ("READYGATE_TARGETS", ", ,", "no target given"),
        ("READYGATE_TARGETS", "db:1,db:0", "port 0"),
    ];
    for (key, value, fault) in cases {
        let targets: &[&str] = if *key == "READYGATE_TARGETS" {
            &["wait"]
        } else {
            &["wait", "db:1"]
        };
        if *key == "READYGATE_DISABLED" {
            // An empty switch means "not disabled": the wait runs (and fails at its deadline).
            let outcome = readygate(["wait", "-t", "100ms", &format!("tcp://{}", closed_addr())])
                .env(key, value)
                .outcome();
            outcome.expect_code(1);
            continue;
        }
        rejects(targets, &[(key, value)], fault);
    }
    rejects(
        &["wait", "db:1"],
        &[
            ("READYGATE_TIMEOUT", "1s"),
            ("READYGATE_ATTEMPT_TIMEOUT", "2s"),
        ],
        "READYGATE_ATTEMPT_TIMEOUT=\"2s\" is longer than READYGATE_TIMEOUT=\"1s\"",
    );
}

#[test]
fn non_utf8_bytes_in_options_and_environment_are_usage_errors() {
    let bad = OsStr::from_bytes(b"\xff\xfe");
    for (option, fault) in [
        ("-t", "invalid UTF-8"),
        ("-H", "invalid UTF-8"),
        ("--contains", "invalid UTF-8"),
        ("--status", "invalid UTF-8"),
        ("--matches", "invalid UTF-8"),
        ("--method", "--method"),
    ] {
        let outcome = readygate([
            OsStr::new("wait"),
            OsStr::new(option),
            bad,
            OsStr::new("db:1"),
        ])
        .outcome();
        expect_usage_error(option, &outcome, fault);
    }
    for (key, fault) in [
        ("READYGATE_TIMEOUT", "invalid UTF-8"),
        ("READYGATE_HEADER", "invalid UTF-8"),
        ("READYGATE_CONTAINS", "invalid UTF-8"),
        ("READYGATE_TARGETS", "READYGATE_TARGETS is not valid UTF-8"),
        (
            "READYGATE_DISABLED",
            "READYGATE_DISABLED is not valid UTF-8",
        ),
    ] {
        let args: &[&str] = if key == "READYGATE_TARGETS" {
            &["wait"]
        } else {
            &["wait", "db:1"]
        };
        let outcome = readygate(args).env(key, bad).outcome();
        expect_usage_error(key, &outcome, fault);
    }
    // Paths and COMMAND are the operating system's own bytes: accepted as they are.
    let closed = format!("tcp://{}", closed_addr());
    let outcome = readygate([
        OsStr::new("wait"),
        OsStr::new("-t"),
        OsStr::new("100ms"),
        OsStr::new("--touch"),
        bad,
        OsStr::new(&closed),
        OsStr::new("--"),
        bad,
    ])
    .outcome();
    outcome.expect_code(1);
}

#[test]
fn extreme_but_valid_values_never_panic() {
    let closed = format!("tcp://{}", closed_addr());
    // The longest deadline accepted.
    for timeout in ["366d", "31622400"] {
        let outcome = readygate(["wait", "--invert", "-t", timeout, &closed]).outcome();
        outcome.expect_code(0);
        assert!(!outcome.stderr.contains("panicked"), "{outcome:#?}");
    }
    // Retry delays that overflow when doubled: the deadline still ends the wait.
    let outcome = readygate([
        "wait",
        "-t",
        "500ms",
        "--interval",
        "366d",
        "--max-interval",
        "366d",
        &closed,
    ])
    .outcome_at(Duration::from_millis(500));
    outcome
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(500))
        .expect_stderr("connection refused");
    assert!(!outcome.stderr.contains("panicked"), "{outcome:#?}");
    let outcome = readygate([
        "wait",
        "-t",
        "300ms",
        "--attempt-timeout",
        "300ms",
        "--success-threshold",
        "4294967295",
        "--status",
        "100-599",
        "--any",
        &format!("http://{}/", closed_addr()),
    ])
    .outcome();
    outcome.expect_code(1).expect_stderr("connection refused");
}

/// The write end of a pipe whose read end is already closed.
fn broken_pipe() -> std::fs::File {
    use std::os::unix::io::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 returns.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors are fresh and owned here alone.
    let (reader, writer) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    drop(reader);
    writer
}

#[test]
fn a_closed_output_pipe_never_turns_into_a_crash() {
    // A reader that went away (`readygate … 2>&1 | head -0`): writes fail with EPIPE.
    let run = |args: &[&str], broken: &str| {
        let writer = broken_pipe();
        let mut command: Command = readygate(args);
        match broken {
            "stderr" => command.stderr(writer).stdout(Stdio::piped()),
            _ => command.stdout(writer).stderr(Stdio::piped()),
        };
        let output = command.output().expect("run");
        (output.status.code(), output)
    };
    let closed = format!("tcp://{}", closed_addr());
    let folder = crate::support::TempDir::new();
    let installed_into = folder.0.display().to_string();
    for (args, broken, code) in [
        (vec!["wait", "tcp://:80"], "stderr", 2),
        (vec!["wait", "-v", "-t", "200ms", &closed], "stderr", 1),
        (
            vec!["wait", "--log-format", "json", "-t", "200ms", &closed],
            "stderr",
            1,
        ),
        (vec!["probe", &closed], "stdout", 1),
        (
            vec!["wait", "--invert", &closed, "--", "/no/such/command"],
            "stderr",
            127,
        ),
        (vec!["--help"], "stdout", 0),
        (vec!["install", "/no/such/folder"], "stderr", 2),
        (vec!["install", &installed_into], "stderr", 0),
    ] {
        let (status, output) = run(&args, broken);
        assert_eq!(
            status,
            Some(code),
            "{args:?} with {broken} closed: {output:?}"
        );
    }
}

#[test]
fn closed_standard_fds_are_opened_on_dev_null() {
    if crate::support::skip_under_qemu(
        "binfmt_misc opens the binary for qemu on the lowest free descriptor, the closed stdin",
    ) {
        return;
    }
    // A parent that closed stdin and stderr (`readygate … <&- 2>&-`): readygate opens /dev/null
    // there before anything else, so none of its sockets or files becomes fd 0 or 2, and
    // COMMAND inherits /dev/null on them.
    use std::os::unix::process::CommandExt;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target = format!("tcp://{}", listener.local_addr().unwrap());
    let mut command = readygate([
        "wait",
        "-v",
        &target,
        "--",
        "readlink",
        "/proc/self/fd/0",
        "/proc/self/fd/2",
    ]);
    command.stdout(Stdio::piped());
    // SAFETY: close is async-signal-safe, as a pre_exec hook requires.
    unsafe {
        command.pre_exec(|| {
            libc::close(0);
            libc::close(2);
            Ok(())
        })
    };
    let output = command.output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "/dev/null\n/dev/null\n"
    );
}

#[test]
fn a_huge_grace_period_is_a_usage_error_not_a_panic() {
    let dir = crate::support::TempDir::new();
    let state = dir.join("state");
    let outcome = readygate(["sidecar", "legacy", "--state", state.to_str().unwrap()])
        .args(["--grace", "9223372036854775807s", "--", "true"])
        .outcome();
    expect_usage_error("--grace", &outcome, "--grace");
    assert!(outcome.stderr.contains("366 days"), "{outcome:#?}");
}

#[test]
fn an_environment_without_file_descriptors_is_a_failure_not_a_usage_error() {
    use std::os::unix::process::CommandExt;
    let closed = format!("tcp://{}", closed_addr());
    let mut command = readygate(["wait", "-t", "1s", &closed]);
    // SAFETY: fcntl, close and setrlimit only, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            // A descriptor the test process inherited without close-on-exec (`/usr/bin/time -o`
            // leaves its file open) would otherwise hold 3 and leave the loader none.
            for fd in 3..64 {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                    libc::close(fd);
                }
            }
            let limit = libc::rlimit {
                rlim_cur: 4,
                rlim_max: 4,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
    let outcome = command.outcome();
    outcome
        .expect_code(1)
        .expect_stderr("readygate: cannot start: too many open files");
    assert!(!outcome.stderr.contains("panicked"), "{outcome:#?}");
}
