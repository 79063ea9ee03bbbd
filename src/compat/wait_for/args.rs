//! The wait-for command line, read as the script's `case` loop reads it: the same patterns in
//! the same order, the same words taken as values, the same statuses for what is wrong.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::time::Duration;

use super::super::{all_digits, sign};
use crate::text::one_line;

/// The version of eficode/wait-for whose command line this is.
pub(super) const SCRIPT_VERSION: &str = "2.2.4";
/// The words the script appends to its arguments: `--`, then six saved variables.
const APPENDED: usize = 7;

/// What a wait-for command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum WaitForInvocation {
    /// Print the complaint (if any), then the usage text (always), and exit with the status:
    /// 0 for `--help`, 1 for an unknown word, 2 for a missing target, 3 for a bad timeout.
    Usage(Option<String>, u8),
    /// `-v`/`--version`: print the version on stdout, exit 0.
    Version,
    /// Wait for the target, then run the command.
    Wait(WaitForPlan),
}

/// One wait.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct WaitForPlan {
    /// What to wait for.
    pub(super) target: Address,
    /// How long: `None` for `-t 0`.
    pub(super) timeout: Option<Duration>,
    /// `-- COMMAND ARGS`: run once the target is ready.
    pub(super) command: Vec<OsString>,
}

/// The one target the script keeps (the last one given).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Address {
    /// `host:port`, split at colons as `cut -d : -f 1` and `-f 2` do.
    Tcp { host: String, port: String },
    /// An `http://` or `https://` URL, fetched as wget fetches it.
    Http(String),
}

/// Reads the arguments after argv[0].
pub(super) fn parse(args: Vec<OsString>) -> WaitForInvocation {
    // With the script's appended words, the loop always ends at a `--`, and an option's value
    // is never missing: `-t` last takes that `--`, and the loop then meets an empty word.
    let mut words = VecDeque::from(args);
    words.push_back("--".into());
    words.extend(std::iter::repeat_with(OsString::new).take(APPENDED - 1));
    let next = |words: &mut VecDeque<OsString>| {
        let word = words.pop_front().unwrap_or_default();
        word.to_string_lossy().into_owned()
    };
    let (mut quiet, mut timeout, mut target) = (false, "15".to_string(), None);
    loop {
        let word = next(&mut words);
        if word.starts_with("http://") || word.starts_with("https://") {
            target = Some(Address::Http(word));
        } else if word.contains(':') {
            let mut fields = word.split(':').map(String::from);
            let mut field = || fields.next().unwrap_or_default();
            target = Some(Address::Tcp {
                host: field(),
                port: field(),
            });
        } else if word == "-q" || word == "--quiet" {
            quiet = true;
        } else if word.starts_with("-q-") {
            return unknown("option", &word);
        } else if let Some(rest) = word.strip_prefix("-q") {
            // `-qt5` is `-q -t5`.
            quiet = true;
            words.push_front(format!("-{rest}").into());
        } else if word == "-t" || word == "--timeout" {
            timeout = next(&mut words);
        } else if let Some(value) = word
            .strip_prefix("-t")
            .or_else(|| word.strip_prefix("--timeout="))
        {
            timeout = value.to_string();
        } else if word == "--" {
            break;
        } else if word == "--help" {
            return WaitForInvocation::Usage(None, 0);
        } else if word == "-v" || word == "--version" {
            return WaitForInvocation::Version;
        } else if word.starts_with('-') {
            return unknown("option", &word);
        } else {
            return unknown("argument", &word);
        }
    }
    let complaint = |line: String| (!quiet).then_some(line);
    let Some(seconds) = whole_seconds(&timeout) else {
        let line = format!("Error: invalid timeout '{}'", one_line(&timeout));
        return WaitForInvocation::Usage(complaint(line), 3);
    };
    let target = target.filter(|target| {
        !matches!(target, Address::Tcp { host, port } if host.is_empty() || port.is_empty())
    });
    let Some(target) = target else {
        let line = "Error: you need to provide a host and port to test.";
        return WaitForInvocation::Usage(complaint(line.into()), 2);
    };
    // Words between the `--` that ended the loop and the appended ones are the command.
    words.truncate(words.len().saturating_sub(APPENDED));
    WaitForInvocation::Wait(WaitForPlan {
        target,
        timeout: (seconds > 0).then(|| Duration::from_secs(seconds)),
        command: words.into(),
    })
}

/// An unknown word: the script clears `-q` first, so this line is always printed.
fn unknown(what: &str, word: &str) -> WaitForInvocation {
    WaitForInvocation::Usage(Some(format!("Unknown {what}: {}", one_line(word))), 1)
}

/// TIMEOUT as `[ "$TIMEOUT" -ge 0 ]` accepts it: a decimal integer, sign and surrounding
/// blanks allowed, not below zero; anything else (`1.5`, `30s`, `-1`, empty) is `None`.
pub(super) fn whole_seconds(text: &str) -> Option<u64> {
    let (negative, digits) = sign(text.trim_matches([' ', '\t', '\n']));
    if !all_digits(digits) {
        return None;
    }
    // The shell's integers are 64-bit: a larger number is an error, not a long wait.
    let value: i64 = digits.parse().ok()?;
    (!negative || value == 0).then_some(value as u64)
}

/// The usage text the script prints on stderr, under the name it was called by.
pub(super) fn usage(argv0: &str) -> String {
    format!(
        "Usage:
  {argv0} host:port|url [-t timeout] [-- command args]
  -q | --quiet                        Do not output any status messages
  -t TIMEOUT | --timeout=timeout      Timeout in seconds, zero for no timeout
                                      Defaults to 15 seconds
  -v | --version                      Show the version of this tool
  -- COMMAND ARGS                     Execute command with args after the test finishes"
    )
}
