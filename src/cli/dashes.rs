//! A forgotten `--` before `wait`'s COMMAND, caught in one place: options of the command that
//! clap cannot place, a later word that is no target, and a later bare path that is an
//! executable file (which would be waited for and found, never run).

use std::path::Path;

use super::placement::Unknown;

/// The hint, the same wherever it is given.
pub const HINT: &str = "did you forget \"--\" before the command?";

/// Whether the target at `index` (counted from 0) of `wait`'s, written as `typed`, may be the
/// command: `wait` without `-- COMMAND`, given on the command line, after the first target,
/// and a bare path (`/app/server`, `./run`), which would be read as a file to wait for.
pub fn may_be_the_command(wait_without_command: bool, index: usize, typed: &str) -> bool {
    wait_without_command && index > 0 && (typed.starts_with('/') || typed.starts_with("./"))
}

/// The usage error of a target that is an executable file.
pub fn executable_target(typed: &str) -> String {
    format!(
        "{} is an executable file: wait would wait for it, not run it ({HINT}); to wait for the \
         file itself, write it as a file:// URL",
        crate::text::quoted(typed),
    )
}

/// Whether `path` is an executable file; blocking, so it runs on the target's lane (the path
/// may be on a mount that does not answer).
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// `wait`'s error for an option clap does not know (`--port`), with the hint when the option
/// comes after a word that may be the command: a second target, or one that is no target, as
/// in `wait db:5432 /app/server --port 80`.
pub fn in_unknown_option(unknown: &Unknown) -> Option<&'static str> {
    let Unknown { option, words, cli } = unknown;
    let at = words.iter().position(|word| word == "wait")?;
    let wait = cli.find_subcommand("wait")?;
    let takes_value = |arg: &clap::Arg| arg.get_num_args().is_some_and(|n| n.takes_values());
    let mut positional: Vec<&str> = Vec::new();
    let mut words = words[at + 1..].iter();
    while let Some(word) = words.next() {
        if word == option || word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let known = wait
                .get_arguments()
                .find(|arg| arg.get_long() == Some(long));
            if !long.contains('=') && known.is_some_and(takes_value) {
                words.next();
            }
        } else if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            // `-t 5s`, `-vt 5s`: the first short option that takes a value ends the cluster.
            let valued = cluster.char_indices().find_map(|(at, c)| {
                let arg = wait
                    .get_arguments()
                    .find(|arg| arg.get_short() == Some(c))?;
                takes_value(arg).then_some(at + c.len_utf8())
            });
            if valued == Some(cluster.len()) {
                words.next();
            }
        } else {
            positional.push(word);
        }
    }
    let no_target = |word: &&str| crate::kind::target::Target::parse(word).is_err();
    (positional.len() > 1 || positional.iter().any(no_target)).then_some(HINT)
}
