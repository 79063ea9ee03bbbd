//! Security: secrets (Authorization, Proxy-Authorization and Cookie values, URL passwords) never
//! reach any output — stderr at every verbosity and format, probe's stdout, the termination
//! log — of runs that fail in every way we can provoke; no shell ever reads user input; readygate
//! never listens on a socket; `--insecure` says so once.

use crate::support::certs::Certs;
use crate::support::http::{Answer, HttpServer};
use crate::support::raw::{self, Peer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate, wait_until, Running, TempDir};

/// Each secret in a form that may appear in output: as given, and base64-encoded in a Basic
/// authorization header (`user:url-pass-7f3a`).
const SECRETS: [&str; 6] = [
    "bearer-token-9c1e",
    "proxy-pass-2d4b",
    "session-cookie-5a8f",
    "url-pass-7f3a",
    "dXNlcjp1cmwtcGFzcy03ZjNh",
    "redirect-pass-6b2c",
];

/// The headers that carry the first three secrets.
fn secret_headers() -> Vec<String> {
    vec![
        "-H".into(),
        "Authorization: Bearer bearer-token-9c1e".into(),
        "--header".into(),
        "Proxy-Authorization: Basic proxy-pass-2d4b".into(),
        "-H".into(),
        "Cookie: session=session-cookie-5a8f".into(),
    ]
}

/// Panics if any secret appears in `text`.
#[track_caller]
fn expect_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{what}: {secret} leaked in:\n{text}"
        );
    }
}

/// Every output mode: the log levels and formats of `wait`, and `probe`.
fn modes() -> Vec<Vec<&'static str>> {
    vec![
        vec!["wait", "-t", "500ms"],
        vec!["wait", "-t", "500ms", "-v"],
        vec!["wait", "-t", "500ms", "-q"],
        vec!["wait", "-t", "500ms", "--log-format", "json"],
        vec!["wait", "-t", "500ms", "-v", "--log-format", "json"],
        vec!["probe"],
        vec!["probe", "-v", "--log-format", "json"],
    ]
}

/// Runs every mode against `url` with the secret headers and a termination log, and greps
/// stdout, stderr and the log for secrets. Returns how many runs wrote something.
fn grep_all_output(url: &str, extra: &[&str]) -> usize {
    let dir = TempDir::new();
    let log = dir.join("termination-log");
    let mut spoke = 0;
    for mode in modes() {
        let mut command = readygate(&mode);
        command
            .args(secret_headers())
            .args(["--attempt-timeout", "200ms", "--termination-log"])
            .arg(&log)
            .args(extra)
            .arg(url);
        let outcome = command.outcome();
        let what = format!("{mode:?} {url}");
        assert_eq!(outcome.code, Some(1), "{what}: {outcome:#?}");
        expect_no_secret(&what, &outcome.stdout);
        expect_no_secret(&what, &outcome.stderr);
        let written = std::fs::read_to_string(&log).expect("termination log written");
        expect_no_secret(&what, &written);
        assert!(
            written.contains("not ready"),
            "{what}: termination log {written:?}: {outcome:#?}"
        );
        spoke += usize::from(!outcome.stderr.is_empty() || !outcome.stdout.is_empty());
    }
    spoke
}

#[test]
fn secrets_never_reach_any_output_of_a_failing_http_wait() {
    let server = HttpServer::start(|_, _| Answer::status(401).header("www-authenticate", "Basic"));
    let url = format!("http://user:url-pass-7f3a@{}/private", server.addr);
    let spoke = grep_all_output(&url, &[]);
    assert!(spoke >= 6, "the runs must have said something to grep");
    // The secrets were really sent: the test greps output that had them at hand.
    let seen = &server.seen()[0];
    assert_eq!(
        seen.header("authorization"),
        Some("Bearer bearer-token-9c1e")
    );
    assert_eq!(
        seen.header("proxy-authorization"),
        Some("Basic proxy-pass-2d4b")
    );
    assert_eq!(seen.header("cookie"), Some("session=session-cookie-5a8f"));
}

