//! Secrets that reach readygate's output by another way than its own printing: a peer that
//! quotes back what it was sent (a real redis-server with `AUTH` renamed away, an API server
//! whose 400 quotes the bearer token, an HTTP server that echoes a secret header), and secrets
//! no parser sees whole (a URL password holding white space given to `--timeout`,
//! `--unix-socket` or as COMMAND; a malformed `-H` whose name looks secret). Every output is
//! searched: stdout, stderr (text and JSON, with and without `-v`), the termination log and
//! the `--on-exit` request.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::support::http::{Answer, HttpServer, Seen};
use crate::support::kube::ApiServer;
use crate::support::redis::Redis;
use crate::support::run::RunExt;
use crate::support::served::Served;
use crate::support::{readygate, TempDir};

/// A sidecar for `--on-exit`: answers every request 200 and keeps every byte it was sent.
struct Notices {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<u8>>>,
}

impl Notices {
    fn start() -> Notices {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = received.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().map_while(Result::ok) {
                let request = read_request(&mut stream);
                kept.lock().unwrap().extend(request);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
            }
        });
        Notices { addr, received }
    }

    fn url(&self) -> String {
        format!("http://{}/done", self.addr)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap()).into_owned()
    }
}

/// One HTTP/1 request: its head, and the body its `content-length` announces.
fn read_request(stream: &mut std::net::TcpStream) -> Vec<u8> {
    let mut request = Vec::new();
    let mut byte = [0; 1];
    while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        request.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&request).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = stream.read_exact(&mut body);
    request.extend(body);
    request
}

/// Every way output leaves: `probe` (stdout; stderr with `-v`, text and JSON) and `wait` (text,
/// JSON, `-v`), each with a termination log, `wait` also with `--on-exit`.
const MODES: [&[&str]; 6] = [
    &["probe"],
    &["probe", "-v"],
    &["probe", "-v", "--log-format", "json"],
    &["wait", "-t", "700ms"],
    &["wait", "-t", "700ms", "-v"],
    &["wait", "-t", "700ms", "-v", "--log-format", "json"],
];

/// Runs `target` with `extra` options in every mode (`command` makes the command from its
/// arguments), and panics if any output holds one of `shown_nowhere`. Returns every output of
/// every run, joined, for the caller to check what was said instead.
#[track_caller]
fn every_output(
    command: impl Fn(&[&str]) -> Command,
    extra: &[&str],
    target: &str,
    shown_nowhere: &[&str],
) -> String {
    let dir = TempDir::new();
    let log = dir.join("termination-log");
    let notices = Notices::start();
    let mut all = String::new();
    for mode in MODES {
        let mut args: Vec<&str> = mode.to_vec();
        args.extend(extra);
        let log = log.to_str().unwrap();
        args.extend(["--attempt-timeout", "500ms", "--termination-log", log]);
        args.push(target);
        let on_exit = notices.url();
        if mode[0] == "wait" {
            args.extend(["--interval", "100ms", "--on-exit", &on_exit, "--", "true"]);
        }
        let outcome = command(&args).outcome();
        outcome.expect_code(1);
        let written = std::fs::read_to_string(log).expect("termination log");
        let _ = std::fs::remove_file(log);
        let outputs = [
            ("stdout", &outcome.stdout),
            ("stderr", &outcome.stderr),
            ("termination log", &written),
        ];
        for (name, text) in outputs {
            expect_none(&format!("{mode:?} {name}"), text, shown_nowhere, &outcome);
            all.push_str(text);
        }
    }
    let notices = notices.text();
    assert_eq!(notices.matches("POST /done").count(), 3, "{notices}");
    expect_none("--on-exit requests", &notices, shown_nowhere, &notices);
    all
}

#[track_caller]
fn expect_none(what: &str, text: &str, secrets: &[&str], context: &dyn std::fmt::Debug) {
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{what}: {secret:?} shown in {text:?}\n{context:#?}"
        );
    }
}

/// A redis-server that answers `AUTH` with "unknown command", quoting its arguments.
fn redis_without_auth() -> Redis {
    Redis::start_in(TempDir::new(), &["--rename-command", "AUTH", ""])
}

#[test]
fn a_password_redis_quotes_back_is_never_shown() {
    let redis = redis_without_auth();
    let at = redis.addr;
    // The target; what must show nowhere (the password and pieces of it, as sent and as
    // written in the URL); what the reason says instead.
    let long = "Lp9-".repeat(50);
    let cases: Vec<(String, Vec<&str>, &str)> = vec![
        (
            format!("redis://app:hunter2%40Echo-77@{at}"),
            vec!["hunter2", "Echo-77", "%40Echo"],
            "'app' '***'",
        ),
        (
            format!("redis://:Zq7xKx9Wm4-p4ss@{at}"),
            vec!["Zq7xKx9Wm4", "p4ss"],
            "'***'",
        ),
        (
            format!("redis://:say%22hi%22-Pa55@{at}"),
            vec!["Pa55", "say\"hi", "say\\\"hi", "say%22"],
            "'***'",
        ),
        // Redis quotes only the first 128 bytes of the arguments: a prefix is hidden too.
        (
            format!("redis://:{long}@{at}"),
            vec!["Lp9-Lp9-Lp9-"],
            "'***",
        ),
        // A short password is hidden where it stands alone.
        (format!("redis://:pw@{at}"), vec!["'pw'"], "'***'"),
    ];
    for (target, hidden, instead) in cases {
        let all = every_output(run, &[], &target, &hidden);
        assert!(all.contains("unknown command 'AUTH'"), "{target}: {all}");
        assert!(all.contains(instead), "{target}: {all}");
    }
}

