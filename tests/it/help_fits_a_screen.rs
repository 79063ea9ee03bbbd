//! Help that fits a screen: `-h` is at most 40 lines per command, grouped under headings; every
//! help line fits the terminal (100 columns when there is none, as here); `--help` and the man
//! page end with EXAMPLES, whose readygate command lines the binary accepts.

use std::path::Path;

use crate::support::readygate;
use crate::support::run::RunExt;

/// Every command a user runs.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["wait"],
    &["probe"],
    &["serve"],
    &["install"],
    &["sidecar"],
    &["sidecar", "native"],
    &["sidecar", "legacy"],
    &["completions"],
];

/// `readygate COMMAND FLAG`'s stdout, run without a terminal; `COLUMNS` as given, if at all.
fn help(command: &[&str], flag: &str, columns: Option<&str>) -> String {
    let mut run = readygate(command.iter().chain([&flag]));
    run.env_remove("COLUMNS");
    if let Some(columns) = columns {
        run.env("COLUMNS", columns);
    }
    let outcome = run.outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stderr, "", "{command:?} {flag}");
    outcome.stdout
}

/// The widest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

#[test]
fn short_help_fits_a_screen_and_every_line_fits_100_columns() {
    for command in COMMANDS {
        let short = help(command, "-h", None);
        let lines = short.lines().count();
        assert!(lines <= 40, "{command:?} -h is {lines} lines:\n{short}");
        assert!(widest(&short) <= 100, "{command:?} -h:\n{short}");
        let long = help(command, "--help", None);
        assert!(widest(&long) <= 100, "{command:?} --help:\n{long}");
        assert!(
            long.lines().count() > lines,
            "{command:?}: --help is no longer than -h"
        );
    }
}

#[test]
fn help_wraps_to_the_width_the_terminal_gives() {
    for command in [&["wait"][..], &["serve"]] {
        for flag in ["-h", "--help"] {
            let text = help(command, flag, Some("70"));
            assert!(
                widest(&text) <= 70,
                "{command:?} {flag} at 70 columns:\n{text}"
            );
        }
    }
    // Wider than 100: still 100, a width a line can be read at.
    let text = help(&["wait"], "--help", Some("300"));
    assert!((90..=100).contains(&widest(&text)), "{text}");
}

#[test]
fn short_help_groups_the_options_and_says_where_the_rest_is() {
    let short = help(&["wait"], "-h", None);
    for heading in ["Timing:", "HTTP:", "TLS:", "Output:", "Process:"] {
        assert!(
            short.lines().any(|line| line == heading),
            "no {heading}:\n{short}"
        );
    }
    for common in [
        "--timeout",
        "--status",
        "--insecure",
        "--verbose",
        "--on-exit",
    ] {
        assert!(short.contains(common), "-h lacks {common}:\n{short}");
    }
    // Less common options are in --help only.
    for rare in [
        "--k8s-serviceaccount-dir",
        "--tls-server-name",
        "--max-interval",
    ] {
        let listed = |text: &str| text.lines().any(|line| line.trim_start().starts_with(rare));
        assert!(!listed(&short), "-h lists {rare}");
        assert!(
            help(&["wait"], "--help", None).contains(rare),
            "--help lacks {rare}"
        );
    }
    assert!(
        short.trim_end().ends_with("readygate wait --help"),
        "{short}"
    );
}

#[test]
fn long_help_and_the_man_page_end_with_examples() {
    for command in COMMANDS.iter().filter(|c| *c != &["completions"]) {
        let long = help(command, "--help", None);
        let examples = long
            .split("\nExamples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{command:?} --help has no Examples:\n{long}"));
        assert!(
            examples.contains("readygate") || examples.contains("args: ["),
            "{examples}"
        );
        assert!(
            !examples.contains("\n\n"),
            "Examples are not the end: {examples}"
        );
    }
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/readygate.1"))
            .expect("docs/readygate.1");
    let last = page.rsplit("\n.SH ").next().unwrap();
    assert!(
        last.starts_with("EXAMPLES\n"),
        "the man page ends with {last:.100}"
    );
    for recipe in [
        "postStart",
        "startupProbe",
        "install, /shared",
        "sidecar, native",
    ] {
        assert!(
            last.contains(recipe),
            "the man page's EXAMPLES lack {recipe}"
        );
    }
}

#[test]
fn every_wait_and_probe_in_the_examples_is_a_command_line_readygate_accepts() {
    let all = help(&[], "--help", None);
    let examples = all
        .split("\nExamples:\n")
        .nth(1)
        .expect("readygate --help has Examples");
    let mut ran = 0;
    for line in examples.lines() {
        // `command: [/shared/readygate, wait, …]` or an image's `args: [wait, …]`.
        let Some(list) = line
            .split('[')
            .nth(1)
            .and_then(|rest| rest.split(']').next())
        else {
            continue;
        };
        let words: Vec<&str> = list.split(", ").collect();
        let words = match words.first() {
            Some(first) if first.ends_with("readygate") => &words[1..],
            _ if line.trim_start().starts_with("args:") => &words[..],
            _ => continue,
        };
        if !matches!(words.first(), Some(&"wait") | Some(&"probe")) {
            continue;
        }
        // Parsed and planned as written, but nothing waited for or run.
        let mut words: Vec<&str> = words.to_vec();
        if let Some(dashes) = words.iter().position(|word| *word == "--") {
            words.truncate(dashes + 1);
            words.push("true");
        }
        let outcome = readygate(&words)
            .env("READYGATE_DISABLED", "true")
            .outcome();
        assert_eq!(outcome.code, Some(0), "{words:?}: {outcome:#?}");
        ran += 1;
    }
    assert!(ran >= 4, "only {ran} command lines found in:\n{examples}");
}