#[test]
fn secrets_never_reach_output_when_failures_are_transport_errors() {
    // Refused, reset, timed out, too large, not HTTP: errors from every layer of the request.
    let closed = closed_addr();
    let silent = Peer::start(raw::silent);
    let reset = Peer::start(raw::reset_in_head);
    let huge = Peer::start(raw::huge_header);
    for addr in [closed, silent.addr, reset.addr, huge.addr] {
        let url = format!("http://user:url-pass-7f3a@{addr}/");
        grep_all_output(&url, &[]);
    }
    // Through a Unix socket that is not there.
    let dir = TempDir::new();
    let socket = dir.join("none.sock");
    grep_all_output(
        "http://user:url-pass-7f3a@app.local/",
        &["--unix-socket", socket.to_str().unwrap()],
    );
}

#[test]
fn secrets_never_reach_output_through_redirects() {
    let server = HttpServer::start(move |seen, _| match seen.path.as_str() {
        // Same host, credentials in the Location: followed, then failing.
        "/start" => Answer::status(302).header(
            "location",
            format!(
                "http://admin:redirect-pass-6b2c@{}/next",
                seen.header("host").unwrap_or_default()
            ),
        ),
        "/next" => Answer::status(503),
        // A loop whose every hop carries the credentials.
        "/loop" => Answer::status(307).header("location", "/loop"),
        // Another host: the 3xx is the answer; the Location is never printed.
        _ => Answer::status(301).header("location", "http://admin:redirect-pass-6b2c@192.0.2.1/"),
    });
    for path in ["/start", "/loop", "/elsewhere"] {
        let url = format!("http://user:url-pass-7f3a@{}{path}", server.addr);
        grep_all_output(&url, &["--status", "200"]);
    }
    let followed: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.path == "/next")
        .collect();
    assert!(!followed.is_empty(), "the same-host redirect was followed");
    // -H Authorization wins over URL credentials, after a redirect too.
    assert_eq!(
        followed[0].header("authorization"),
        Some("Bearer bearer-token-9c1e")
    );
}

#[test]
fn credentials_are_not_carried_to_another_origin() {
    let other = HttpServer::start(|_, _| Answer::body("other origin"));
    let other_port = other.addr.port();
    let first = HttpServer::start(move |seen, _| match seen.path.as_str() {
        "/start" => Answer::status(302).header("location", "/same"),
        "/same" => Answer::status(307).header(
            "location",
            format!("http://127.0.0.1:{other_port}/elsewhere"),
        ),
        _ => Answer::status(500),
    });
    let url = format!("http://user:p%40ss@{}/start", first.addr);
    readygate([
        "probe",
        "-H",
        "Authorization: Bearer bearer-token-9c1e",
        "-H",
        "Cookie: session=session-cookie-5a8f",
        "-H",
        "X-Api-Key: api-key-3e7d",
        "-H",
        "Proxy-Authorization: Basic proxy-pass-2d4b",
        "-H",
        "X-Plain: plain",
        "--contains",
        "other origin",
        &url,
    ])
    .outcome()
    .expect_code(0);
    // The same origin, through a relative redirect: everything goes along.
    let hops = first.seen();
    assert_eq!(hops.len(), 2, "{hops:#?}");
    for hop in &hops {
        assert_eq!(
            hop.header("authorization"),
            Some("Bearer bearer-token-9c1e")
        );
        assert_eq!(hop.header("cookie"), Some("session=session-cookie-5a8f"));
        assert_eq!(hop.header("x-api-key"), Some("api-key-3e7d"));
    }
    // Another port of the same host: followed (the kubelet's rule), secrets stripped (curl's).
    let elsewhere = &other.seen()[0];
    assert_eq!(elsewhere.path, "/elsewhere");
    for name in [
        "authorization",
        "cookie",
        "x-api-key",
        "proxy-authorization",
    ] {
        assert_eq!(elsewhere.header(name), None, "{name} was carried over");
    }
    assert_eq!(elsewhere.header("x-plain"), Some("plain"));

    // URL credentials alone: percent-decoded for Basic, and not carried either.
    first_hop_basic_auth(&url, &other);
}

