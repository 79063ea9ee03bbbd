use std::ffi::OsString;
use std::time::Duration;

use super::args::{parse, usage, whole_seconds, Address, WaitForInvocation, WaitForPlan};

fn run(args: &[&str]) -> WaitForInvocation {
    parse(args.iter().map(OsString::from).collect())
}

fn tcp(host: &str, port: &str) -> Address {
    Address::Tcp {
        host: host.into(),
        port: port.into(),
    }
}

fn http(url: &str) -> Address {
    Address::Http(url.into())
}

fn plan(target: Address, seconds: u64, command: &[&str]) -> WaitForInvocation {
    WaitForInvocation::Wait(WaitForPlan {
        target,
        timeout: (seconds > 0).then(|| Duration::from_secs(seconds)),
        command: command.iter().map(OsString::from).collect(),
    })
}

const MISSING: &str = "Error: you need to provide a host and port to test.";

#[test]
fn targets_timeouts_and_the_command_read_as_the_script_reads_them() {
    let cases: &[(&[&str], WaitForInvocation)] = &[
        (&["db:5432"], plan(tcp("db", "5432"), 15, &[])),
        (
            &["db:5432", "--", "echo", "hi"],
            plan(tcp("db", "5432"), 15, &["echo", "hi"]),
        ),
        (&["-t", "0", "db:1"], plan(tcp("db", "1"), 0, &[])),
        (&["-t5", "db:1"], plan(tcp("db", "1"), 5, &[])),
        (&["--timeout=7", "db:1"], plan(tcp("db", "1"), 7, &[])),
        (&["--timeout", "8", "db:1"], plan(tcp("db", "1"), 8, &[])),
        (
            &["-qt1", "db:1", "--", "x"],
            plan(tcp("db", "1"), 1, &["x"]),
        ),
        (&["db:1", "--"], plan(tcp("db", "1"), 15, &[])),
        // The last target wins; fields past the second are dropped, as `cut` does.
        (&["a:1", "b:2:3"], plan(tcp("b", "2"), 15, &[])),
        (
            &["http://h:8080/x?y"],
            plan(http("http://h:8080/x?y"), 15, &[]),
        ),
        (&["https://h/"], plan(http("https://h/"), 15, &[])),
        // A word with a colon is a target before it is an option, as in the script's `case`.
        (&["--timeout=1:2"], plan(tcp("--timeout=1", "2"), 15, &[])),
        // Words after the command's `--` are the command's, options included.
        (
            &["db:1", "--", "sh", "-t", "--", "x"],
            plan(tcp("db", "1"), 15, &["sh", "-t", "--", "x"]),
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(&run(args), expected, "{args:?}");
    }
}

#[test]
fn bad_command_lines_get_the_scripts_statuses_and_lines() {
    // More cases (no target, `-q`, `-t -1`, `-x`, `--help`) run through the binary in
    // tests/it/wait_for.rs.
    let cases: &[(&[&str], Option<&str>, u8)] = &[
        (&[":80"], Some(MISSING), 2),
        (
            &["-t", "1.5", "db:1"],
            Some("Error: invalid timeout '1.5'"),
            3,
        ),
        (&["-q", "-t", "x", "db:1"], None, 3),
        // `-t --` takes the `--` as its value.
        (
            &["-t", "--", "db:1", "--", "echo"],
            Some("Error: invalid timeout '--'"),
            3,
        ),
        // `-t` last takes the script's appended `--`; the loop then meets an empty word.
        (&["db:1", "-t"], Some("Unknown argument: "), 1),
        (&["-q", "-x"], Some("Unknown option: -x"), 1),
        (&["-q-x"], Some("Unknown option: -q-x"), 1),
        (&["--quiet=1"], Some("Unknown option: --quiet=1"), 1),
        (&["db"], Some("Unknown argument: db"), 1),
    ];
    for &(args, complaint, status) in cases {
        let expected = WaitForInvocation::Usage(complaint.map(String::from), status);
        assert_eq!(run(args), expected, "{args:?}");
    }
    for args in [&["-v"][..], &["--version"], &["-qv"], &["db:1", "-v"]] {
        assert_eq!(run(args), WaitForInvocation::Version, "{args:?}");
    }
}

#[test]
fn timeouts_are_whole_seconds_as_the_shell_compares_them() {
    for (text, seconds) in [
        ("0", Some(0)),
        ("15", Some(15)),
        (" 5 ", Some(5)),
        ("+5", Some(5)),
        ("-0", Some(0)),
        ("007", Some(7)),
        ("-1", None),
        ("", None),
        ("1.5", None),
        ("30s", None),
        ("0x10", None),
        ("99999999999999999999", None),
    ] {
        assert_eq!(whole_seconds(text), seconds, "{text:?}");
    }
}

#[test]
fn the_usage_text_names_the_command_as_called() {
    let text = usage("/usr/local/bin/wait-for");
    assert!(text.starts_with(
        "Usage:\n  /usr/local/bin/wait-for host:port|url [-t timeout] [-- command args]\n"
    ));
    assert!(text.contains(
        "\n  -t TIMEOUT | --timeout=timeout      Timeout in seconds, zero for no timeout\n"
    ));
    assert!(text.contains("\n                                      Defaults to 15 seconds\n"));
    assert!(text.ends_with("Execute command with args after the test finishes"));
}
