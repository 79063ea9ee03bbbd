//! readygate called `wait-for` (eficode/wait-for's command line) against real listeners: the
//! statuses, the lines on stderr and the command's fate as the script documents them, HTTP
//! judged as wget judges it. The script itself is not packaged in Debian or on npm, so these
//! tests follow its usage text, its own test suite's cases and its code's behaviour.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::events::wait_until;
use crate::support::http::{Answer, HttpServer};
use crate::support::run::{finish, Outcome, RunExt};
use crate::support::{closed_addr, TempDir};

const SECOND: Duration = Duration::from_secs(1);
/// The command after `--`: proves it ran (stdout) and passes its own status on.
const COMMAND: [&str; 4] = ["--", "sh", "-c", "echo ran; exit 3"];

/// readygate under the name `wait-for` (a link in a temp folder).
struct WaitFor {
    dir: TempDir,
}

impl WaitFor {
    fn new() -> WaitFor {
        let dir = TempDir::new();
        for name in ["wait-for", "wait-for.sh"] {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_readygate"), dir.join(name)).unwrap();
        }
        WaitFor { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.join("wait-for")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(self.path());
        command.args(args).stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Outcome {
        self.command(args).outcome()
    }

    /// As [`WaitFor::run`], for a run that should end at `bound`: once more if it ended late.
    fn run_at(&self, args: &[&str], bound: Duration) -> Outcome {
        self.command(args).outcome_at(bound)
    }
}

fn with_command(args: &[&str]) -> Vec<String> {
    args.iter()
        .chain(COMMAND.iter())
        .map(|s| s.to_string())
        .collect()
}

fn run_with_command(wait_for: &WaitFor, args: &[&str]) -> Outcome {
    let args = with_command(args);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    wait_for.run(&args)
}

/// As [`run_with_command`], for a run that should time out at `bound`: once more if it ended
/// late.
fn timed_out_with_command(wait_for: &WaitFor, args: &[&str], bound: Duration) -> Outcome {
    let args = with_command(args);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    wait_for.run_at(&args, bound)
}

#[test]
fn an_open_port_runs_the_command_in_its_place() {
    let wait_for = WaitFor::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = listener.local_addr().unwrap().to_string();
    let outcome = run_with_command(&wait_for, &[&target]);
    outcome.expect_code(3).expect_faster_than(5 * SECOND);
    assert_eq!(outcome.stdout, "ran\n");
    assert_eq!(outcome.stderr, "");
    // Without a command: status 0, nothing said.
    let outcome = wait_for.run(&[&target]);
    outcome.expect_code(0);
    assert_eq!((outcome.stdout.as_str(), outcome.stderr.as_str()), ("", ""));
}

#[test]
fn a_closed_port_times_out_with_the_scripts_line_even_when_quiet() {
    let wait_for = WaitFor::new();
    let target = closed_addr().to_string();
    for quiet in [false, true] {
        let mut args = vec!["-t", "1", target.as_str()];
        if quiet {
            args.insert(0, "-q");
        }
        let outcome = timed_out_with_command(&wait_for, &args, SECOND);
        outcome.expect_code(1).expect_ended_at(SECOND);
        assert_eq!(outcome.stderr, "Operation timed out\n", "quiet: {quiet}");
        assert_eq!(outcome.stdout, "", "the command must not run");
    }
}

#[test]
fn every_spelling_of_the_timeout_is_read() {
    let wait_for = WaitFor::new();
    let spellings: [&[&str]; 6] = [
        &["-t", "1", "T"],
        &["-t1", "T"],
        &["--timeout=1", "T"],
        &["--timeout", "1", "T"],
        &["-qt1", "T"],
        &["T", "-t", "1"],
    ];
    for spelling in spellings {
        // A port closed a moment ago, fresh for each run.
        let target = closed_addr().to_string();
        let args: Vec<&str> = spelling
            .iter()
            .map(|arg| if *arg == "T" { target.as_str() } else { arg })
            .collect();
        wait_for
            .run_at(&args, SECOND)
            .expect_code(1)
            .expect_ended_at(SECOND)
            .expect_stderr("Operation timed out");
    }
}

/// An HTTP server that answers 503 until told to answer 200.
fn switchable() -> (HttpServer, Arc<AtomicBool>) {
    let up = Arc::new(AtomicBool::new(false));
    let flag = up.clone();
    let server = HttpServer::start(move |_, _| {
        Answer::status(if flag.load(Ordering::SeqCst) {
            200
        } else {
            503
        })
    });
    (server, up)
}

#[test]
fn timeout_zero_waits_without_a_deadline() {
    let wait_for = WaitFor::new();
    let (server, up) = switchable();
    let url = server.url("/ready");
    let (child, started) = wait_for.command(&["-t", "0", &url]).spawn_captured();
    // Still asking after more than one attempt: 0 is no timeout, not a single try.
    wait_until("a few attempts", || server.hits() >= 3);
    up.store(true, Ordering::SeqCst);
    let outcome = finish(child, started);
    outcome.expect_code(0);
    assert_eq!(outcome.stderr, "");
}

#[test]
fn http_waits_for_a_2xx_and_refuses_other_statuses() {
    let wait_for = WaitFor::new();
    let (server, up) = switchable();
    let url = server.url("/ready");
    let (child, started) = wait_for
        .command(
            &with_command(&["-t", "30", &url])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .spawn_captured();
    wait_until("503s answered", || server.hits() >= 2);
    up.store(true, Ordering::SeqCst);
    let outcome = finish(child, started);
    outcome.expect_code(3);
    assert_eq!(outcome.stdout, "ran\n");

    // 3xx without a place to go, 404 and 500 are wget's failures; readygate's own wait would
    // take the 304 (200-399, the kubelet's rule).
    for status in [304, 404, 500] {
        let server = HttpServer::start(move |_, _| Answer::status(status));
        let outcome = run_with_command(&wait_for, &["-t", "1", &server.url("/")]);
        outcome.expect_code(1).expect_stderr("Operation timed out");
        assert_eq!(
            outcome.stdout, "",
            "status {status} must not run the command"
        );
    }
}

#[test]
fn http_follows_redirects_to_other_hosts_as_wget_does() {
    let wait_for = WaitFor::new();
    // `localhost` is another host than `127.0.0.1` to a redirect rule.
    let good = HttpServer::start(|_, _| Answer::status(204));
    let bad = HttpServer::start(|_, _| Answer::status(503));
    let elsewhere = |server: &HttpServer| server.url("/").replace("127.0.0.1", "localhost");
    let to_good = elsewhere(&good);
    let to_bad = elsewhere(&bad);
    let via_good =
        HttpServer::start(move |_, _| Answer::status(302).header("Location", to_good.clone()));
    let via_bad =
        HttpServer::start(move |_, _| Answer::status(301).header("Location", to_bad.clone()));

    let outcome = run_with_command(&wait_for, &["-t", "5", &via_good.url("/start")]);
    outcome.expect_code(3);
    assert_eq!(outcome.stdout, "ran\n");
    assert!(good.hits() >= 1, "the redirect was not followed");

    // The redirect leads to a 503: not ready, though the 301 itself would pass the kubelet.
    let outcome = run_with_command(&wait_for, &["-t", "1", &via_bad.url("/start")]);
    outcome.expect_code(1).expect_stderr("Operation timed out");
    assert!(bad.hits() >= 1, "the redirect was not followed");

    // An endless chain is never ready, and ends at the timeout.
    let looping =
        HttpServer::start(|_, hit| Answer::status(302).header("Location", format!("/hop{hit}")));
    timed_out_with_command(&wait_for, &["-t", "1", &looping.url("/")], SECOND)
        .expect_code(1)
        .expect_ended_at(SECOND);
}

#[test]
fn bad_command_lines_exit_as_the_script_does_with_its_usage_text() {
    let wait_for = WaitFor::new();
    let path = wait_for.path();
    let usage = format!(
        "Usage:\n  {} host:port|url [-t timeout] [-- command args]\n",
        path.display()
    );
    let target = closed_addr().to_string();
    for (args, code, first_line) in [
        (
            vec![],
            2,
            Some("Error: you need to provide a host and port to test."),
        ),
        (vec!["-q"], 2, None),
        (
            vec!["db:"],
            2,
            Some("Error: you need to provide a host and port to test."),
        ),
        (
            vec!["-t", "-1", &target],
            3,
            Some("Error: invalid timeout '-1'"),
        ),
        (
            vec!["-t", "soon", &target],
            3,
            Some("Error: invalid timeout 'soon'"),
        ),
        (vec!["-q", "-t", "1.5", &target], 3, None),
        (
            vec!["-t", "--", &target],
            3,
            Some("Error: invalid timeout '--'"),
        ),
        (vec!["-x", &target], 1, Some("Unknown option: -x")),
        (
            vec!["-q", "--bogus", &target],
            1,
            Some("Unknown option: --bogus"),
        ),
        (
            vec![&target, "/app/server"],
            1,
            Some("Unknown argument: /app/server"),
        ),
        (vec!["--help", &target], 0, None),
    ] {
        let outcome = run_with_command(&wait_for, &args);
        outcome.expect_code(code).expect_faster_than(5 * SECOND);
        assert_eq!(outcome.stdout, "", "{args:?}: the command must not run");
        let expected = match first_line {
            Some(line) => format!("{line}\n{usage}"),
            None => usage.clone(),
        };
        assert!(
            outcome.stderr.starts_with(&expected),
            "{args:?}: {:?}",
            outcome.stderr
        );
        assert!(outcome.stderr.contains("zero for no timeout"), "{args:?}");
    }
}

#[test]
fn version_and_the_sh_name() {
    let wait_for = WaitFor::new();
    for flag in ["-v", "--version"] {
        let outcome = wait_for.run(&[flag]);
        outcome.expect_code(0);
        assert!(
            outcome.stdout.starts_with("2.2.4 (readygate "),
            "{}",
            outcome.stdout
        );
        assert_eq!(outcome.stderr, "");
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = listener.local_addr().unwrap().to_string();
    let outcome = Command::new(wait_for.dir.join("wait-for.sh"))
        .args(with_command(&[&target]))
        .outcome();
    outcome.expect_code(3);
    assert_eq!(outcome.stdout, "ran\n");
}

#[test]
fn a_port_that_can_never_open_times_out_like_any_other() {
    let wait_for = WaitFor::new();
    for target in [
        "127.0.0.1:0",
        "127.0.0.1:99999",
        "127.0.0.1:no-such-service",
    ] {
        let outcome = timed_out_with_command(&wait_for, &["-t", "1", target], SECOND);
        outcome.expect_code(1).expect_ended_at(SECOND);
        assert_eq!(outcome.stderr, "Operation timed out\n", "{target}");
    }
}
