//! readygate called `wait-for-it`, differentially: each argument list runs at the same time
//! through Debian's real script and through a link named `wait-for-it` to readygate, against
//! the same listeners, and the two must agree on exit status, whether the command ran (its
//! stdout) and what they printed on stderr — elapsed seconds aside, as readygate retries faster
//! than the script's once a second. The few deliberate differences have their own tests.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::run::{finish, Outcome, RunExt};
use crate::support::{closed_addr, free_port, require, wait_until, Running, TempDir};

/// The command after `--`: proves it ran (stdout) and passes its own status on.
const COMMAND: [&str; 4] = ["--", "sh", "-c", "echo ran; exit 3"];

/// Both tools under one name: links to the real script and to readygate in a temp folder.
struct Tools {
    dir: TempDir,
}

impl Tools {
    fn new() -> Tools {
        // Debian's `wait-for-it` package: the real script.
        let real = require("wait-for-it");
        let dir = TempDir::new();
        let ours = PathBuf::from(env!("CARGO_BIN_EXE_readygate"));
        for (side, target) in [("real", real), ("ours", ours)] {
            std::fs::create_dir(dir.join(side)).unwrap();
            for name in ["wait-for-it", "wait-for-it.sh"] {
                std::os::unix::fs::symlink(&target, dir.join(side).join(name)).unwrap();
            }
        }
        Tools { dir }
    }

    fn path(&self, side: &str, name: &str) -> PathBuf {
        self.dir.join(side).join(name)
    }

    /// `args` through the tool of `side` called `name`, running.
    fn spawn(&self, side: &str, name: &str, args: &[String]) -> Running {
        Running::spawn(Command::new(self.path(side, name)).args(args))
    }

    /// Runs `args` through both tools called `name`, at the same time; (real, ours).
    fn run(&self, name: &str, args: &[String]) -> (Outcome, Outcome) {
        let spawn = |side| {
            Command::new(self.path(side, name))
                .args(args)
                .stdin(Stdio::null())
                .spawn_captured()
        };
        let (real, real_started) = spawn("real");
        let (ours, ours_started) = spawn("ours");
        (finish(real, real_started), finish(ours, ours_started))
    }

    /// Runs every argument list through both tools at once; the pairs in the same order.
    fn run_all(&self, name: &str, cases: &[Vec<String>]) -> Vec<(Outcome, Outcome)> {
        thread::scope(|scope| {
            let runs: Vec<_> = cases
                .iter()
                .map(|args| scope.spawn(move || self.run(name, args)))
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        })
    }
}

/// An argument list from words.
fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

/// `words` followed by the marker command.
fn with_command(words: &[&str]) -> Vec<String> {
    let mut list = args(words);
    list.extend(args(&COMMAND));
    list
}

