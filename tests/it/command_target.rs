//! `exec:COMMAND [ARG]...` targets: real programs (scripts written to a temporary folder, `true`,
//! `false`, `sleep`, `cat`) run through readygate once per attempt, without a shell; exit 0 is
//! ready, the last line they write is the reason, and nothing they start outlives the attempt.

use std::path::Path;
use std::time::Duration;

use crate::support::measure::measured;
use crate::support::run::RunExt;
use crate::support::served::Served;
use crate::support::{readygate, wait_until, write_executable, Running, TempDir};

/// A script that starts a grandchild (`sleep`) in its own process group and writes its PID, and
/// its own, to the file named by $1 (a line per run); then does what $2 says: `exit N`, or
/// `hang` (wait for the grandchild).
const FORKS: &str = "#!/bin/sh
sleep 300 &
echo \"$! $$\" >> \"$1\"
echo started
case \"$2\" in
  hang) wait ;;
  *) exit \"$2\" ;;
esac
";

/// The folder of a test, with the script [`FORKS`] as `forks`.
fn with_forks() -> (TempDir, String) {
    let dir = TempDir::new();
    write_executable(&dir.join("forks"), FORKS);
    let script = dir.join("forks").display().to_string();
    (dir, script)
}

/// The PIDs each run of [`FORKS`] wrote: (grandchild, the script itself).
fn pids(file: &Path) -> Vec<(u32, u32)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let pair = |line: &str| {
        let (a, b) = line.split_once(' ')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    };
    text.lines().filter_map(pair).collect()
}

/// Whether process `pid` still runs: neither gone nor a zombie (killed, not reaped yet by the
/// init process it was handed to).
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    !state.is_some_and(|rest| rest.starts_with('Z') || rest.starts_with('X'))
}

/// Fails the test unless every process of `pids` is gone within a few seconds.
#[track_caller]
fn expect_gone(pids: &[(u32, u32)]) {
    assert!(!pids.is_empty(), "the script never ran");
    for &(grandchild, script) in pids {
        wait_until(&format!("grandchild {grandchild} to be gone"), || {
            !alive(grandchild)
        });
        wait_until(&format!("script {script} to be gone"), || !alive(script));
    }
}

#[test]
fn exit_0_is_ready_and_a_failure_is_retried_with_its_last_line_as_the_reason() {
    let dir = TempDir::new();
    let count = dir.join("count");
    // Fails twice (saying so on stderr), then succeeds.
    let script = dir.join("third-time");
    write_executable(
        &script,
        "#!/bin/sh\necho x >> \"$1\"\nn=$(wc -l < \"$1\")\n[ \"$n\" -ge 3 ] && exit 0\n\
         echo progress\necho \"not yet: $n\" >&2\nexit 7\n",
    );
    let target = format!("exec:{} {}", script.display(), count.display());
    let out = readygate(["wait", "-v", "-t", "20s", &target]).outcome();
    out.expect_code(0)
        .expect_stderr(&format!("{target}: attempt 1: exit status 7: not yet: 1"))
        .expect_stderr(&format!("{target}: attempt 2: exit status 7: not yet: 2"))
        .expect_stderr(&format!("{target}: attempt 3: ready"))
        .expect_faster_than(Duration::from_secs(10));
    // The plainest programs there are.
    readygate(["probe", "exec:true"]).outcome().expect_code(0);
    let out = readygate(["probe", "exec:false"]).outcome();
    out.expect_code(1)
        .expect_stdout("exec:false: exit status 1\n");
    // --invert: ready when the command fails.
    readygate(["probe", "--invert", "exec:false"])
        .outcome()
        .expect_code(0);
}

#[test]
fn the_reason_is_stderr_s_last_line_else_stdout_s_escaped_and_cut() {
    let dir = TempDir::new();
    let script = dir.join("says");
    write_executable(
        &script,
        "#!/bin/sh\ncase \"$1\" in\n\
         both) printf 'out 1\\nout 2\\n'; printf 'err 1\\nerr 2\\n\\n  \\n' >&2 ;;\n\
         stdout) printf 'out 1\\nout 2 without a newline' ;;\n\
         long) printf '\\033[31m'; head -c 5000 /dev/zero | tr '\\0' y; echo ;;\n\
         killed) kill -9 $$ ;;\n\
         esac\nexit 3\n",
    );
    let probe = |case: &str| {
        let target = format!("exec:{} {case}", script.display());
        let out = readygate(["probe", &target]).outcome();
        out.expect_code(1);
        let line = out
            .stdout
            .strip_prefix(&format!("{target}: "))
            .map(str::to_string);
        line.unwrap_or_else(|| panic!("{out:#?}"))
    };
    assert_eq!(probe("both"), "exit status 3: err 2\n");
    assert_eq!(probe("stdout"), "exit status 3: out 2 without a newline\n");
    let long = probe("long");
    // ESC escaped, 300 characters kept, the rest counted.
    let kept = format!("\\u{{1b}}[31m{}", "y".repeat(300 - "\\u{1b}[31m".len()));
    let more = 5000 - kept.chars().count() + "\\u{1b}[31m".len();
    assert_eq!(
        long,
        format!("exit status 3: {kept}… ({more} more characters)\n")
    );
    assert_eq!(probe("killed"), "killed by signal 9\n");
}

