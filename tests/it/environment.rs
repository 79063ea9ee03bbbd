//! `READYGATE_*` variables: they supply options and the command line wins; `READYGATE_DISABLED`
//! skips waiting; every boolean variable takes one syntax.

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, ms, readygate, SECOND};

#[test]
fn environment_supplies_options_and_the_command_line_wins() {
    let closed = format!("tcp://{}", closed_addr());
    readygate(["wait", &closed])
        .env("READYGATE_TIMEOUT", "300ms")
        .outcome_at(ms(300))
        .expect_code(1)
        .expect_ended_at(ms(300));
    readygate(["wait", "--timeout", "200ms", &closed])
        .env("READYGATE_TIMEOUT", "1h")
        .outcome_at(ms(200))
        .expect_code(1)
        .expect_ended_at(ms(200));
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    readygate(["wait"])
        .env(
            "READYGATE_TARGETS",
            format!("{}, {}", server.url("/a"), server.addr),
        )
        .outcome()
        .expect_code(0);
    assert_eq!(server.seen()[0].path, "/a");
    readygate(["probe", &server.url("/")])
        .env("READYGATE_STATUS", "500")
        .outcome()
        .expect_code(1);
    readygate(["wait", "-t", "300ms", &closed])
        .env("READYGATE_INVERT", "true")
        .outcome()
        .expect_code(0);
    readygate(["wait", "-t", "300ms", &closed])
        .env("READYGATE_INVERT", "false")
        .outcome()
        .expect_code(1);
}

#[test]
fn disabled_skips_all_waiting() {
    let closed = format!("tcp://{}", closed_addr());
    readygate(["wait", "-t", "10s", &closed])
        .env("READYGATE_DISABLED", "true")
        .outcome()
        .expect_code(0)
        .expect_faster_than(5 * SECOND);
    readygate(["probe", &closed])
        .env("READYGATE_DISABLED", "1")
        .outcome()
        .expect_code(0);
    let outcome = readygate(["wait", &closed, "--", "echo", "went straight"])
        .env("READYGATE_DISABLED", "true")
        .outcome();
    outcome.expect_code(0).expect_stdout("went straight");
    readygate(["wait", "-t", "200ms", &closed])
        .env("READYGATE_DISABLED", "false")
        .outcome()
        .expect_code(1);
}

#[test]
fn every_boolean_variable_takes_one_syntax() {
    let closed = format!("tcp://{}", closed_addr());
    // --invert on a closed port: true is ready (0), false is not (1).
    for (value, code) in [
        ("true", 0),
        ("TRUE", 0),
        ("1", 0),
        ("yes", 0),
        ("Yes", 0),
        ("on", 0),
        ("false", 1),
        ("0", 1),
        ("no", 1),
        ("NO", 1),
        ("off", 1),
        ("", 1),
    ] {
        readygate(["probe", &closed])
            .env("READYGATE_INVERT", value)
            .outcome()
            .expect_code(code);
    }
    readygate(["probe", &closed])
        .env("READYGATE_DISABLED", "YES")
        .outcome()
        .expect_code(0);
    for variable in [
        "READYGATE_INVERT",
        "READYGATE_ANY",
        "READYGATE_INSECURE",
        "READYGATE_QUIET",
        "READYGATE_VERBOSE",
        "READYGATE_DISABLED",
    ] {
        let outcome = readygate(["probe", &closed])
            .env(variable, "maybe")
            .outcome();
        outcome.expect_code(2);
        assert_eq!(
            outcome.stderr,
            format!(
                "readygate: {variable}=\"maybe\" is not a boolean: use true or false (1/0, yes/no)\n"
            )
        );
    }
}
