//! `nats://` against a real nats-server, before and after it enters lame-duck mode.

use std::process::Command;

use super::probe;
use crate::support::daemon::{require, run_ok};
use crate::support::readygate;
use crate::support::run::RunExt;
use crate::support::small_servers::nats;

#[test]
fn nats_is_ready_until_lame_duck_mode() {
    let server = nats();
    let target = format!("nats://{}", server.addr);
    probe(&[], &[&target]).expect_code(0);
    run_ok(
        Command::new(require("nats-server"))
            .args(["--signal", &format!("ldm={}", server.daemon.pid())]),
    );
    // nats-server closes its client port as it enters lame-duck mode; a client that
    // connects just before reads `"ldm":true` in INFO. Either way: not ready.
    readygate(["wait", "--invert", "--timeout", "20s", &target])
        .outcome()
        .expect_code(0);
    let outcome = probe(&[], &[&target]);
    outcome.expect_code(1);
    assert!(
        outcome.stdout.contains("connection refused") || outcome.stdout.contains("lame-duck"),
        "{outcome:#?}"
    );
}
