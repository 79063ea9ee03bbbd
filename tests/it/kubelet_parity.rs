//! Parity with the kubelet's `httpGet` prober: the cases of its `pkg/probe/http` tests that
//! apply to readygate, with curl's header rules where the kubelet has none.

use crate::support::http::{Answer, HttpServer};
use crate::support::readygate;
use crate::support::run::RunExt;

/// A server that answers 200 and records what it was sent.
fn echo() -> HttpServer {
    HttpServer::start(|_, _| Answer::body("ok"))
}

/// The headers of the one request `probe ARGS... URL` sent.
fn sent(args: &[&str]) -> Vec<(String, String)> {
    let server = echo();
    let url = server.url("/");
    let mut all = args.to_vec();
    all.push(&url);
    readygate(["probe"].iter().chain(&all))
        .outcome()
        .expect_code(0);
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    seen[0].headers.clone()
}

fn values<'a>(headers: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

#[test]
fn default_headers_and_how_h_changes_them() {
    let default = sent(&[]);
    assert_eq!(values(&default, "accept"), ["*/*"]);
    let agent = values(&default, "user-agent");
    assert_eq!(agent.len(), 1);
    assert!(agent[0].starts_with("readygate/"), "{agent:?}");

    // An empty value omits the header (curl's -H "Name:", the kubelet's empty Accept).
    let omitted = sent(&["-H", "Accept:", "-H", "User-Agent:"]);
    assert!(values(&omitted, "accept").is_empty(), "{omitted:?}");
    assert!(values(&omitted, "user-agent").is_empty(), "{omitted:?}");

    let replaced = sent(&["-H", "User-Agent: foo/1.0", "-H", "Accept: text/plain"]);
    assert_eq!(values(&replaced, "user-agent"), ["foo/1.0"]);
    assert_eq!(values(&replaced, "accept"), ["text/plain"]);

    // One name given twice: both values are sent, in order.
    let twice = sent(&[
        "-H",
        "X-Muffins-Or-Cupcakes: muffins",
        "-H",
        "x-muffins-or-cupcakes: cupcakes",
    ]);
    assert_eq!(
        values(&twice, "x-muffins-or-cupcakes"),
        ["muffins", "cupcakes"]
    );

    let host = sent(&["-H", "Host: muffins.cupcakes.org"]);
    assert_eq!(values(&host, "host"), ["muffins.cupcakes.org"]);
}

#[test]
fn redirects_to_a_good_or_bad_page() {
    for status in [301, 302, 307, 308] {
        for bad in [false, true] {
            let server = HttpServer::start(move |seen, _| match seen.path.as_str() {
                "/" => Answer::status(status).header("location", "/new"),
                "/new" if bad => Answer::status(500),
                _ => Answer::status(200),
            });
            let outcome = readygate(["probe", &server.url("/")]).outcome();
            if bad {
                outcome.expect_code(1).expect_stdout("status 500");
            } else {
                outcome.expect_code(0);
            }
            assert_eq!(server.hits(), 2, "{status} {bad}");
        }
    }
}

#[test]
fn redirects_to_another_port_a_bogus_host_and_in_a_loop() {
    let newport = HttpServer::start(|seen, _| match seen.path.as_str() {
        "/success" => Answer::status(200),
        _ => Answer::status(500),
    });
    let newport_url = newport.url("");
    let server = HttpServer::start(move |seen, _| match seen.path.as_str() {
        "/loop" => Answer::status(302).header("location", "/loop"),
        path => {
            let to = path.trim_start_matches("/redirect/");
            let location = match to {
                "local-success" => "/success".to_string(),
                "newport-success" => format!("{newport_url}/success"),
                "newport-fail" => format!("{newport_url}/fail"),
                "bogus-nonlocal" => "http://0.0.0.0/fail".to_string(),
                "query-with-scheme" => "/success?next=http://0.0.0.0/fail".to_string(),
                _ if path == "/success" || path.starts_with("/success?") => {
                    return Answer::status(200)
                }
                _ => return Answer::status(500),
            };
            Answer::status(302).header("location", location)
        }
    });
    for (case, code) in [
        ("local-success", 0),
        ("local-fail", 1),
        ("newport-success", 0),
        ("newport-fail", 1),
        // Another host: the 302 is the answer (the kubelet's "warning", a success).
        ("bogus-nonlocal", 0),
        // A relative Location whose query holds "://" is still relative.
        ("query-with-scheme", 0),
    ] {
        readygate(["probe", &server.url(&format!("/redirect/{case}"))])
            .outcome()
            .expect_code(code);
    }
    let query = server
        .seen()
        .into_iter()
        .any(|s| s.path == "/success?next=http://0.0.0.0/fail");
    assert!(
        query,
        "the relative Location with :// in its query was not followed"
    );

    // As Go's client: the 10th redirect fails the attempt.
    let before = server.hits();
    readygate(["probe", &server.url("/loop")])
        .outcome()
        .expect_code(1)
        .expect_stdout("stopped after 10 redirects");
    assert_eq!(server.hits() - before, 10);
}

#[test]
fn a_custom_host_survives_a_relative_redirect_but_not_an_absolute_one() {
    let server = HttpServer::start(|seen, _| match seen.path.as_str() {
        "/relative" => Answer::status(302).header("location", "/success"),
        "/absolute" => {
            let host = seen.header("x-real-host").unwrap_or_default();
            Answer::status(302).header("location", format!("http://{host}/success"))
        }
        "/success" if seen.header("host") == Some("www.success.com") => Answer::status(200),
        _ => Answer::status(400),
    });
    let real_host = format!("X-Real-Host: {}", server.addr);
    let run = |path: &str| {
        readygate([
            "probe",
            "-H",
            "Host: www.success.com",
            "-H",
            &real_host,
            &server.url(path),
        ])
        .outcome()
    };
    run("/relative").expect_code(0);
    run("/absolute").expect_code(1).expect_stdout("status 400");
    let last = server.seen().pop().unwrap();
    assert_eq!(last.header("host"), Some(server.addr.to_string().as_str()));
}

#[test]
fn a_body_longer_than_10_kib_is_cut_and_ready() {
    let server = HttpServer::start(|_, _| Answer::body(vec![b'a'; 10 * 1024 + 1]));
    readygate(["probe", &server.url("/")])
        .outcome()
        .expect_code(0);
}