#[test]
fn credentials_are_not_carried_to_another_scheme_on_the_same_port() {
    // One port takes both HTTPS and plain HTTP: each redirects to the other scheme, keeping the
    // host and port; only the scheme tells the origins apart.
    let certs = Certs::localhost();
    let server = HttpServer::start_tls_and_plain(&certs, |seen, _| {
        let port = seen.header("host").unwrap_or_default().to_string();
        match seen.path.as_str() {
            "/to-clear-text" => {
                Answer::status(302).header("location", format!("http://{port}/in-clear"))
            }
            "/to-tls" => Answer::status(302).header("location", format!("https://{port}/in-tls")),
            _ => Answer::body(if seen.tls {
                "over tls"
            } else {
                "in clear text"
            }),
        }
    });
    let secret_names = [
        "authorization",
        "cookie",
        "x-api-key",
        "proxy-authorization",
    ];
    for (from, to, arrived) in [
        ("https", "/to-clear-text", "in clear text"),
        ("http", "/to-tls", "over tls"),
    ] {
        let url = format!("{from}://user:url-pass-7f3a@{}{to}", server.addr);
        let before = server.hits();
        readygate(["probe", "--cacert"])
            .arg(&certs.ca)
            .args(secret_headers())
            .args(["-H", "X-Api-Key: api-key-3e7d", "--contains", arrived, &url])
            .outcome()
            .expect_code(0);
        let hops = &server.seen()[before..];
        assert_eq!(hops.len(), 2, "{url}: {hops:#?}");
        assert_eq!(hops[0].tls, from == "https", "{hops:#?}");
        assert_eq!(
            hops[0].header("authorization"),
            Some("Bearer bearer-token-9c1e"),
            "the first hop carries the secrets: {hops:#?}"
        );
        for name in secret_names {
            assert_eq!(hops[1].header(name), None, "{url}: {name} was carried over");
        }
    }
}

/// `user:p%40ss` is sent as `user:p@ss` to the URL's origin, and to no other.
fn first_hop_basic_auth(url: &str, other: &HttpServer) {
    let before = other.hits();
    readygate(["probe", url]).outcome().expect_code(0);
    let seen = other.seen();
    assert_eq!(seen.len(), before + 1);
    assert_eq!(seen[before].header("authorization"), None);
    let first = HttpServer::start(|_, _| Answer::body("ok"));
    let url = format!("http://user:p%40ss@{}/", first.addr);
    readygate(["probe", &url]).outcome().expect_code(0);
    // base64("user:p@ss")
    assert_eq!(
        first.seen()[0].header("authorization"),
        Some("Basic dXNlcjpwQHNz")
    );
}

