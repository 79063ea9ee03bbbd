//! The plain command lines, `readygate probe TARGET...` and `readygate wait TARGET... [--
//! COMMAND...]`, read without clap.
//!
//! Why: clap builds and checks `probe`'s 21 options at every start, and skipping it takes a
//! one-shot `probe tcp://` from 641 k to 232 k instructions and 1.46x to 1.22x the wall time
//! of `/bin/true` (callgrind, hyperfine; a faster `clap_builder`, at `opt-level = 3`, saved
//! 82 k and no measurable time). Exec probes run `readygate probe TARGET` every few seconds in
//! every pod, mostly with no option at all.
//!
//! Only a command line that leaves clap nothing to decide is taken here: `probe` or `wait`,
//! then words none of which starts with `-` (for `wait`, optionally `--` and then COMMAND), all
//! of them UTF-8, with no `READYGATE_*` variable (clap's environment fallbacks) set. Anything
//! else, help and errors included, goes to clap. The value built is exactly the one clap
//! builds, defaults included: the tests below compare the two on generated command lines.

use std::ffi::{CStr, OsString};

use crate::cli::{Cli, Command, CommonArgs, LogFormat, Method, ProbeArgs, WaitArgs};

/// The prefix of every variable clap reads (`#[arg(env)]`); one set means clap decides.
const ENV_PREFIX: &[u8] = b"READYGATE_";

/// `args` (argv, from argv[0]) as clap would parse it, or `None` when clap is needed; `env`
/// yields the environment's entries (`NAME=value`, as [`environment`] does) or just names.
pub fn parse<A, E>(args: A, env: E) -> Option<Cli>
where
    A: IntoIterator<Item = OsString>,
    E: IntoIterator,
    E::Item: AsRef<[u8]>,
{
    let mut args = args.into_iter().skip(1);
    let wait = match args.next()?.to_str()? {
        "wait" => true,
        "probe" => false,
        _ => return None,
    };
    let mut targets = Vec::new();
    let mut command = Vec::new();
    let mut after_dashes = false;
    for arg in args {
        let text = arg.into_string().ok()?;
        if after_dashes {
            command.push(OsString::from(text));
        } else if wait && text == "--" {
            after_dashes = true;
        } else if text.starts_with('-') {
            return None;
        } else {
            targets.push(text);
        }
    }
    if env
        .into_iter()
        .any(|entry| entry.as_ref().starts_with(ENV_PREFIX))
    {
        return None;
    }
    let common = defaults(targets);
    let command = if wait {
        Command::Wait(WaitArgs {
            common,
            on_exit: None,
            command,
        })
    } else {
        Command::Probe(ProbeArgs { common })
    };
    Some(Cli { command })
}

/// The environment's entries, `NAME=value`, read in place: `std::env::vars_os` copies every
/// one into two allocations, and a pod gets several variables per Service in its namespace.
pub fn environment() -> impl Iterator<Item = &'static [u8]> {
    // SAFETY: `environ` is the C library's NULL-terminated array of NUL-terminated entries, or
    // NULL. readygate never sets or removes a variable, so the array and its strings stay as
    // they are for the life of the process.
    let mut next = unsafe { libc::environ }.cast_const();
    std::iter::from_fn(move || {
        if next.is_null() {
            return None;
        }
        // SAFETY: `next` points into `environ`, at or before its terminating NULL.
        let entry = unsafe { *next };
        if entry.is_null() {
            return None;
        }
        // SAFETY: as above; `entry` was not the terminating NULL, so the next slot exists.
        next = unsafe { next.add(1) };
        // SAFETY: a NUL-terminated string that lives as long as the process (see above).
        Some(unsafe { CStr::from_ptr(entry) }.to_bytes())
    })
}