#[test]
fn a_program_that_cannot_run_is_a_usage_error_before_any_attempt() {
    let dir = TempDir::new();
    std::fs::write(dir.join("not-executable"), "#!/bin/sh\n").unwrap();
    write_executable(&dir.join("no-interpreter"), "#!/no/such/shell\nexit 0\n");
    let path = |name: &str| dir.join(name).display().to_string();
    let cases = [
        (
            "exec:no-such-program-here -h db".to_string(),
            "\"no-such-program-here\" not found in PATH (",
        ),
        (
            format!("exec:{}", path("not-executable")),
            "not-executable\" is not executable",
        ),
        (
            format!("exec:{}", path("no-interpreter")),
            "its interpreter \"/no/such/shell\" was not found",
        ),
        (format!("exec:{}", path("absent")), "absent\": no such file"),
    ];
    for (target, why) in &cases {
        for command in [&["wait", "-t", "30s"][..], &["probe"][..]] {
            let out = readygate(command.iter().copied().chain([target.as_str()])).outcome();
            out.expect_code(2)
                .expect_stderr(&format!("readygate: invalid target \"{target}\": "))
                .expect_stderr(why)
                .expect_faster_than(Duration::from_secs(5));
            assert!(!out.stderr.contains("waiting up to"), "{out:#?}");
        }
    }
    // serve refuses it before it listens.
    let out = readygate(["serve", "--listen", "127.0.0.1:0", &cases[0].0]).outcome();
    out.expect_code(2).expect_stderr(cases[0].1);
    // What a shell would act on is refused, not passed on as text.
    let out = readygate(["wait", "exec:pg_isready -h db && echo up"]).outcome();
    out.expect_code(2)
        .expect_stderr("exec: runs no shell, so \"&&\" would be passed");
    // A command given as several arguments: the rest is no target, and the fix is named.
    let out = readygate(["wait", "exec:mysqladmin", "ping"]).outcome();
    out.expect_code(2)
        .expect_stderr("a command target is one argument: quote it whole");
}

#[test]
fn an_attempt_that_ends_kills_the_command_and_what_it_started() {
    let (dir, forks) = with_forks();
    let file = dir.join("pids");
    let target = format!("exec:{forks} {} hang", file.display());
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-t",
        "30s",
        "--attempt-timeout",
        "300ms",
        &target,
    ]));
    // A second attempt has begun: the first, cut at its timeout, left nothing running.
    wait_until("a second attempt", || pids(&file).len() >= 2);
    let first = pids(&file)[..1].to_vec();
    expect_gone(&first);
    running.expect_running("it waits on");
    // SIGTERM ends the run and the attempt in flight: nothing of it is left either.
    running.signal(libc::SIGTERM);
    running.finish().expect_code(143);
    expect_gone(&pids(&file));
}

#[test]
fn a_deadline_or_a_probe_cuts_the_command_and_says_so() {
    let (dir, forks) = with_forks();
    let file = dir.join("pids");
    let target = format!("exec:{forks} {} hang", file.display());
    let out = readygate(["wait", "-t", "1s", &target]).outcome_at(Duration::from_secs(1));
    out.expect_code(1)
        .expect_ended_at(Duration::from_secs(1))
        // The attempt's bound is what is left of the deadline when it starts: 1.0s natively,
        // a few milliseconds less where start-up is slow (under qemu: 991ms).
        .expect_stderr(&format!("{target}: no exit within "));
    expect_gone(&pids(&file));
    let file = dir.join("probe-pids");
    let target = format!("exec:{forks} {} hang", file.display());
    let out = readygate(["probe", "--attempt-timeout", "500ms", &target])
        .outcome_at(Duration::from_millis(500));
    out.expect_code(1)
        .expect_stdout(&format!("{target}: no exit within 500ms"));
    expect_gone(&pids(&file));
}

