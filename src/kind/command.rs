//! `exec:COMMAND [ARG]...`: ready when the command, run once per attempt, exits 0. For the tools
//! an image already has (`exec:pg_isready -h db`, `exec:mysqladmin ping`), given all a built-in
//! check gets: deadline, backoff, bounded attempts, reasons, logs.
//!
//! The one target that is not a URL: `exec:` and the command's words in one argument (no `//`),
//! so that it can never be read as `wait`'s `-- COMMAND`, which is exec'd once ready. No shell:
//! the words are split by [`words`]. Each attempt runs the program found before the first one
//! ([`program`]) in a process group of its own, killed whole when the attempt ends ([`group`]),
//! and reads its output in bounded memory ([`last_line`]): the last line is the reason.

mod group;
mod last_line;
pub mod program;
mod run;
pub mod secrets;
pub mod words;

use std::path::PathBuf;

use tokio::sync::oneshot;

use super::Kind;
use crate::error::Failure;
use crate::runtime::lane::{Lane, FS_SILENT};
use crate::runtime::Attempt;

pub use group::end_all;

/// How a command target starts.
pub const PREFIX: &str = "exec:";

/// What an attempt cut while its command runs waited for: `no exit within 1.0s`.
const NO_EXIT: &str = "no exit";

/// A command to run on each attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTarget {
    /// The program as written: argv[0], and what is looked up.
    pub program: String,
    pub args: Vec<String>,
    /// Where the program was found, before the first attempt (`None`: not looked up, as with
    /// `READYGATE_DISABLED`; then the spawn looks it up).
    pub path: Option<PathBuf>,
    /// The words as written, each password hidden ([`secrets`]): how the target is shown.
    pub shown: String,
}

/// The command of `text` if it is written as one: `exec:` (any case) and a command. `exec:5432`
/// stays the host `exec`, port 5432, as `redis:6379` is the host `redis`.
pub fn written(text: &str) -> Option<&str> {
    let prefix = text.get(..PREFIX.len())?;
    let rest = &text[PREFIX.len()..];
    let port = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    (prefix.eq_ignore_ascii_case(PREFIX) && !port).then_some(rest)
}

/// Parses what follows `exec:`.
pub fn parse(rest: &str) -> Result<Kind, String> {
    if rest.starts_with("//") {
        return Err(
            "a command target takes no \"//\": write exec:COMMAND [ARG]..., as in \
             \"exec:pg_isready -h db\" (a path: \"exec:/usr/bin/pg_isready -h db\")"
                .into(),
        );
    }
    let written = words::split(rest)?;
    let shown = secrets::shown_words(rest, &written);
    let mut words = written.into_iter().map(|word| word.text);
    let program = words.next().unwrap_or_default();
    if program.is_empty() {
        return Err("the command's name is empty".into());
    }
    Ok(Kind::Command(CommandTarget {
        program,
        args: words.collect(),
        path: None,
        shown,
    }))
}

/// `text`, an `exec:` target, as it may be shown: each password hidden, also when it does
/// not parse. `None` when `text` is no command.
pub fn shown(text: &str) -> Option<String> {
    let rest = written(text)?;
    Some(format!("{}{}", &text[..PREFIX.len()], secrets::shown(rest)))
}

/// One attempt: run the command to its exit, within the attempt. Its process group is killed
/// when the attempt ends, however it ends.
pub async fn check(target: &CommandTarget, lane: &Lane, at: &Attempt) -> Result<(), Failure> {
    let (guard, group) = group::Guard::new();
    let (started, spawned) = oneshot::channel();
    let path = target
        .path
        .clone()
        .unwrap_or_else(|| target.program.clone().into());
    let (program, args) = (target.program.clone(), target.args.clone());
    // Starting the program waits for its exec, which a mount that does not answer holds up.
    at.waiting_for(FS_SILENT);
    let run = lane.run(move || run::run(&path, (&program, &args), &group, started));
    tokio::pin!(run);
    // Cancellation: dropping this future (the attempt's end) drops `guard`, which kills the
    // group; the lane's thread then reaps the leader.
    let ran = tokio::select! {
        biased;
        ran = &mut run => ran,
        Ok(()) = spawned => {
            at.waiting_for(NO_EXIT);
            run.await
        }
    };
    drop(guard);
    match ran?? {
        Some(ran) => ran.judge(),
        None => Err(Failure::Text(
            "the attempt ended before the command started".into(),
        )),
    }
}

/// `exec:` in a list separated by commas (`READYGATE_TARGETS`, `--group`): each piece, trimmed
/// and not empty, where a command's quoted commas are its own.
pub fn split_list(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start();
        let end = match written(trimmed) {
            Some(_) => words::end_in_list(trimmed),
            None => trimmed.find(',').unwrap_or(trimmed.len()),
        };
        let piece = trimmed[..end].trim();
        if !piece.is_empty() {
            pieces.push(piece);
        }
        match trimmed[end..].strip_prefix(',') {
            Some(after) => rest = after,
            None => return pieces,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_target_is_exec_and_its_words() {
        let Ok(Kind::Command(target)) = parse("pg_isready -h 'db host'") else {
            panic!()
        };
        assert_eq!(target.program, "pg_isready");
        assert_eq!(target.args, ["-h", "db host"]);
        assert_eq!(written("EXEC:true"), Some("true"));
        assert_eq!(written("exec:5432"), None, "a host and its port");
        assert_eq!(written("exec"), None);
        assert_eq!(written("é"), None);
        assert!(parse("//usr/bin/x").unwrap_err().contains("no \"//\""));
        assert!(parse("'' x").unwrap_err().contains("name is empty"));
    }

    #[test]
    fn lists_split_at_commas_outside_a_command_quotes() {
        let cases: &[(&str, &[&str])] = &[
            (
                "db:1, exec:true ,http://h/",
                &["db:1", "exec:true", "http://h/"],
            ),
            (
                "exec:psql -c 'select 1, 2',db:1",
                &["exec:psql -c 'select 1, 2'", "db:1"],
            ),
            (" , a:1,, ", &["a:1"]),
            ("", &[]),
        ];
        for (text, pieces) in cases {
            assert_eq!(split_list(text), *pieces, "{text}");
        }
    }
}