/// `CommonArgs` with only the targets given: every option at clap's default.
fn defaults(targets: Vec<String>) -> CommonArgs {
    CommonArgs {
        targets,
        timeout: None,
        attempt_timeout: None,
        interval: None,
        max_interval: None,
        success_threshold: 1,
        any: false,
        invert: false,
        status: None,
        contains: None,
        matches: None,
        headers: Vec::new(),
        method: Method::Get,
        unix_socket: None,
        insecure: false,
        cacert: None,
        k8s_serviceaccount_dir: None,
        touch: None,
        termination_log: None,
        quiet: false,
        verbose: false,
        log_format: LogFormat::Text,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStringExt;

    use clap::{CommandFactory, Parser};
    use proptest::prelude::*;

    use super::*;

    /// One command-line word: plain words, targets, options, `--`, empty and non-UTF-8.
    fn word() -> impl Strategy<Value = OsString> {
        prop_oneof![
            4 => "[a-z0-9.:/_@?=%é ]{0,24}".prop_map(OsString::from),
            2 => prop_oneof![
                Just("tcp://127.0.0.1:80"),
                Just("http://web:8080/healthz"),
                Just("/tmp/ready"),
                Just("grpc://api:9090"),
                Just("wait"),
                Just("probe"),
                Just("help"),
            ]
            .prop_map(OsString::from),
            2 => prop_oneof![
                Just("--"),
                Just("-"),
                Just("-v"),
                Just("-q"),
                Just("-t"),
                Just("-t1s"),
                Just("--timeout"),
                Just("--timeout=2s"),
                Just("--any"),
                Just("--help"),
                Just("-h"),
                Just("--version"),
                Just("--on-exit"),
                Just("---"),
                Just("-1"),
            ]
            .prop_map(OsString::from),
            1 => Just(OsString::from("")),
            1 => Just(OsString::from_vec(vec![b'x', 0xff])),
        ]
    }

    /// argv: a program name, a first word (usually `probe` or `wait`), then up to 7 words.
    fn argv() -> impl Strategy<Value = Vec<OsString>> {
        let first = prop_oneof![
            4 => Just(OsString::from("probe")),
            4 => Just(OsString::from("wait")),
            1 => word(),
        ];
        (first, prop::collection::vec(word(), 0..8)).prop_map(|(first, rest)| {
            let mut argv = vec![OsString::from("readygate"), first];
            argv.extend(rest);
            argv
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn what_the_fast_path_takes_clap_parses_the_same(argv in argv()) {
            if let Some(fast) = parse(argv.clone(), environment()) {
                let clap = Cli::try_parse_from(&argv);
                prop_assert!(clap.is_ok(), "clap rejects {:?}: {:?}", argv, clap.err());
                prop_assert_eq!(format!("{fast:?}"), format!("{:?}", clap.unwrap()));
            }
        }

        #[test]
        fn plain_words_take_the_fast_path(
            wait in any::<bool>(),
            words in prop::collection::vec("[a-z0-9.:/_é][a-z0-9.:/_@?=%é -]{0,24}", 0..6),
            command in prop::option::of(prop::collection::vec(word(), 0..4)),
        ) {
            let mut argv: Vec<OsString> =
                ["readygate", if wait { "wait" } else { "probe" }].map(OsString::from).into();
            argv.extend(words.iter().map(OsString::from));
            let mut utf8 = true;
            if let (true, Some(command)) = (wait, command) {
                utf8 = command.iter().all(|word| word.to_str().is_some());
                argv.push("--".into());
                argv.extend(command);
            }
            prop_assert_eq!(parse(argv.clone(), [b"PATH=/bin"]).is_some(), utf8, "{:?}", argv);
        }
    }

    #[test]
    fn environment_reads_what_std_reads() {
        let std: Vec<Vec<u8>> = std::env::vars_os()
            .map(|(name, value)| [name.as_encoded_bytes(), b"=", value.as_encoded_bytes()].concat())
            .collect();
        let ours: Vec<&[u8]> = environment().collect();
        assert!(!ours.is_empty());
        assert_eq!(ours, std);
    }

    #[test]
    fn any_readygate_variable_leaves_it_to_clap() {
        let argv = ["readygate", "probe", "tcp://db:5432"].map(OsString::from);
        assert!(parse(argv.clone(), [b"PATH=/bin"]).is_some());
        assert!(parse(argv.clone(), [b"XREADYGATE_TIMEOUT=1s"]).is_some());
        assert!(parse(argv, [b"READYGATE_TIMEOUT=1s"]).is_none());
    }

    #[test]
    fn every_variable_clap_reads_has_the_prefix() {
        let cli = Cli::command();
        let mut seen = 0;
        for sub in ["wait", "probe"] {
            let mut sub = cli.find_subcommand(sub).expect("a subcommand").clone();
            sub.build();
            for arg in sub.get_arguments() {
                if let Some(name) = arg.get_env() {
                    seen += 1;
                    assert!(
                        name.as_encoded_bytes().starts_with(ENV_PREFIX),
                        "{name:?} of --{:?}",
                        arg.get_long()
                    );
                }
            }
        }
        // Both subcommands' arguments were built (they are deferred) and have fallbacks.
        assert!(seen > 20, "{seen} variables");
    }
}
