//! `redis://` and `rediss://` against real redis-servers: passwords right, wrong and absent,
//! an ACL user, a dataset still loading, a replica whose master stopped, a busy script, TLS.

use std::process::{Command, Stdio};
use std::time::Duration;

use super::{expect_hidden, probe};
use crate::support::certs::Certs;
use crate::support::daemon::require;
use crate::support::readygate;
use crate::support::redis::Redis;
use crate::support::run::RunExt;
use crate::support::TempDir;

#[test]
fn a_serving_redis_is_ready() {
    let redis = Redis::start();
    let port = redis.addr.port();
    for target in [
        format!("redis://127.0.0.1:{port}"),
        format!("redis://localhost:{port}/0"),
    ] {
        probe(&[], &[&target]).expect_code(0);
    }
}

#[test]
fn requirepass_right_wrong_and_no_password() {
    let password = "s3cret-Pa55";
    let redis = Redis::start_in(
        TempDir::new(),
        &[
            "--requirepass",
            password,
            "--user",
            "app",
            "on",
            ">app-Pa55",
            "~*",
            "&*",
            "+@all",
        ],
    );
    let at = redis.addr;
    probe(&[], &[&format!("redis://:{password}@{at}")]).expect_code(0);
    probe(&[], &[&format!("redis://app:app-Pa55@{at}")]).expect_code(0);

    let wrong = format!("redis://:wr0ng-Pa55@{at}");
    let outcome = probe(&["-v"], &[&wrong]);
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!(
            "redis://:***@{at}: AUTH: WRONGPASS invalid username-password pair or user is \
             disabled.\n"
        )
    );
    expect_hidden(&outcome, "wr0ng-Pa55");
    let outcome = probe(&["-v"], &[&format!("redis://app:{password}@{at}")]);
    outcome.expect_code(1).expect_stdout("WRONGPASS");
    expect_hidden(&outcome, password);

    // No password: the server is up, but whether it is loading cannot be seen; said once.
    let bare = format!("redis://{at}");
    let outcome = readygate([
        "wait",
        "--success-threshold",
        "3",
        "--interval",
        "10ms",
        &bare,
    ])
    .outcome();
    outcome.expect_code(0);
    assert_eq!(
        outcome.stderr.matches("wants a password").count(),
        1,
        "{outcome:#?}"
    );
}

#[test]
fn a_dataset_still_loading_is_not_ready_until_loaded() {
    // 20 000 keys loaded at 200 us each: at least 4 s of LOADING, however fast the machine.
    let seed = Redis::start_in(TempDir::new(), &["--enable-debug-command", "local"]);
    seed.cli(&["debug", "populate", "20000"]);
    seed.cli(&["save"]);
    let dir = seed.into_dir();
    let redis = Redis::start_in(
        dir,
        &[
            "--key-load-delay",
            "200",
            // Answer clients between small steps of loading, not every 2 MB.
            "--loading-process-events-interval-bytes",
            "1024",
        ],
    );
    let target = format!("redis://{}", redis.addr);
    let outcome = probe(&[], &[&target]);
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!("{target}: LOADING Redis is loading the dataset in memory\n")
    );
    let outcome = readygate(["wait", "--timeout", "60s", &target]).outcome();
    outcome
        .expect_code(0)
        .expect_stderr("LOADING")
        .expect_slower_than(Duration::from_secs(2));
    assert!(redis.daemon.log().contains("Done loading RDB"));
}

#[test]
fn a_replica_whose_master_stopped_is_not_ready() {
    let mut master = Redis::start();
    let master_port = master.addr.port().to_string();
    let replica = Redis::start_in(
        TempDir::new(),
        &[
            "--replicaof",
            "127.0.0.1",
            &master_port,
            "--replica-serve-stale-data",
            "no",
        ],
    );
    let target = format!("redis://{}", replica.addr);
    readygate(["wait", "--timeout", "20s", &target])
        .outcome()
        .expect_code(0);
    master.shutdown();
    readygate(["wait", "--invert", "--timeout", "20s", &target])
        .outcome()
        .expect_code(0);
    let outcome = probe(&[], &[&target]);
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!(
            "{target}: MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set \
             to 'no'.\n"
        )
    );
}

#[test]
fn a_server_busy_with_a_script_is_not_ready_until_it_is_killed() {
    let redis = Redis::start_in(TempDir::new(), &["--busy-reply-threshold", "100"]);
    let target = format!("redis://{}", redis.addr);
    let port = redis.addr.port().to_string();
    let mut script = Command::new(require("redis-cli"))
        .args(["-p", &port, "eval", "while true do end", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-cli eval");
    readygate(["wait", "--invert", "--timeout", "20s", &target])
        .outcome()
        .expect_code(0);
    probe(&[], &[&target])
        .expect_code(1)
        .expect_stdout("BUSY Redis is busy running a script");
    redis.cli(&["script", "kill"]);
    let _ = script.wait();
    readygate(["wait", "--timeout", "20s", &target])
        .outcome()
        .expect_code(0);
}

#[test]
fn rediss_verifies_the_servers_certificate() {
    let certs = Certs::localhost();
    let (cert, key, ca) = (
        certs.cert.to_str().unwrap(),
        certs.key.to_str().unwrap(),
        certs.ca.to_str().unwrap(),
    );
    let tls_port = crate::support::free_port();
    let _redis = Redis::start_in(
        TempDir::new(),
        &[
            "--tls-port",
            &tls_port.to_string(),
            "--tls-cert-file",
            cert,
            "--tls-key-file",
            key,
            "--tls-auth-clients",
            "no",
            "--requirepass",
            "tls-Pa55",
        ],
    );
    let target = format!("rediss://:tls-Pa55@localhost:{tls_port}");
    probe(&["--cacert", ca], &[&target]).expect_code(0);
    probe(&[], &[&target])
        .expect_code(1)
        .expect_stdout("unknown authority");
    // Plain text to the TLS port: the server waits for a handshake, then hangs up.
    probe(
        &["--attempt-timeout", "500ms"],
        &[&format!("redis://localhost:{tls_port}")],
    )
    .expect_code(1);
}
