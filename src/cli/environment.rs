//! A usage error about a value that came from a `READYGATE_*` variable names the variable, not
//! an option the user never typed: `READYGATE_TIMEOUT="abc": invalid duration "abc"…`.

use std::ffi::OsString;

use clap::CommandFactory;

use crate::text::quoted;

/// An option whose value came from its environment variable.
struct FromEnvironment {
    /// `--timeout`.
    long: String,
    /// `--timeout <DURATION>`, as clap's errors show it.
    shown: String,
    /// `READYGATE_TIMEOUT`.
    variable: String,
    /// The variable's value.
    value: String,
}

/// `message` with each option whose value came from the environment named as its variable.
pub fn name_variables(message: &str) -> String {
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    from_environment(&argv)
        .iter()
        .fold(message.to_string(), |message, option| {
            option.named(&message)
        })
}

/// The options of the command `argv` runs (and the global ones) whose variable is set while
/// the option is not on the command line: clap took their value from the environment.
fn from_environment(argv: &[OsString]) -> Vec<FromEnvironment> {
    let typed: Vec<String> = argv
        .iter()
        .map(|word| word.to_string_lossy().into_owned())
        .take_while(|word| word != "--")
        .collect();
    let mut command = crate::cli::Cli::command();
    command.build();
    let named = |sub: &&clap::Command| typed.iter().any(|word| word == sub.get_name());
    let sub = command.get_subcommands().find(named);
    let mut found: Vec<FromEnvironment> = Vec::new();
    for arg in command
        .get_arguments()
        .chain(sub.into_iter().flat_map(|s| s.get_arguments()))
    {
        let (Some(variable), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let variable = variable.to_string_lossy().into_owned();
        let Some(value) = std::env::var_os(&variable) else {
            continue;
        };
        let long = format!("--{long}");
        let on_line = typed.iter().any(|word| {
            word == &long
                || word.starts_with(&format!("{long}="))
                || arg.get_short().is_some_and(|short| has_short(word, short))
        });
        if on_line || found.iter().any(|seen| seen.variable == variable) {
            continue;
        }
        found.push(FromEnvironment {
            long,
            shown: arg.to_string(),
            variable,
            value: value.to_string_lossy().into_owned(),
        });
    }
    found
}

/// Whether `word` is a cluster of short flags (`-vt5s`) that holds `-short`: flags without a
/// value may come before it, and the first that takes one ends the cluster.
fn has_short(word: &str, short: char) -> bool {
    let Some(cluster) = word.strip_prefix('-').filter(|rest| !rest.starts_with('-')) else {
        return false;
    };
    for c in cluster.chars() {
        if c == short {
            return true;
        }
        if !matches!(c, 'q' | 'v' | 'h' | 'V') {
            return false;
        }
    }
    false
}

impl FromEnvironment {
    /// `message` with this option named as its variable: clap's `invalid value 'abc' for
    /// '--timeout <DURATION>': …` and readygate's own `--cacert "FILE": …` as `VAR="abc": …`.
    fn named(&self, message: &str) -> String {
        let assigned = format!("{}={}", self.variable, quoted(&self.value));
        let invalid = format!("invalid value '{}' for '{}'", self.value, self.shown);
        if let Some(rest) = message.strip_prefix(&invalid) {
            return match rest.trim().strip_prefix("[possible values: ") {
                Some(values) => {
                    let values = values.trim_end_matches(']');
                    format!("{assigned}: expected one of {values}")
                }
                None => format!(
                    "{assigned}{}",
                    replace_word(rest, &self.long, &self.variable)
                ),
            };
        }
        let required = format!(
            "a value is required for '{}' but none was supplied",
            self.shown
        );
        if message.starts_with(&required) {
            return format!(
                "{} is set but empty: give it a value, or unset it",
                self.variable
            );
        }
        let unnamed = format!("invalid value for '{}'", self.shown);
        if let Some(rest) = message.strip_prefix(&unnamed) {
            return format!("{}{rest}", self.variable);
        }
        let message = message
            .replace(&format!("'{}'", self.shown), &self.variable)
            .replace(&format!("{} {}", self.long, quoted(&self.value)), &assigned);
        let with_value = format!("{} {}", self.long, self.value);
        let message = replace_word(&message, &with_value, &assigned);
        replace_word(&message, &self.long, &self.variable)
    }
}

/// `text` with each `word` that no letter, digit or `-` continues replaced by `by`.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let after = &rest[at + word.len()..];
        let whole = !after.starts_with(|c: char| c.is_alphanumeric() || c == '-');
        out.push_str(&rest[..at]);
        out.push_str(if whole { by } else { word });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_flags_are_found_in_clusters() {
        assert!(has_short("-t5s", 't'));
        assert!(has_short("-vt", 't'));
        assert!(!has_short("-Ht", 't'));
        assert!(!has_short("--timeout", 't'));
    }

    #[test]
    fn only_whole_options_are_renamed() {
        let text = "--interval 5s is above --max-interval 1s (--interval-x)";
        let renamed = replace_word(text, "--interval", "READYGATE_INTERVAL");
        assert_eq!(
            renamed,
            "READYGATE_INTERVAL 5s is above --max-interval 1s (--interval-x)"
        );
    }
}