#[test]
fn secrets_never_reach_the_usage_error_of_a_malformed_value() {
    let bad_headers = [
        "Authorization: Bearer \u{1}bearer-token-9c1e",
        "Authorization bearer-token-9c1e",
        "Authorization\tbearer-token-9c1e",
        "Proxy-Authorization: Basic proxy-pass-2d4b\u{7f}",
        "cookie : session=\u{1b}session-cookie-5a8f",
        "Cookie=session-cookie-5a8f",
        "Authorization Basic admin:bearer-token-9c1e",
    ];
    for header in bad_headers {
        let outcome = readygate(["wait", "-H", header, "db:1"]).outcome();
        outcome.expect_code(2).expect_stderr("--header");
        expect_no_secret(header, &outcome.stderr);
        let outcome = readygate(["probe", "db:1"])
            .env("READYGATE_HEADER", header)
            .outcome();
        outcome.expect_code(2).expect_stderr("READYGATE_HEADER");
        expect_no_secret(header, &outcome.stderr);
    }
    let bad_urls = [
        "http://user:url-pass-7f3a@127.0.0.1:0/",
        "http://user:url-pass-7f3a@127.0.0.1:99999/",
        "http://user:url-pass-7f3a@127.0.0.1:port/",
        "http://user:url-pass-7f3a@/",
        "http://user:url-pass-7f3a@h/a b",
        "https://user:url-pass-7f3a@bad host/",
        "https://url-pass-7f3a@[zz]/",
        // A password holding an unencoded `#`, `/` or `?` ends the authority early.
        "http://user:url-pass-7f3a#x@127.0.0.1:1/",
        "http://user:x/url-pass-7f3a@127.0.0.1:1/",
        "http://user:url-pass-7f3a?x@127.0.0.1:1/",
        // One slash after the scheme.
        "http:/user:url-pass-7f3a@127.0.0.1:1/",
    ];
    for url in bad_urls {
        let outcome = readygate(["wait", url]).outcome();
        outcome.expect_code(2).expect_stderr("invalid target");
        expect_no_secret(url, &outcome.stderr);
        let outcome = readygate(["wait"])
            .env("READYGATE_TARGETS", format!("db:1,{url}"))
            .outcome();
        outcome.expect_code(2);
        expect_no_secret(url, &outcome.stderr);
        let outcome = readygate(["wait", "--on-exit", url, "db:1", "--", "true"]).outcome();
        outcome.expect_code(2).expect_stderr("--on-exit");
        expect_no_secret(url, &outcome.stderr);
    }
}

#[test]
fn a_url_given_as_another_options_value_is_redacted_in_the_usage_error() {
    let url = "http://user:url-pass-7f3a@127.0.0.1:1/";
    for option in [
        "--timeout",
        "--interval",
        "--status",
        "--method",
        "--success-threshold",
    ] {
        let outcome = readygate(["wait", option, url, "db:1"]).outcome();
        outcome
            .expect_code(2)
            .expect_stderr(option)
            .expect_stderr("user:***@");
        expect_no_secret(option, &outcome.stderr);
    }
    let outcome = readygate(["wait", "db:1"])
        .env("READYGATE_TIMEOUT", url)
        .outcome();
    outcome.expect_code(2);
    expect_no_secret("READYGATE_TIMEOUT", &outcome.stderr);
}

#[test]
fn secret_query_values_never_reach_any_output() {
    let server = HttpServer::start(|_, _| Answer::status(503));
    for query in [
        "token=url-pass-7f3a",
        "api_key=url-pass-7f3a&page=2",
        "X-Amz-Signature=url-pass-7f3a",
        "sig=url-pass-7f3a",
        "access_token=url-pass-7f3a",
        "client_secret=url-pass-7f3a",
    ] {
        let url = format!("http://{}/ready?{query}", server.addr);
        grep_all_output(&url, &[]);
        let outcome = readygate(["probe", &url]).outcome();
        outcome.expect_code(1).expect_stdout("=***");
    }
    // The request itself still carries the value.
    assert!(server.seen()[0].path.contains("url-pass-7f3a"));
}

