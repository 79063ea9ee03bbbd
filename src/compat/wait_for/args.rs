//! The wait-for command line, read as the script's `case` loop reads it: the same patterns in
//! the same order, the same words taken as values, the same statuses for what is wrong.

use std::ffi::OsString;
use std::time::Duration;

/// The script's timeout when none is given.
const DEFAULT_TIMEOUT: &str = "15";
/// The version of eficode/wait-for whose command line this is.
pub(super) const SCRIPT_VERSION: &str = "2.2.4";

/// What a wait-for command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Invocation {
    /// Print the complaint (if any), then the usage text (always), and exit with `status`.
    Usage {
        /// The line before the usage text.
        complaint: Option<String>,
        /// 0 for `--help`, 1 for an unknown word, 2 for a missing target, 3 for a bad timeout.
        status: u8,
    },
    /// `-v`/`--version`: print the version on stdout, exit 0.
    Version,
    /// Wait for the target, then run the command.
    Wait(Plan),
}

/// One wait.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// What to wait for.
    pub(super) target: Gate,
    /// How long: `None` for `-t 0`.
    pub(super) timeout: Option<Duration>,
    /// `-- COMMAND ARGS`: run once the target is ready.
    pub(super) command: Vec<OsString>,
}

/// The one target the script keeps (the last one given).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Gate {
    /// `host:port`, split at colons as `cut -d : -f 1` and `-f 2` do.
    Tcp {
        /// The first field.
        host: String,
        /// The second field.
        port: String,
    },
    /// An `http://` or `https://` URL, fetched as wget fetches it.
    Http(String),
}

/// Reads the arguments after argv[0].
pub(super) fn parse(args: Vec<OsString>) -> Invocation {
    let given = args.len();
    // The script appends `--` and six saved variables to its arguments before its loop, so the
    // loop always ends at a `--`, and an option's value is never missing: `-t` last takes that
    // `--`, and the loop then meets an empty word.
    let mut words: Vec<OsString> = args;
    words.push("--".into());
    words.extend(std::iter::repeat_with(OsString::new).take(6));
    let text = |i: usize| words[i].to_string_lossy().into_owned();

    let mut quiet = false;
    let mut timeout = DEFAULT_TIMEOUT.to_string();
    let mut target: Option<Gate> = None;
    let mut pending: Option<String> = None;
    let mut i = 0;
    let command_from = loop {
        let word = match pending.take() {
            Some(word) => word,
            None => {
                i += 1;
                text(i - 1)
            }
        };
        if word.starts_with("http://") || word.starts_with("https://") {
            target = Some(Gate::Http(word));
        } else if word.contains(':') {
            let mut fields = word.split(':');
            let host = fields.next().unwrap_or_default().to_string();
            let port = fields.next().unwrap_or_default().to_string();
            target = Some(Gate::Tcp { host, port });
        } else if word == "-q" || word == "--quiet" {
            quiet = true;
        } else if word.starts_with("-q-") {
            return unknown("option", &word);
        } else if let Some(rest) = word.strip_prefix("-q") {
            // `-qt5` is `-q -t5`.
            quiet = true;
            pending = Some(format!("-{rest}"));
        } else if word == "-t" || word == "--timeout" {
            timeout = text(i);
            i += 1;
        } else if let Some(value) = word.strip_prefix("-t") {
            timeout = value.to_string();
        } else if let Some(value) = word.strip_prefix("--timeout=") {
            timeout = value.to_string();
        } else if word == "--" {
            break i;
        } else if word == "--help" {
            return Invocation::Usage {
                complaint: None,
                status: 0,
            };
        } else if word == "-v" || word == "--version" {
            return Invocation::Version;
        } else if word.starts_with('-') {
            return unknown("option", &word);
        } else {
            return unknown("argument", &word);
        }
    };
    let say = |line: &str| (!quiet).then(|| line.to_string());
    let Some(seconds) = whole_seconds(&timeout) else {
        let line = format!(
            "Error: invalid timeout '{}'",
            crate::redact::one_line(&timeout)
        );
        return Invocation::Usage {
            complaint: say(&line),
            status: 3,
        };
    };
    let target = match target {
        Some(Gate::Tcp { host, port }) if !host.is_empty() && !port.is_empty() => {
            Gate::Tcp { host, port }
        }
        Some(Gate::Http(url)) => Gate::Http(url),
        _ => {
            return Invocation::Usage {
                complaint: say("Error: you need to provide a host and port to test."),
                status: 2,
            }
        }
    };
    // Words between the `--` that ended the loop and the appended ones are the command.
    let command = if command_from <= given {
        words.drain(command_from..given).collect()
    } else {
        Vec::new()
    };
    Invocation::Wait(Plan {
        target,
        timeout: (seconds > 0).then(|| Duration::from_secs(seconds)),
        command,
    })
}

/// An unknown word: the script clears `-q` first, so this line is always printed.
fn unknown(what: &str, word: &str) -> Invocation {
    Invocation::Usage {
        complaint: Some(format!("Unknown {what}: {}", crate::redact::one_line(word))),
        status: 1,
    }
}

/// TIMEOUT as `[ "$TIMEOUT" -ge 0 ]` accepts it: a decimal integer, sign and surrounding
/// blanks allowed, not below zero; anything else (`1.5`, `30s`, `-1`, empty) is `None`.
pub(super) fn whole_seconds(text: &str) -> Option<u64> {
    let trimmed = text.trim_matches([' ', '\t', '\n']);
    let (negative, digits) = match trimmed.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The shell's integers are 64-bit: a larger number is an error, not a long wait.
    let value: i64 = digits.parse().ok()?;
    match (negative, value) {
        (true, 0) | (false, _) => Some(value as u64),
        (true, _) => None,
    }
}

/// The usage text the script prints on stderr, under the name it was called by.
pub(super) fn usage(argv0: &str) -> String {
    let options = [
        ("-q | --quiet", "Do not output any status messages"),
        (
            "-t TIMEOUT | --timeout=timeout",
            "Timeout in seconds, zero for no timeout",
        ),
        ("", "Defaults to 15 seconds"),
        ("-v | --version", "Show the version of this tool"),
        (
            "-- COMMAND ARGS",
            "Execute command with args after the test finishes",
        ),
    ];
    let mut text = format!("Usage:\n  {argv0} host:port|url [-t timeout] [-- command args]\n");
    for (option, meaning) in options {
        text.push_str(&format!("  {option:<36}{meaning}\n"));
    }
    text
}
