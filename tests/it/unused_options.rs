//! An option that no target can use is a usage error naming the option and the targets, never
//! a silent no-op: `--json-field` on a port that is open would otherwise pass at once and gate
//! nothing. An option that some targets use is said on the start line with those targets.

use std::net::TcpListener;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::served::Served;
use crate::support::{readygate, TempDir};

/// The one line of a refused run, after checking its status and that it is one line.
#[track_caller]
fn refused(args: &[&str], env: Option<(&str, &str)>) -> String {
    let mut command = readygate(args);
    if let Some((name, value)) = env {
        command.env(name, value);
    }
    let outcome = command.outcome();
    outcome.expect_code(2);
    assert_eq!(outcome.stdout, "", "{args:?}");
    assert_eq!(
        outcome.stderr.lines().count(),
        1,
        "{args:?}: {}",
        outcome.stderr
    );
    outcome.stderr.trim_end().to_string()
}

#[test]
fn an_option_no_target_uses_is_refused_naming_it_and_the_targets() {
    // Open ports: a run that ignored the option would be ready at once, with status 0.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap().to_string();
    let grpc = format!("grpc://{open}");
    let redis = format!("redis://{open}");
    let http_fix = "(for an HTTP check, write the target as http://HOST:PORT/PATH)";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["wait", "--json-field", "status=UP", &open],
            format!("--json-field does nothing for {open}: it applies to http(s):// targets only {http_fix}"),
        ),
        (
            vec!["wait", "--contains", "nope", &open],
            format!("--contains does nothing for {open}: it applies to http(s):// and file targets only"),
        ),
        (
            vec!["wait", "--status", "500", &open],
            format!("--status does nothing for {open}"),
        ),
        (vec!["wait", "--matches", "^ok$", &redis], format!("--matches does nothing for {redis}")),
        (vec!["wait", "--method", "HEAD", &open], "--method does nothing".into()),
        (vec!["wait", "-H", "X-A: 1", &open], "--header does nothing".into()),
        (
            vec!["wait", "--header-matches", "Server: x", &grpc],
            format!("--header-matches does nothing for {grpc}: it applies to http(s):// targets only"),
        ),
        (
            vec!["wait", "--insecure", &redis, &open],
            format!("--insecure does nothing for {redis}, {open}: it applies to http(s)://, grpcs://, rediss://, amqps:// and kafkas:// targets only"),
        ),
        (vec!["wait", "--unix-socket", "/run/x.sock", &open], "--unix-socket does nothing".into()),
        (vec!["wait", "--k8s-serviceaccount-dir", "/x", &open], "it applies to k8s:// targets only".into()),
        (vec!["probe", "--json-field", "status=UP", &open], "--json-field does nothing".into()),
        (
            vec!["serve", "--listen", "127.0.0.1:0", "--status", "200", &open],
            "--status does nothing".into(),
        ),
    ];
    for (args, fault) in cases {
        let line = refused(&args, None);
        assert!(line.starts_with("readygate: "), "{args:?}: {line}");
        assert!(
            line.contains(&fault),
            "{args:?}: {line:?} should say {fault:?}"
        );
    }
    // From the environment, the variable is named, not an option that was not typed.
    let line = refused(&["wait", &open], Some(("READYGATE_STATUS", "500")));
    assert!(line.contains("READYGATE_STATUS does nothing for"), "{line}");
    // A file target reads its content: `--contains` applies there.
    let dir = TempDir::new();
    let file = dir.join("ready");
    std::fs::write(&file, "nope").unwrap();
    let file = file.to_str().unwrap();
    readygate(["wait", "--contains", "nope", file])
        .outcome()
        .expect_code(0);
}

#[test]
fn an_option_some_targets_use_is_said_at_the_start_with_those_targets() {
    let server = HttpServer::start(|_, _| Answer::body(r#"{"status":"UP"}"#));
    let url = server.url("/health");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap().to_string();
    let args = [
        "wait",
        "--json-field",
        "status=UP",
        "--status",
        "200",
        &open,
        &url,
    ];
    let outcome = readygate(args).outcome();
    outcome.expect_code(0).expect_stderr(&format!(
        "to be ready (--status, --json-field apply to {url} only)"
    ));
    assert!(server.hits() >= 1);

    let mut served = Served::start(&["--json-field", "status=UP", &open, &url]);
    let note = format!("(--json-field applies to {url} only)");
    assert!(
        served.running.said(&note),
        "serve's start line lacks {note}"
    );

    // `--on-exit` uses the TLS trust options: with it, `--insecure` refuses no target.
    let notice = HttpServer::start(|_, _| Answer::status(200));
    let on_exit = notice.url("/done");
    let args = [
        "wait",
        "--insecure",
        "--on-exit",
        &on_exit,
        &open,
        "--",
        "true",
    ];
    readygate(args).outcome().expect_code(0);
    assert_eq!(notice.hits(), 1);
}