#[test]
fn a_password_redis_quotes_back_is_never_in_an_answer_of_serve() {
    let redis = redis_without_auth();
    let target = format!("redis://app:hunter2%40Echo-77@{}", redis.addr);
    let mut served = Served::start(&["-v", "--fresh-for", "0", &target]);
    let answer = served.get("/ready");
    assert_eq!(answer.status, 503, "{answer:?}");
    assert!(answer.body.contains("'app' '***'"), "{answer:?}");
    served.running.signal(libc::SIGTERM);
    let ended = served.running.finish();
    for piece in ["hunter2", "Echo-77", "%40Echo"] {
        assert!(!answer.body.contains(piece), "{piece} shown: {answer:?}");
        assert!(!ended.stderr.contains(piece), "{piece} shown: {ended:#?}");
    }
    assert!(
        ended.stderr.contains("unknown command 'AUTH'"),
        "{ended:#?}"
    );
}

#[test]
fn probe_says_nothing_on_stderr_of_a_redis_that_wants_a_password() {
    let redis = Redis::start_in(TempDir::new(), &["--requirepass", "needed-Pa55"]);
    let target = format!("redis://{}", redis.addr);
    let outcome = readygate(["probe", &target]).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stderr, "", "{outcome:#?}");
    // wait says it, and -v too, with the hint as written.
    let hint = "give it as redis://:PASSWORD@HOST";
    readygate(["wait", &target])
        .outcome()
        .expect_code(0)
        .expect_stderr(hint);
    readygate(["probe", "-v", &target])
        .outcome()
        .expect_code(0)
        .expect_stderr(hint);
}

/// A token longer than the 200 characters of a server's message that are kept.
fn long_token() -> String {
    format!("eyJhbGciOiJSUzI1NiJ9.{}.c2ln", "TG9uZ1Rva2Vu".repeat(60))
}

/// How a server quotes the `Authorization` header it got.
type Quote = fn(&str) -> String;

#[test]
fn a_token_the_api_server_quotes_back_is_never_shown() {
    let short = "eyJhbGciOiJSUzI1NiJ9.ZWNob2Vk.c2lnbmF0dXJl";
    let quotes: [(&str, Quote); 3] = [
        ("as sent", |authorization| {
            format!("invalid bearer token in header {authorization:?}")
        }),
        ("alone", |authorization| {
            let token = authorization.trim_start_matches("Bearer ");
            format!("token {token} is malformed")
        }),
        ("percent-encoded", |authorization| {
            let encoded: String = authorization
                .bytes()
                .map(|b| match b.is_ascii_alphanumeric() {
                    true => (b as char).to_string(),
                    false => format!("%{b:02x}"),
                })
                .collect();
            format!("bad header {encoded}")
        }),
    ];
    let long = long_token();
    for token in [short, long.as_str()] {
        for (how, quote) in quotes {
            let api = ApiServer::start(token);
            api.refuse_quoting(quote);
            let command = |args: &[&str]| {
                let mut command = api.readygate([]);
                command.args(args);
                command
            };
            // Each part of the token (up to 16 characters of it), in every form.
            let parts: Vec<&str> = token
                .split('.')
                .filter(|part| part.len() >= 8)
                .map(|part| &part[..part.len().min(16)])
                .collect();
            let all = every_output(command, &[], "k8s://job/migrate", &parts);
            assert!(
                all.contains("status 400 from the API server"),
                "{how}: {all}"
            );
            assert!(all.contains("***"), "{how}: {all}");
        }
    }
}

/// `readygate ARGS`.
fn run(args: &[&str]) -> Command {
    readygate(args)
}

/// The secret headers' values a request carried: `X-Api-Key`, the bearer token, `Cookie`.
fn echo(seen: &Seen) -> (String, String, String) {
    let value = |name| seen.header(name).unwrap_or_default().to_string();
    let token = value("authorization").replace("Bearer ", "");
    (value("x-api-key"), token, value("cookie"))
}

