//! clap's refusals as readygate reports them: help and version on stdout, any other fault as
//! one line with status 2.

use super::placement::Unknown;
use crate::exit::Exit;

/// Help and version go to stdout with status 0; every other clap error becomes one line.
pub fn usage_error(err: clap::Error) -> Exit {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            Exit::Ready
        }
        _ => {
            // clap's first paragraph names the fault (continued on indented lines, as in
            // "required arguments were not provided:\n  <DIR>"); usage and tips follow it.
            let text = err.to_string();
            let fault: Vec<&str> = text
                .lines()
                .take_while(|line| !line.trim().is_empty())
                .map(str::trim)
                .collect();
            let fault = fault.join(" ");
            let mut line = fault.strip_prefix("error: ").unwrap_or(&fault).to_string();
            // A suggestion for a typo ("tip: a similar subcommand exists: 'wait'") joins it.
            let tips: Vec<&str> = text
                .lines()
                .filter_map(|line| line.trim().strip_prefix("tip: "))
                .filter(|tip| tip.starts_with("a similar") || tip.starts_with("some similar"))
                .collect();
            if !tips.is_empty() {
                line = format!("{line} ({})", tips.join("; "));
            }
            let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
            if let Some(unknown) = Unknown::of(&err, &argv) {
                if let Some(hint) = super::dashes::in_unknown_option(&unknown) {
                    line = format!("{line} ({hint})");
                }
                if let Some(hint) = super::placement::before_the_command(&unknown) {
                    line = format!("{line} ({hint})");
                }
            }
            Exit::Usage(crate::text::one_line(&line))
        }
    }
}