#[test]
fn no_shell_ever_reads_user_input() {
    let dir = TempDir::new();
    let marker = dir.join("pwned");
    let injection = format!("$(touch {0}); `touch {0}`; touch {0}", marker.display());
    // As COMMAND's arguments: passed as they are, to a program that prints them.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let open = format!("tcp://{}", listener.local_addr().unwrap());
    let outcome = readygate(["wait", "-q", &open, "--", "printf", "%s\n", &injection]).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stdout, format!("{injection}\n"));
    // As COMMAND itself: one program name, not found.
    readygate(["wait", "-q", &open, "--", &injection])
        .outcome()
        .expect_code(127);
    // As a target, a header, a matcher: data, never run.
    readygate(["wait", &injection]).outcome().expect_code(2);
    let server = HttpServer::start(|_, _| Answer::status(200));
    readygate([
        "probe",
        "-H",
        &format!("X-Evil: {injection}"),
        &server.url("/"),
    ])
    .outcome()
    .expect_code(0);
    let file = dir.join("content");
    std::fs::write(&file, "ready").unwrap();
    readygate(["probe", "--contains", &injection, file.to_str().unwrap()])
        .outcome()
        .expect_code(1);
    assert!(!marker.exists(), "something ran a shell on user input");
}

/// The socket inodes among `pid`'s open descriptors.
fn socket_inodes(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd list")
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            link.strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_string)
        })
        .collect()
}

/// The inodes of listening sockets in this network namespace: TCP (v4 and v6) in state LISTEN
/// (0A) and Unix sockets accepting connections.
fn listening_inodes() -> Vec<String> {
    let mut inodes = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields[3] == "0A" {
                inodes.push(fields[9].to_string());
            }
        }
    }
    let unix = std::fs::read_to_string("/proc/net/unix").unwrap();
    for line in unix.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // Flags 00010000 is __SO_ACCEPTCON: a listening socket.
        if fields[3] == "00010000" {
            inodes.push(fields[6].to_string());
        }
    }
    inodes
}

#[test]
fn readygate_never_listens_on_a_socket() {
    let silent = Peer::start(raw::silent);
    let dir = TempDir::new();
    let file = dir.join("never");
    let unix = dir.join("none.sock");
    let closed = format!("tcp://{}", closed_addr());
    let others = [
        closed.clone(),
        "localhost:1".into(),
        file.to_str().unwrap().to_string(),
        format!("unix://{}", unix.display()),
    ];
    let runs: Vec<(Vec<String>, &[String])> = vec![
        (
            [
                vec![
                    "wait".into(),
                    "-v".into(),
                    "-t".into(),
                    "10s".into(),
                    "--attempt-timeout".into(),
                    "10s".into(),
                    silent.url("http", "/"),
                ],
                others.to_vec(),
            ]
            .concat(),
            &others,
        ),
        (
            vec![
                "probe".into(),
                "-t".into(),
                "10s".into(),
                "--attempt-timeout".into(),
                "10s".into(),
                silent.url("http", "/"),
            ],
            &[],
        ),
    ];
    for (args, others) in runs {
        let before = silent.accepted();
        let mut running = Running::spawn(&mut readygate(&args));
        wait_until("a connection to the silent peer", || {
            silent.accepted() > before
        });
        // Every other kind of target has made an attempt too.
        let attempts: Vec<String> = others.iter().map(|t| format!("{t}: attempt 1: ")).collect();
        running.lines(&attempts);
        let sockets = socket_inodes(running.pid());
        let listening = listening_inodes();
        assert!(
            !sockets.is_empty(),
            "the run holds its connection to the silent peer"
        );
        let open: Vec<_> = sockets.iter().filter(|s| listening.contains(s)).collect();
        assert!(open.is_empty(), "{args:?}: listening sockets {open:?}");
        running.signal(libc::SIGTERM);
        running.finish().expect_code(143);
    }
}

#[test]
fn insecure_says_so_once() {
    let silent = Peer::start(raw::silent);
    let outcome = readygate([
        "wait",
        "--insecure",
        "-t",
        "1500ms",
        "--attempt-timeout",
        "200ms",
        &silent.url("https", "/"),
    ])
    .outcome();
    outcome.expect_code(1);
    assert!(silent.accepted() >= 3, "several attempts, one warning");
    let warnings = outcome
        .stderr
        .lines()
        .filter(|line| line.contains("WARN") && line.contains("--insecure"))
        .count();
    assert_eq!(warnings, 1, "{outcome:#?}");
}