#[test]
fn secret_header_values_a_server_echoes_are_never_shown() {
    let headers = [
        "-H",
        "X-Api-Key: key-Echo-4411",
        "-H",
        "Authorization: Bearer tok-Echo-5522",
        "-H",
        "Cookie: theme=dark; session=sess-Echo-6633",
    ];
    let secrets = ["key-Echo-4411", "tok-Echo-5522", "sess-Echo-6633"];
    // In the body, with --contains failing.
    let body = HttpServer::start(move |seen, _| {
        let (key, token, cookie) = echo(seen);
        Answer::body(format!("key={key} token={token} cookie={cookie}"))
    });
    let mut extra = headers.to_vec();
    extra.extend(["--contains", "welcome"]);
    let all = every_output(run, &extra, &body.url("/"), &secrets);
    assert!(all.contains("did not contain"), "{all}");
    // In a redirect that cannot be followed: the reason quotes its Location.
    let locations: [fn(&Seen) -> String; 3] = [
        |seen| format!("http://127.0.0.1:99999/{}", echo(seen).0),
        |seen| format!("http://[::1/?t={}", echo(seen).1),
        |seen| {
            format!(
                "http://127.0.0.1:99999/{}",
                echo(seen).2.replace(' ', "%20")
            )
        },
    ];
    for location in locations {
        let server = HttpServer::start(move |seen, _| {
            Answer::status(302).header("location", location(seen))
        });
        let all = every_output(run, &headers, &server.url("/"), &secrets);
        assert!(all.contains("redirect to an invalid location"), "{all}");
    }
}

/// URL passwords holding white space (ASCII and Unicode), given where no target parser reads
/// them: the pieces around the white space must not show.
const SPACED: [&str; 5] = [" ", "\t", "\u{2003}", "\u{a0}", "\u{3000}"];

#[test]
fn a_spaced_password_given_to_timeout_is_never_shown() {
    for space in SPACED {
        let url = format!("http://user:Zq7{space}Kx9@127.0.0.1:1/");
        let outcome = readygate(["wait", "--timeout", &url, "127.0.0.1:1"]).outcome();
        outcome.expect_code(2).expect_stderr("--timeout");
        expect_none("--timeout", &outcome.stderr, &["Zq7", "Kx9"], &outcome);
        let outcome = readygate(["probe", "127.0.0.1:1"])
            .env("READYGATE_TIMEOUT", &url)
            .outcome();
        outcome.expect_code(2);
        expect_none(
            "READYGATE_TIMEOUT",
            &outcome.stderr,
            &["Zq7", "Kx9"],
            &outcome,
        );
    }
}

#[test]
fn a_spaced_password_given_to_unix_socket_is_never_shown() {
    for space in SPACED {
        let url = format!("http://user:Zq7{space}Kx9@app.local/");
        let outcome =
            readygate(["probe", "-v", "--unix-socket", &url, "http://app.local/"]).outcome();
        outcome.expect_code(1).expect_stdout("no socket at");
        expect_none("--unix-socket", &outcome.stdout, &["Zq7", "Kx9"], &outcome);
        expect_none("--unix-socket", &outcome.stderr, &["Zq7", "Kx9"], &outcome);
    }
}

#[test]
fn a_spaced_password_given_as_the_command_is_never_shown() {
    let dir = TempDir::new();
    let ready = dir.0.to_str().unwrap();
    let notices = Notices::start();
    for space in SPACED {
        let command = format!("redis://:Zq7{space}Kx9@cache");
        for on_exit in [vec![], vec!["--on-exit".to_string(), notices.url()]] {
            let outcome = readygate(["wait", "-v", ready])
                .args(&on_exit)
                .args(["--", &command, "x"])
                .outcome();
            outcome.expect_code(127).expect_stderr("cannot run");
            expect_none("COMMAND", &outcome.stderr, &["Zq7", "Kx9"], &outcome);
        }
    }
}

#[test]
fn a_secret_query_value_holding_white_space_is_never_shown() {
    for space in SPACED {
        let target = format!("http://127.0.0.1:1/?token=Zq7{space}Kx9");
        // Refused as a target (2), or, where the URL parser takes the space, not ready (1).
        let outcome = readygate(["probe", &target]).outcome();
        let all = format!("{}{}", outcome.stdout, outcome.stderr);
        assert!(matches!(outcome.code, Some(1 | 2)), "{outcome:#?}");
        assert!(all.contains("token=***"), "{outcome:#?}");
        expect_none("query", &all, &["Zq7", "Kx9"], &outcome);
    }
}

#[test]
fn a_malformed_header_whose_name_looks_secret_never_shows_its_value() {
    for (typed, shown) in [
        ("X-Auth-Token=abc123value", "X-Auth-Token: ***"),
        ("X-Api-Key abc123value", "X-Api-Key: ***"),
        ("X-Api-Key\tabc123value", "X-Api-Key: ***"),
        ("Private-Token\u{2003}abc123value", "Private-Token: ***"),
        ("X-Vault-Token  abc123value", "X-Vault-Token: ***"),
        ("api_key=abc123value", "api_key: ***"),
        (
            "X-Amz-Security-Token abc:123value",
            "X-Amz-Security-Token: ***",
        ),
        ("X-Auth-Tokenabc123value", "invalid header \"***\""),
    ] {
        let by_flag = readygate(["probe", "-H", typed, "127.0.0.1:1"]).outcome();
        let by_variable = readygate(["probe", "127.0.0.1:1"])
            .env("READYGATE_HEADER", typed)
            .outcome();
        for outcome in [by_flag, by_variable] {
            outcome.expect_code(2).expect_stderr(shown);
            assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
            expect_none(typed, &outcome.stderr, &["abc", "123value"], &outcome);
        }
    }
}
