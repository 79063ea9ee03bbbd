//! Property tests over everything that reads user input: the target, duration, status-range,
//! header and regex parsers, the whole clap command line and the plan built from it. Whatever
//! the input, they never panic, a rejection is one line, and what they accept reads back the same.

use std::time::Duration;

use clap::{CommandFactory, Parser};
use proptest::prelude::*;

use readygate::{
    is_secret, parse_duration, redact_userinfo, usage_error, Backoff, Cli, Command, Exit, Header,
    HeaderMatch, Host, JsonField, Kind, Matcher, Plan, Schedule, StatusRanges, Target,
};

/// Panics unless `message` is one non-empty line with no control character that could break
/// it (it is escaped before printing).
fn assert_one_line(message: &str) {
    assert!(!message.is_empty(), "empty message");
    assert!(
        !message.chars().any(|c| c == '\n' || c == '\r'),
        "more than one line: {message:?}"
    );
}

/// What readygate shows of parsed input: the value as it reads back, or the one-line error.
fn shown<T: ToString>(result: Result<T, String>) -> String {
    result.map_or_else(|message| message, |value| value.to_string())
}

/// What is shown of a `-H` header whose value, between `before` and `after`, is `SECRETVALUE`.
fn header_shown(name: &str, separator: &str, before: &str, after: &str) -> String {
    shown(Header::parse(&format!(
        "{name}{separator}{before}SECRETVALUE{after}"
    )))
}

/// Text that looks like a target: a scheme from the contract (or a wrong one), then
/// characters that matter to the parsers.
const TARGET_LIKE: &str = concat!(
    "((tcp|https?|HTTP|file|unix|grpcs?|postgres|rediss?|mysql|amqp|nats|zk|dns|k8s|ftp)://|\\.?/)?",
    "[a-z0-9.:\\[\\]@/%?#_~ -]{0,40}",
);

proptest! {
    #[test]
    fn target_like_text_never_panics(text in TARGET_LIKE) {
        match Target::parse(&text) {
            Err(message) => assert_one_line(&message),
            Ok(target) => {
                // What is accepted is shown as written and reads back the same.
                prop_assert_eq!(target.to_string(), redact_userinfo(&text));
                if !text.contains('@') {
                    prop_assert_eq!(Target::parse(&target.to_string()).unwrap(), target);
                }
            }
        }
    }

    #[test]
    fn url_passwords_never_show(
        scheme in "https?|redis|postgres|amqp",
        user in "[a-z]{0,6}",
        rest in "[a-z0-9.:\\[\\]@/%?# -]{0,30}",
    ) {
        // The password's letters are upper case: the rest cannot spell it by chance.
        let shown = shown(Target::parse(&format!("{scheme}://{user}:PASSWORD@{rest}")));
        prop_assert!(!shown.contains("PASSWORD"), "{}", shown);
    }

    #[test]
    fn valid_tcp_and_http_targets_keep_host_and_port(
        labels in prop::collection::vec("[a-z][a-z0-9-]{0,10}[a-z0-9]", 1..4),
        port in 1u16..,
        path in "(/[a-z0-9._~-]{0,8}){0,3}",
        tls in any::<bool>(),
    ) {
        let host = labels.join(".");
        let Kind::Tcp(endpoint) = Target::parse(&format!("tcp://{host}:{port}")).unwrap().kind
        else { panic!("not tcp") };
        prop_assert_eq!(endpoint.host, Host::Name(host.clone()));
        prop_assert_eq!(endpoint.port, port);
        let scheme = if tls { "https" } else { "http" };
        let Kind::Http(http) = Target::parse(&format!("{scheme}://{host}:{port}{path}"))
            .unwrap()
            .kind
        else { panic!("not http") };
        prop_assert_eq!(http.tls, tls);
        prop_assert_eq!(http.endpoint.port, port);
        prop_assert_eq!(http.authority, format!("{host}:{port}"));
        let expected_path = if path.is_empty() { "/".to_string() } else { path };
        prop_assert_eq!(http.path, expected_path);
    }

    #[test]
    fn ip_literals_are_never_resolved(ip in any::<std::net::IpAddr>(), port in 1u16..) {
        let text = match ip {
            std::net::IpAddr::V4(v4) => format!("{v4}:{port}"),
            std::net::IpAddr::V6(v6) => format!("[{v6}]:{port}"),
        };
        let Kind::Tcp(endpoint) = Target::parse(&text).unwrap().kind else { panic!() };
        prop_assert_eq!(endpoint.host, Host::Ip(ip));
    }

    #[test]
    fn durations_read_back(millis in 0u64..=31_622_400_000, seconds in 0u64..=31_622_400) {
        let span = Duration::from_millis(millis);
        let written = humantime::format_duration(span).to_string();
        prop_assert_eq!(parse_duration(&written), Ok(span));
        prop_assert_eq!(parse_duration(&seconds.to_string()), Ok(Duration::from_secs(seconds)));
    }

    #[test]
    fn durations_past_the_maximum_are_refused(seconds in 31_622_401u64..) {
        let text = format!("{seconds}s");
        prop_assert!(parse_duration(&text).is_err());
    }

    #[test]
    fn backoff_never_panics_and_stays_under_its_cap(
        first in any::<u64>(), first_nanos in 0u32..1_000_000_000,
        max in any::<u64>(), seed in any::<u64>(), growth in (any::<u32>(), any::<u32>()),
        steady in prop_oneof![0u32..40, Just(u32::MAX)],
    ) {
        let first = Duration::new(first, first_nanos);
        let max = Duration::from_secs(max);
        let schedule = Schedule { label: "test", first, max, growth, steady };
        let mut backoff = Backoff::new(schedule, seed);
        for _ in 0..70 {
            prop_assert!(backoff.next_delay() <= max.max(first));
        }
    }

    #[test]
    fn status_ranges_read_back(pairs in prop::collection::vec((100u16..600, 0u16..100), 1..6)) {
        let text: Vec<String> = pairs
            .iter()
            .map(|&(low, width)| {
                let high = (low + width).min(599);
                if width % 2 == 0 { format!("{low}-{high}") } else { low.to_string() }
            })
            .collect();
        let ranges = StatusRanges::parse(&text.join(",")).unwrap();
        prop_assert_eq!(StatusRanges::parse(&ranges.to_string()).unwrap(), ranges.clone());
        for &(low, _) in &pairs {
            prop_assert!(ranges.contains(low));
        }
    }

    #[test]
    fn secret_header_values_never_show(
        name in "Authorization|proxy-authorization|COOKIE|X-Auth-Token|Private-Token|X-Vault-Token",
        separator in "(: |:| |\t|=)?",
        before in "\\PC{0,5}",
        after in "\\PC{0,5}",
    ) {
        let shown = header_shown(&name, &separator, &before, &after);
        // Case matters: with no separator, SECRETVALUE may be part of the name, shown in lower case.
        prop_assert!(!shown.contains("SECRETVALUE"), "{}", shown);
    }

    #[test]
    fn values_after_a_secret_name_and_a_separator_never_show(
        name in "X-Api-Key|api_key|apiKey|Ocp-Apim-Subscription-Key|X-Amz-Signature|X-Hub-Sig",
        separator in "(: |:| |\t|=|\u{2003}|\u{a0})",
        before in "\\PC{0,5}",
        after in "\\PC{0,5}",
    ) {
        let shown = header_shown(&name, &separator, &before, &after);
        prop_assert!(!shown.to_ascii_uppercase().contains("SECRETVALUE"), "{}", shown);
    }

    #[test]
    fn plain_headers_read_back(name in "[A-Za-z][A-Za-z0-9-]{0,15}", value in "[ -~]{0,30}") {
        prop_assume!(!is_secret(&name));
        let header = Header::parse(&format!("{name}: {value}")).unwrap();
        let again = Header::parse(&header.to_string()).unwrap();
        prop_assert_eq!(again.name, header.name);
        prop_assert_eq!(&again.value, &header.value);
        prop_assert_eq!(header.value.to_str().unwrap(), value.trim());
    }

    #[test]
    fn escaped_text_matches_itself(text in "\\PC{0,40}") {
        let escaped: String = text
            .chars()
            .flat_map(|c| {
                let meta = "\\.+*?()|[]{}^$".contains(c);
                meta.then_some('\\').into_iter().chain(std::iter::once(c))
            })
            .collect();
        let matcher = Matcher::regex(&escaped).unwrap();
        prop_assert!(matcher.is_match(text.as_bytes()));
    }
}