#[test]
fn a_command_that_exits_is_judged_at_once_and_its_leftovers_are_killed() {
    let (dir, forks) = with_forks();
    // The grandchild holds the command's stdout and stderr open: its exit decides, not theirs.
    let file = dir.join("pids");
    let target = format!("exec:{forks} {} 0", file.display());
    let out = readygate(["wait", "-t", "20s", "--attempt-timeout", "10s", &target]).outcome();
    out.expect_code(0)
        .expect_faster_than(Duration::from_secs(5));
    expect_gone(&pids(&file));
    // With --any, the other target's command is still running when readygate becomes
    // COMMAND: it is killed first, so COMMAND finds it gone.
    let file = dir.join("any-pids");
    let hang = format!("exec:{forks} {} hang", file.display());
    let check = format!(
        "while [ ! -s {file} ]; do sleep 0.01; done; read g s < {file}; \
         for i in $(seq 200); do \
           case \"$(cut -d')' -f2 /proc/$g/stat 2>/dev/null)\" in ' R'*|' S'*|' D'*) sleep 0.01;; *) echo gone; exit 0;; esac; \
         done; echo alive",
        file = file.display()
    );
    let out = readygate([
        "wait",
        "-q",
        "-t",
        "20s",
        "--attempt-timeout",
        "10s",
        "--any",
        &hang,
        &format!(
            "exec:sh -c 'until [ -s {} ]; do sleep 0.01; done'",
            file.display()
        ),
        "--",
        "sh",
        "-c",
        &check,
    ])
    .outcome();
    out.expect_code(0).expect_stdout("gone");
    expect_gone(&pids(&file));
}

#[test]
fn the_command_runs_without_a_shell_with_no_stdin_and_readygate_s_environment() {
    let dir = TempDir::new();
    let script = dir.join("shows");
    write_executable(
        &script,
        "#!/bin/sh\nprintf '%s|' \"$#\" \"$@\" \"$(readlink /proc/self/fd/0)\" \"$SHOWN_VAR\" >&2\nexit 1\n",
    );
    let target = format!(
        "exec:{} 'two words' \"a \\\"quote\\\"\" '$HOME' it\\'s ''",
        script.display()
    );
    let out = readygate(["probe", &target])
        .env("SHOWN_VAR", "inherited")
        .outcome();
    out.expect_code(1)
        .expect_stdout("exit status 1: 5|two words|a \"quote\"|$HOME|it's||/dev/null|inherited|");
    // A target as the command's is not the command after --: that one runs once ready.
    let out = readygate(["wait", "-q", "exec:true", "--", "sh", "-c", "echo ran"]).outcome();
    out.expect_code(0).expect_stdout("ran");
}

#[test]
fn endless_output_is_read_in_bounded_memory() {
    // One line that never ends: read to the attempt's end, its start kept.
    let run = measured(&mut readygate([
        "probe",
        "--attempt-timeout",
        "2s",
        "-t",
        "2s",
        "exec:cat /dev/zero",
    ]));
    run.outcome
        .expect_code(1)
        .expect_stdout("exec:cat /dev/zero: no exit within 2.0s");
    run.expect_memory_under(20);
    // Lines without end, printed as fast as a pipe takes them.
    let run = measured(&mut readygate([
        "probe",
        "--attempt-timeout",
        "2s",
        "-t",
        "2s",
        "exec:yes",
    ]));
    run.outcome.expect_code(1);
    run.expect_memory_under(20);
}

#[test]
fn logs_the_termination_log_and_serve_carry_the_reason() {
    let dir = TempDir::new();
    let log = dir.join("termination-log");
    let target = "exec:sh -c 'echo nope; exit 4'";
    let out = readygate([
        "wait",
        "-t",
        "1s",
        "--log-format",
        "json",
        "--termination-log",
        &log.display().to_string(),
        target,
    ])
    .outcome();
    out.expect_code(1)
        .expect_stderr("\"event\":\"giving_up\"")
        .expect_stderr("\"reason\":\"exit status 4: nope\"");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("exit status 4: nope"), "{written}");
    // serve: each request makes one attempt per target, and answers with its reason.
    let served = Served::start(&["exec:true", "--group", &format!("db=exec:true,{target}")]);
    let ready = served.get("/ready");
    assert_eq!(ready.status, 503, "{ready:?}");
    let expected = format!("exec:true: ready\n{target}: exit status 4: nope\n");
    assert_eq!(ready.body, expected, "{ready:?}");
    let group = served.get("/ready/db");
    assert_eq!((group.status, group.body), (503, expected));
}