/// stderr with the seconds of "is available after N seconds" blanked.
fn normalise(stderr: &str) -> String {
    stderr
        .lines()
        .map(|line| match line.split_once(" is available after ") {
            Some((head, tail)) if tail.ends_with(" seconds") => {
                format!("{head} is available after N seconds")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Panics unless both runs agree on status, stdout and (normalised) stderr.
#[track_caller]
fn agree(args: &[String], (real, ours): &(Outcome, Outcome)) {
    let context = format!("wait-for-it {args:?}\nreal: {real:#?}\nours: {ours:#?}");
    assert_eq!(ours.code, real.code, "exit status differs for {context}");
    assert_eq!(ours.stdout, real.stdout, "stdout differs for {context}");
    assert_eq!(
        normalise(&ours.stderr),
        normalise(&real.stderr),
        "stderr differs for {context}"
    );
}

/// Each side's stderr without its own diagnostic lines (bash's `line N:` errors, readygate's
/// exec errors and warnings), which are known to differ; the pair otherwise as `agree`.
#[track_caller]
fn agree_apart_from_diagnostics(args: &[String], (real, ours): &(Outcome, Outcome)) {
    let strip = |outcome: &Outcome, noise: &dyn Fn(&str) -> bool| Outcome {
        code: outcome.code,
        stdout: outcome.stdout.clone(),
        stderr: outcome
            .stderr
            .lines()
            .filter(|line| !noise(line))
            .map(|line| format!("{line}\n"))
            .collect(),
        elapsed: outcome.elapsed,
    };
    let real = strip(real, &|line| {
        line.starts_with('/') && line.contains(": line ")
    });
    let ours = strip(ours, &|line| {
        line.starts_with("readygate: cannot run ") || line.contains("is not a whole number")
    });
    agree(args, &(real, ours));
}

#[test]
fn open_port_in_every_host_and_port_form() {
    let tools = Tools::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let hostport = format!("127.0.0.1:{port}");
    let cases = [
        with_command(&[&hostport]),
        with_command(&["-h", "127.0.0.1", "-p", &port]),
        with_command(&["--host=127.0.0.1", "--port=", &hostport]),
        with_command(&["--host=127.0.0.1", &format!("--port={port}")]),
        with_command(&["-p", &port, "-h", "127.0.0.1"]),
        with_command(&[&format!("localhost:{port}")]),
        with_command(&["-h", "127.0.0.1", "-p", &format!("+{port}")]),
        with_command(&["-h", "127.0.0.1", "-p", &format!("0{port}")]),
        args(&[&hostport]),
        args(&["-t", "0", &hostport]),
    ];
    for (args, pair) in cases.iter().zip(tools.run_all("wait-for-it", &cases)) {
        agree(args, &pair);
        let ours = &pair.1;
        if args.iter().any(|arg| arg == "--") {
            ours.expect_code(3);
            assert_eq!(ours.stdout, "ran\n");
        } else {
            ours.expect_code(0);
        }
        ours.expect_stderr("is available after 0 seconds")
            .expect_faster_than(Duration::from_secs(5));
    }
}

#[test]
fn open_port_with_quiet_strict_and_odd_commands() {
    let tools = Tools::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let hostport = listener.local_addr().unwrap().to_string();
    let cases = [
        with_command(&["-q", &hostport]),
        with_command(&["--quiet", "--strict", &hostport]),
        with_command(&["-s", &hostport]),
        args(&[&hostport, "--", "", "echo", "ran"]),
        args(&[&hostport, "--"]),
        // An empty value ends the script's argument loop: `--` is never read.
        with_command(&[&hostport, "-t", ""]),
        with_command(&["--child", &hostport]),
    ];
    let pairs = tools.run_all("wait-for-it", &cases);
    for (args, pair) in cases.iter().zip(&pairs) {
        agree(args, pair);
    }
    assert_eq!(pairs[0].1.stderr, "", "-q printed something");
    pairs[2].1.expect_code(3).expect_stdout("ran");
    for pair in &pairs[3..] {
        pair.1.expect_code(0);
        assert_eq!(pair.1.stdout, "", "a command ran: {:#?}", pair.1);
    }
}

#[test]
fn closed_port_times_out_with_124_and_runs_the_command_unless_strict() {
    let tools = Tools::new();
    let hostport = closed_addr().to_string();
    let cases = [
        args(&["-t", "1", &hostport]),
        with_command(&["-t", "1", &hostport]),
        with_command(&["-s", "-t", "1", &hostport]),
        with_command(&["--strict", "--timeout=1", "-q", &hostport]),
        with_command(&["-h", "127.0.0.1", "-p", "0", "-t", "1"]),
    ];
    let pairs = tools.run_all("wait-for-it", &cases);
    for (args, pair) in cases.iter().zip(&pairs) {
        agree(args, pair);
        pair.1
            .expect_slower_than(Duration::from_millis(950))
            .expect_faster_than(Duration::from_secs(4));
    }
    pairs[0]
        .1
        .expect_code(124)
        .expect_stderr("timeout occurred after waiting 1 seconds for");
    pairs[1].1.expect_code(3).expect_stdout("ran");
    pairs[2]
        .1
        .expect_code(124)
        .expect_stderr("strict mode, refusing to execute subprocess");
    assert_eq!(pairs[3].1.stderr, "");
    assert_eq!(pairs[3].1.stdout, "");
}

#[test]
fn late_port_with_and_without_timeouts() {
    let tools = Tools::new();
    let port = free_port();
    let hostport = format!("127.0.0.1:{port}");
    let cases = [
        with_command(&["-t", "0", &hostport]),
        with_command(&["-s", "-t", "5", &hostport]),
        with_command(&["-s", "-t", "1", &hostport]),
        // Not a number to bash: the script waits with no timeout at all.
        with_command(&["-s", "-t", "1s", &hostport]),
    ];
    // Every case runs through both tools at once. The port opens once all have said they
    // wait and both `-t 1` runs have timed out: late for every run, whatever the machine's pace.
    let mut runs: Vec<(Running, Running)> = cases
        .iter()
        .map(|args| {
            (
                tools.spawn("real", "wait-for-it", args),
                tools.spawn("ours", "wait-for-it", args),
            )
        })
        .collect();
    for (real, ours) in &mut runs {
        real.line("waiting");
        ours.line("waiting");
    }
    let (real, ours) = runs.remove(2);
    let timed_out = (real.finish(), ours.finish());
    let _listener = TcpListener::bind(("127.0.0.1", port)).expect("bind the late port");
    let opened = Instant::now();
    // For each run of ours: how long after its start the port opened.
    let mut opened_after: Vec<Duration> = runs
        .iter()
        .map(|(_, ours)| opened.duration_since(ours.started()))
        .collect();
    opened_after.insert(2, Duration::ZERO);
    let mut pairs: Vec<(Outcome, Outcome)> = runs
        .into_iter()
        .map(|(real, ours)| (real.finish(), ours.finish()))
        .collect();
    pairs.insert(2, timed_out);
    for ((args, pair), after) in cases.iter().zip(&pairs).zip(&opened_after) {
        agree_apart_from_diagnostics(args, pair);
        pair.1.expect_faster_than(*after + Duration::from_secs(4));
    }
    for ready in [0, 1, 3] {
        pairs[ready]
            .1
            .expect_code(3)
            .expect_stdout("ran")
            .expect_slower_than(opened_after[ready]);
    }
    pairs[2].1.expect_code(124);
    assert_eq!(pairs[2].1.stdout, "");
    pairs[3].1.expect_stderr(
        "wait-for-it: timeout \"1s\" is not a whole number of seconds: waiting without a timeout",
    );
    pairs[0]
        .1
        .expect_stderr("waiting for 127.0.0.1:")
        .expect_stderr("without a timeout");
}

#[test]
fn usage_errors_exit_1_with_the_usage_text() {
    let tools = Tools::new();
    let cases = [
        args(&[]),
        args(&["--help"]),
        args(&["db"]),
        args(&["-q", "db"]),
        args(&["--host", "127.0.0.1", "--port", "1"]),
        args(&["-qs", "127.0.0.1:1"]),
        args(&["127.0.0.1:"]),
        args(&[":80"]),
        args(&["-h", "127.0.0.1"]),
        args(&["-p", "80"]),
        args(&["-q", "-p", "80"]),
        args(&["127.0.0.1:1", "-h"]),
        args(&["-p", "80", "--host="]),
    ];
    for name in ["wait-for-it", "wait-for-it.sh"] {
        for (args, pair) in cases.iter().zip(tools.run_all(name, &cases)) {
            agree(args, &pair);
            pair.1
                .expect_code(1)
                .expect_stderr(&format!("Usage:\n    {name} host:port [-s]"));
        }
    }
}

#[test]
fn the_name_wait_for_it_sh_prefixes_its_messages() {
    let tools = Tools::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let hostport = listener.local_addr().unwrap().to_string();
    let cases = [
        args(&[&hostport]),
        args(&["-t", "1", &closed_addr().to_string()]),
    ];
    let pairs = tools.run_all("wait-for-it.sh", &cases);
    for (args, pair) in cases.iter().zip(&pairs) {
        agree(args, pair);
    }
    pairs[0].1.expect_code(0).expect_stderr(&format!(
        "wait-for-it.sh: waiting 15 seconds for {hostport}"
    ));
    pairs[1].1.expect_code(124);
}

#[test]
fn a_command_that_cannot_run_exits_127_or_126() {
    let tools = Tools::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let hostport = listener.local_addr().unwrap().to_string();
    let not_executable = tools.dir.join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\necho ran\n").unwrap();
    let cases = [
        args(&[&hostport, "--", "no-such-command-anywhere"]),
        args(&[&hostport, "--", not_executable.to_str().unwrap()]),
    ];
    let pairs = tools.run_all("wait-for-it", &cases);
    for (args, pair) in cases.iter().zip(&pairs) {
        agree_apart_from_diagnostics(args, pair);
    }
    pairs[0]
        .1
        .expect_code(127)
        .expect_stderr("command not found");
    pairs[1]
        .1
        .expect_code(126)
        .expect_stderr("permission denied");
}

/// A deliberate difference: the script re-invokes itself as `--host=$HOST`, which its own
/// `*:*` case then splits, so an IPv6 HOST with a timeout never becomes available.
#[test]
fn an_ipv6_host_works_where_the_script_breaks_it() {
    let tools = Tools::new();
    let listener = TcpListener::bind("[::1]:0").expect("::1 is needed for this test");
    let port = listener.local_addr().unwrap().port().to_string();
    let no_timeout = args(&["-h", "::1", "-p", &port, "-t", "0"]);
    let timed = args(&["-h", "::1", "-p", &port, "-t", "1"]);
    let pairs = tools.run_all("wait-for-it", &[no_timeout.clone(), timed]);
    agree(&no_timeout, &pairs[0]);
    let (real, ours) = &pairs[1];
    real.expect_code(124)
        .expect_stderr(&format!("waiting 1 seconds for --host=:{port}"));
    ours.expect_code(0)
        .expect_stderr(&format!("wait-for-it: waiting 1 seconds for ::1:{port}\n"))
        .expect_stderr(&format!("::1:{port} is available after 0 seconds"));
}

#[test]
fn sigterm_while_waiting_exits_143_without_running_the_command() {
    let tools = Tools::new();
    let hostport = closed_addr().to_string();
    let mut list = args(&["-t", "0", &hostport]);
    list.extend(args(&COMMAND));
    let mut running = tools.spawn("ours", "wait-for-it", &list);
    running.line("waiting for");
    // It says it waits a moment before its handler is in place.
    wait_until("a SIGTERM handler", || running.catches(libc::SIGTERM));
    running.signal(libc::SIGTERM);
    let outcome = running.finish();
    outcome
        .expect_code(143)
        .expect_faster_than(Duration::from_secs(3));
    assert_eq!(outcome.stdout, "");
}
