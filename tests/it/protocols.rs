//! The protocol targets (`postgres://`, `redis://`, `mysql://`, `amqp://`, `memcached://`,
//! `nats://`, `zk://`, `kafka://`, `dns://`) against the real servers from Debian's packages
//! (Kafka's from Maven Central), started by the suite, in each state the issue names; and
//! against peers that speak no protocol at all.

mod amqp;
mod dns;
mod hostile;
mod kafka;
mod kafka_fake;
mod memcached;
mod mysql;
mod nats;
mod postgres;
mod redis;
mod zookeeper;

use crate::support::readygate;
use crate::support::run::{Outcome, RunExt};

/// `readygate probe TARGET…` with `extra` options first.
fn probe(extra: &[&str], targets: &[&str]) -> Outcome {
    let mut args = vec!["probe"];
    args.extend_from_slice(extra);
    args.extend_from_slice(targets);
    readygate(&args).outcome()
}

/// Panics unless nothing in the outcome shows `secret`.
#[track_caller]
fn expect_hidden(outcome: &Outcome, secret: &str) {
    assert!(
        !outcome.stdout.contains(secret) && !outcome.stderr.contains(secret),
        "{secret:?} shown: {outcome:#?}"
    );
}
