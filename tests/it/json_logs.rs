//! `--log-format json`: every line of a real run parses as JSON and carries the documented
//! fields (docs/cli.md "JSON log lines"): the event, the target (secrets hidden), the attempt,
//! the elapsed time, the reason and the exit status where they apply.

use serde_json::Value;

use crate::support::http::{Answer, HttpServer};
use crate::support::hung_mount::HungMount;
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate, Running};

/// The events docs/cli.md documents: the first column of its JSON events table.
fn documented_events() -> Vec<String> {
    let docs = include_str!("../../docs/cli.md");
    let section = docs
        .split("### JSON log lines")
        .nth(1)
        .expect("docs/cli.md has a JSON log lines section");
    let table = section
        .split("\n#")
        .next()
        .unwrap()
        .split("Events:\n")
        .nth(1)
        .unwrap();
    let events: Vec<String> = table
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .map(str::to_string)
        .collect();
    assert!(events.len() > 10, "{events:?}");
    events
}

/// Every stderr line of a run, parsed, after checking the fields every line has.
#[track_caller]
fn parsed(stderr: &str) -> Vec<Value> {
    let events = documented_events();
    let lines: Vec<Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect();
    assert!(!lines.is_empty(), "no lines");
    for line in &lines {
        let event = line["event"]
            .as_str()
            .unwrap_or_else(|| panic!("no event: {line}"));
        assert!(
            events.iter().any(|e| e == event),
            "undocumented event: {line}"
        );
        assert!(
            line["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{line}"
        );
        assert!(line["level"].is_string(), "{line}");
        assert!(line["message"].is_string(), "{line}");
        assert!(line["elapsed_ms"].is_u64(), "{line}");
        for (field, number) in [("attempt", true), ("status", true), ("target", false)] {
            let value = &line[field];
            let typed = if number {
                value.is_u64()
            } else {
                value.is_string()
            };
            assert!(value.is_null() || typed, "{field} mistyped: {line}");
        }
        assert!(
            line["reason"].is_null() || line["reason"].is_string(),
            "{line}"
        );
    }
    lines
}

/// The lines of `lines` about `event`.
fn of<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["event"] == event).collect()
}

#[test]
fn a_wait_that_becomes_ready_logs_its_attempts_and_the_ready_target() {
    let server = HttpServer::start(|_, hit| Answer::status(if hit == 0 { 503 } else { 200 }));
    let url = server.url("/").replace("http://", "http://ops:hunter2@");
    let outcome = readygate(["wait", "-v", "--log-format", "json", "-H"])
        .args(["Authorization: Bearer s3cr3t-t0ken", &url])
        .outcome();
    outcome.expect_code(0);
    for secret in ["hunter2", "s3cr3t-t0ken"] {
        assert!(!outcome.stderr.contains(secret), "{}", outcome.stderr);
    }
    let lines = parsed(&outcome.stderr);
    let shown = url.replace("hunter2", "***");
    let waiting = of(&lines, "waiting");
    assert_eq!(waiting.len(), 1, "{}", outcome.stderr);
    assert_eq!(waiting[0]["level"], "INFO");
    assert!(waiting[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("waiting up to 60.0s"));

    let attempts = of(&lines, "attempt");
    assert_eq!(attempts.len(), 2, "{}", outcome.stderr);
    assert_eq!(attempts[0]["attempt"], 1);
    assert_eq!(attempts[0]["target"], shown.as_str());
    assert_eq!(attempts[0]["reason"], "status 503");
    assert_eq!(attempts[0]["level"], "DEBUG");
    assert_eq!(attempts[1]["attempt"], 2);
    assert!(attempts[1]["reason"].is_null(), "{}", attempts[1]);

    let ready = of(&lines, "ready");
    assert_eq!(ready.len(), 1, "{}", outcome.stderr);
    assert_eq!(ready[0]["target"], shown.as_str());
    assert_eq!(ready[0]["attempt"], 2);
    let elapsed = ready[0]["elapsed_ms"].as_u64().unwrap();
    assert!(
        elapsed <= outcome.elapsed.as_millis() as u64,
        "{elapsed} ms"
    );
    assert!(ready[0]["status"].is_null(), "{}", ready[0]);
}

#[test]
fn a_wait_that_gives_up_at_its_deadline_says_why_with_status_1() {
    let closed = format!("tcp://{}", closed_addr());
    let outcome = readygate(["wait", "--log-format", "json", "-t", "300ms", &closed]).outcome();
    outcome.expect_code(1);
    let lines = parsed(&outcome.stderr);
    assert_eq!(of(&lines, "waiting").len(), 1, "{}", outcome.stderr);
    let gave_up = of(&lines, "giving_up");
    assert_eq!(gave_up.len(), 1, "{}", outcome.stderr);
    let line = gave_up[0];
    assert_eq!(line["level"], "ERROR");
    assert_eq!(line["target"], closed.as_str());
    assert_eq!(line["status"], 1);
    assert!(line["attempt"].as_u64().unwrap() >= 1, "{line}");
    let reason = line["reason"].as_str().unwrap();
    assert!(reason.starts_with("connection refused"), "{line}");
    let message = line["message"].as_str().unwrap();
    assert!(
        message.starts_with("not ready after ") && message.ends_with(reason),
        "{line}"
    );
    assert!(line["elapsed_ms"].as_u64().unwrap() >= 300, "{line}");
}

#[test]
fn a_signal_is_an_event_with_the_exit_status() {
    let closed = format!("tcp://{}", closed_addr());
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "--log-format",
        "json",
        "-t",
        "60s",
        &closed,
    ]));
    running.line("\"event\":\"waiting\"");
    // SAFETY: plain kill(2) on our own child, not yet reaped.
    assert_eq!(
        unsafe { libc::kill(running.pid() as i32, libc::SIGTERM) },
        0
    );
    let ended = running.end();
    assert_eq!(ended.status.code(), Some(143), "{}", ended.outcome.stderr);
    let lines = parsed(&ended.outcome.stderr);
    let signal = of(&lines, "signal");
    assert_eq!(signal.len(), 1, "{}", ended.outcome.stderr);
    assert_eq!(signal[0]["status"], 143);
    assert_eq!(signal[0]["level"], "WARN");
    assert!(signal[0]["message"].as_str().unwrap().contains("signal 15"));
}

