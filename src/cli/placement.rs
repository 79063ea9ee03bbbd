//! Words the user put in the wrong place, found in the command line as typed: a command's
//! option before the command (`readygate -t 3s wait …`), and a duration split in two
//! (`--timeout 5 m`, whose `m` would be read as a target).

use std::ffi::OsString;

use clap::CommandFactory;

/// An option clap does not know, with the command line it was typed in: read once, for every
/// hint about where a word belongs.
pub struct Unknown {
    /// The option as clap reports it (`--port`, `--timeout=5s`).
    pub option: String,
    /// The words typed after the program's name.
    pub words: Vec<String>,
    /// readygate's command line, built, to ask which command takes what.
    pub cli: clap::Command,
}

impl Unknown {
    /// The option clap refused in `err`, when that is the fault, and the words of `argv`.
    pub fn of(err: &clap::Error, argv: &[OsString]) -> Option<Unknown> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        if err.kind() != ErrorKind::UnknownArgument {
            return None;
        }
        let Some(ContextValue::String(option)) = err.get(ContextKind::InvalidArg) else {
            return None;
        };
        let words = argv.iter().skip(1);
        let words = words
            .map(|word| word.to_string_lossy().into_owned())
            .collect();
        let mut cli = crate::cli::Cli::command();
        cli.build();
        let option = option.clone();
        Some(Unknown { option, words, cli })
    }
}

/// The hint for an option clap does not know where it stands: one of `wait`'s, `probe`'s or
/// `serve`'s given before the command, which is where it belongs.
pub fn before_the_command(unknown: &Unknown) -> Option<String> {
    let Unknown { option, words, cli } = unknown;
    let names: Vec<&str> = cli.get_subcommands().map(clap::Command::get_name).collect();
    let typed = |word: &String| {
        word == option
            || word
                .strip_prefix(option.as_str())
                .is_some_and(|v| v.starts_with('='))
    };
    let at = words.iter().position(typed)?;
    let command = words[at..]
        .iter()
        .find(|word| names.contains(&word.as_str()))?;
    let option = option.split('=').next().unwrap_or(option);
    let owners: Vec<&str> = cli
        .get_subcommands()
        .filter(|sub| knows(sub, option))
        .map(clap::Command::get_name)
        .collect();
    if owners.is_empty() {
        return None;
    }
    Some(format!(
        "{option} is an option of {}: put it after the command, as in \"readygate {command} \
         {option} …\"",
        owners.join(", ")
    ))
}

/// Whether `command` has the option written `option` (`-t`, `--timeout`).
fn knows(command: &clap::Command, option: &str) -> bool {
    command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .any(
            |arg| match (option.strip_prefix("--"), option.strip_prefix('-')) {
                (Some(long), _) => arg.get_long() == Some(long),
                (None, Some(short)) => {
                    let mut chars = short.chars();
                    let first = chars.next();
                    first.is_some() && arg.get_short() == first
                }
                _ => false,
            },
        )
}

/// The `--log-format` of a command line clap refused, as far as it can be read: the last
/// `--log-format FORMAT` (or `=FORMAT`) before `--`, else `READYGATE_LOG_FORMAT`; `None`
/// when neither names a format.
pub fn log_format_typed() -> Option<super::LogFormat> {
    use clap::ValueEnum;
    let words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|word| word.to_string_lossy().into_owned())
        .take_while(|word| word != "--")
        .collect();
    let mut typed = None;
    for (at, word) in words.iter().enumerate() {
        if let Some(value) = word.strip_prefix("--log-format=") {
            typed = Some(value.to_string());
        } else if word == "--log-format" {
            typed = words.get(at + 1).cloned();
        }
    }
    let text = typed.or_else(|| std::env::var("READYGATE_LOG_FORMAT").ok())?;
    super::LogFormat::from_str(&text, false).ok()
}

/// The units a DURATION may end with, alone: a word that is one of them, after a number, is the
/// second half of a duration typed with a space.
const UNITS: &[&str] = &[
    "ns", "us", "ms", "s", "sec", "secs", "second", "seconds", "m", "min", "mins", "minute",
    "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day", "days",
];

/// The fix for a target that is a duration's unit, typed apart from its number
/// (`--timeout 5 m`): `--timeout 5m`.
pub fn split_duration(target: &str, argv: &[OsString]) -> Option<String> {
    if !UNITS.contains(&target) {
        return None;
    }
    let words: Vec<String> = argv
        .iter()
        .map(|word| word.to_string_lossy().into_owned())
        .collect();
    let at = words.iter().position(|word| word == target)?;
    let number = words.get(at.checked_sub(1)?)?;
    let numeric = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !numeric {
        return None;
    }
    let option = at.checked_sub(2).map(|i| words[i].as_str()).unwrap_or("");
    let option = match option.starts_with('-') {
        true => format!("{option} "),
        false => String::new(),
    };
    Some(format!(
        "a duration is one word: write {}",
        crate::text::quoted(&format!("{option}{number}{target}"))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_split_duration_is_joined() {
        let typed = argv(&["readygate", "wait", "--timeout", "5", "m", "db:1"]);
        let fix = split_duration("m", &typed).unwrap();
        assert_eq!(fix, "a duration is one word: write \"--timeout 5m\"");
        assert_eq!(split_duration("db:1", &typed), None);
        assert_eq!(
            split_duration("m", &argv(&["readygate", "wait", "m"])),
            None
        );
    }
}