/// A command-line word: a command or option the CLI knows (read from clap itself), a few
/// odd spellings, or a value of any shape.
fn word() -> impl Strategy<Value = String> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut known: Vec<String> = ["--", "-tv", "--timeout=", "-H="].map(String::from).into();
    let mut commands = vec![&cmd];
    while let Some(cmd) = commands.pop() {
        known.push(cmd.get_name().into());
        for arg in cmd.get_arguments() {
            known.extend(arg.get_long().map(|long| format!("--{long}")));
            known.extend(arg.get_short().map(|short| format!("-{short}")));
        }
        commands.extend(cmd.get_subcommands());
    }
    // Global options and `--help` are in every command: keep one of each.
    known.sort();
    known.dedup();
    prop_oneof![
        prop::sample::select(known),
        TARGET_LIKE,
        "\\PC{0,12}",
        "[0-9]{1,25}(ms|s|m|h|y)?",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn parsers_never_panic_and_errors_are_one_line(
        // Any text, then the shapes of durations, status ranges and regexes.
        text in concat!(
            "\\PC{0,60}|.{0,60}|[0-9.]{0,30}[a-z ]{0,6}|[0-9, -]{0,30}",
            "|[()\\[\\]{}|*+?.^$\\\\a-c0-9,]{0,30}",
        ),
    ) {
        if let Err(message) = Target::parse(&text) {
            prop_assert!(message.starts_with("invalid target \""), "{}", message);
        }
        let errors = [
            Target::parse(&text).err(),
            parse_duration(&text).err(),
            StatusRanges::parse(&text).err(),
            Header::parse(&text).err(),
            Matcher::regex(&text).err(),
            JsonField::parse(&text).err(),
            HeaderMatch::parse(&text).err(),
        ];
        for message in errors.into_iter().flatten() {
            assert_one_line(&message);
        }
    }

    #[test]
    fn the_command_line_never_panics_and_errors_are_one_line(
        words in prop::collection::vec(word(), 0..8),
    ) {
        let args = std::iter::once("readygate".to_string()).chain(words);
        match Cli::try_parse_from(args) {
            Err(err) => {
                use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
                // Help and version are printed, not errors; everything else is one line.
                if !matches!(err.kind(), DisplayHelp | DisplayVersion) {
                    let Exit::Usage(message) = usage_error(err) else {
                        panic!("a clap error that is not a usage error");
                    };
                    assert_one_line(&message);
                }
            }
            Ok(cli) => {
                let plan = match cli.command {
                    Command::Wait(args) => Plan::for_wait(args, &cli.log, Default::default()),
                    Command::Probe(args) => Plan::for_probe(args, &cli.log, Default::default()),
                    _ => return Ok(()),
                };
                if let Err(message) = plan {
                    assert_one_line(&message);
                }
            }
        }
    }
}