#[test]
fn exec_is_an_event_and_so_is_a_command_that_cannot_run() {
    let server = HttpServer::start(|_, _| Answer::status(200));
    let url = server.url("/");
    let outcome = readygate(["wait", "--log-format", "json", &url, "--", "true"]).outcome();
    outcome.expect_code(0);
    let lines = parsed(&outcome.stderr);
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["waiting", "ready", "exec"], "{}", outcome.stderr);
    assert_eq!(lines[2]["message"], "running \"true\"");

    let outcome = readygate(["wait", "--log-format", "json", &url, "--", "/no/such/app"]).outcome();
    outcome.expect_code(127);
    let lines = parsed(&outcome.stderr);
    let exec = of(&lines, "exec");
    assert_eq!(exec.len(), 2, "{}", outcome.stderr);
    assert_eq!(exec[1]["status"], 127);
    assert_eq!(exec[1]["level"], "ERROR");
    assert_eq!(exec[1]["reason"], "command not found");
}

#[test]
fn with_several_targets_each_ready_line_names_its_own() {
    let (one, two) = (
        HttpServer::start(|_, _| Answer::status(200)),
        HttpServer::start(|_, _| Answer::status(200)),
    );
    let (one, two) = (one.url("/one"), two.url("/two"));
    let outcome = readygate(["wait", "--log-format", "json", &one, &two]).outcome();
    outcome.expect_code(0);
    let lines = parsed(&outcome.stderr);
    let mut ready: Vec<&str> = of(&lines, "ready")
        .iter()
        .map(|line| line["target"].as_str().unwrap())
        .collect();
    ready.sort();
    let mut expected = [one.as_str(), two.as_str()];
    expected.sort();
    assert_eq!(ready, expected, "{}", outcome.stderr);

    // --any: the one ready target is ready, the closed one is neither ready nor given up on.
    let closed = format!("tcp://{}", closed_addr());
    let outcome = readygate(["wait", "--any", "--log-format", "json", &closed, &one]).outcome();
    outcome.expect_code(0);
    let lines = parsed(&outcome.stderr);
    let ready = of(&lines, "ready");
    assert_eq!(ready.len(), 1, "{}", outcome.stderr);
    assert_eq!(ready[0]["target"], one.as_str());
    assert!(of(&lines, "giving_up").is_empty(), "{}", outcome.stderr);

    // All of them, one never ready: only that one is given up on, with its reason.
    let outcome =
        readygate(["wait", "-t", "300ms", "--log-format", "json", &one, &closed]).outcome();
    outcome.expect_code(1);
    let lines = parsed(&outcome.stderr);
    assert_eq!(of(&lines, "ready")[0]["target"], one.as_str());
    let gave_up = of(&lines, "giving_up");
    assert_eq!(gave_up.len(), 1, "{}", outcome.stderr);
    assert_eq!(gave_up[0]["target"], closed.as_str());
    assert_eq!(gave_up[0]["status"], 1);
}

#[test]
fn a_command_looked_up_on_a_hung_mount_ends_in_json_lines_too() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let healthy = listener.local_addr().unwrap().to_string();
    // Its look-up given up after one attempt's time (126), then stopped by SIGTERM (143).
    let cases = [
        (
            "300ms",
            "exec",
            126,
            "no answer from the file system within 300ms",
        ),
        (
            "30s",
            "signal",
            143,
            "stopped by signal 15 while looking up the command",
        ),
    ];
    for (attempt_timeout, event, status, said) in cases {
        let Some(mut mount) = HungMount::new() else {
            return;
        };
        let app = mount.arg("app");
        let argv = ["wait", "-v", "--log-format", "json", "--attempt-timeout"];
        let mut run = readygate(
            argv.into_iter()
                .chain([attempt_timeout, &healthy, "--", &app]),
        );
        let mut running = Running::spawn(&mut run);
        running.line("\"event\":\"lookup\"");
        if event == "signal" {
            mount.asked("app");
            running.signal(libc::SIGTERM);
        }
        running.line(&format!("\"event\":\"{event}\""));
        mount.release();
        let ended = running.end();
        assert_eq!(
            ended.status.code(),
            Some(status),
            "{}",
            ended.outcome.stderr
        );
        let lines = parsed(&ended.outcome.stderr);
        let last = lines.last().unwrap();
        assert_eq!(last["event"], event, "{}", ended.outcome.stderr);
        assert_eq!(last["status"], status, "{last}");
        assert!(last["message"].as_str().unwrap().contains(said), "{last}");
    }
}

#[test]
fn usage_errors_are_json_lines_once_the_format_is_known() {
    let closed = closed_addr().to_string();
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        // Refused by the plan, the format parsed.
        (
            vec!["wait", "--log-format", "json", "--status", "500", &closed],
            None,
            "--status does nothing",
        ),
        // Refused while the command line is read: the format read from the words typed.
        (
            vec!["--log-format=json", "wait", "--bogus", &closed],
            None,
            "'--bogus'",
        ),
        (
            vec!["wait", "--log-format", "json", "-t", "1h30", &closed],
            None,
            "1h30m",
        ),
        // From the environment, before and after the command line is read.
        (
            vec!["-t", "3s", "wait", &closed],
            Some("json"),
            "put it after the command",
        ),
        (
            vec!["wait", "--contains", "x", &closed],
            Some("json"),
            "--contains does nothing",
        ),
    ];
    for (args, variable, said) in cases {
        let mut command = readygate(&args);
        if let Some(format) = variable {
            command.env("READYGATE_LOG_FORMAT", format);
        }
        let outcome = command.outcome();
        outcome.expect_code(2);
        let lines = parsed(&outcome.stderr);
        assert_eq!(lines.len(), 1, "{args:?}: {}", outcome.stderr);
        assert_eq!(lines[0]["event"], "error", "{args:?}");
        assert_eq!(lines[0]["status"], 2, "{args:?}");
        let message = lines[0]["message"].as_str().unwrap();
        assert!(message.contains(said), "{args:?}: {message}");
    }
    // An unknown format cannot be known: the one text line.
    let outcome = readygate(["wait", "--log-format", "xml", &closed]).outcome();
    outcome
        .expect_code(2)
        .expect_stderr("readygate: invalid value 'xml'");
}

#[test]
fn the_waiting_line_carries_each_targets_last_reason() {
    let server = HttpServer::start(|_, _| Answer::status(503));
    let url = server.url("/ready");
    let closed = closed_addr().to_string();
    // The line comes every 5 s: a 6 s deadline gives one.
    let args = ["wait", "--log-format", "json", "-t", "6s", &closed, &url];
    let outcome = readygate(args).outcome();
    outcome.expect_code(1);
    let lines = parsed(&outcome.stderr);
    let still: Vec<&Value> = of(&lines, "waiting")
        .into_iter()
        .filter(|line| {
            line["message"]
                .as_str()
                .unwrap()
                .starts_with("still waiting")
        })
        .collect();
    assert!(!still.is_empty(), "{}", outcome.stderr);
    let reasons = still[0]["reasons"].as_array().expect("reasons is an array");
    assert_eq!(reasons.len(), 2, "{}", still[0]);
    assert_eq!(reasons[0]["target"], closed.as_str());
    assert_eq!(reasons[0]["reason"], "connection refused");
    assert_eq!(reasons[1]["target"], url.as_str());
    assert_eq!(reasons[1]["reason"], "status 503");
}

/// The keys of one JSON line, in the order written (a `Value` keeps no order).
fn keys_in_order(line: &str) -> Vec<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some((key, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                keys.push(key);
            }
            Ok(keys)
        }
    }
    let mut reader = serde_json::Deserializer::from_str(line);
    (&mut reader)
        .deserialize_map(Keys)
        .unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

#[test]
fn every_line_writes_its_fields_in_the_documented_order() {
    // docs/cli.md's table, in its order: a line has each field it carries in this order.
    const ORDER: [&str; 9] = [
        "timestamp",
        "level",
        "event",
        "elapsed_ms",
        "target",
        "attempt",
        "status",
        "reason",
        "message",
    ];
    let closed = format!("tcp://{}", closed_addr());
    let outcome =
        readygate(["wait", "-v", "--log-format", "json", "-t", "300ms", &closed]).outcome();
    outcome.expect_code(1);
    let mut seen = std::collections::BTreeSet::new();
    for line in outcome.stderr.lines() {
        let keys = keys_in_order(line);
        let expected: Vec<&str> = ORDER
            .iter()
            .copied()
            .filter(|field| keys.iter().any(|k| k == field))
            .collect();
        assert_eq!(keys, expected, "{line}");
        seen.extend(keys);
    }
    // The run's lines, together, show every field: each was put in its place at least once.
    assert_eq!(seen.len(), ORDER.len(), "{seen:?}: {}", outcome.stderr);
}
