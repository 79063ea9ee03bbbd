//! `amqp://` and `amqps://` against a real RabbitMQ.

use super::probe;
use crate::support::rabbitmq::shared;

#[test]
fn rabbitmq_answers_the_protocol_header() {
    let broker = shared();
    let ca = broker.ca.to_str().unwrap();
    probe(&[], &[&format!("amqp://{}", broker.amqp)]).expect_code(0);
    probe(
        &["--cacert", ca],
        &[&format!("amqps://localhost:{}", broker.amqps.port())],
    )
    .expect_code(0);
    probe(
        &[],
        &[&format!("amqps://localhost:{}", broker.amqps.port())],
    )
    .expect_code(1)
    .expect_stdout("unknown authority");
    probe(&["--invert"], &[&format!("amqp://{}", broker.amqp)]).expect_code(1);
}

#[test]
fn other_protocols_at_the_amqp_port_are_not_ready() {
    let broker = shared();
    // RabbitMQ answers a header it does not know with its own, then closes.
    for scheme in ["redis", "postgres", "memcached"] {
        let target = format!("{scheme}://{}", broker.amqp);
        let outcome = probe(&["--attempt-timeout", "3s", "--timeout", "5s"], &[&target]);
        outcome.expect_code(1);
        assert!(
            outcome.stdout.starts_with(&format!("{target}: ")),
            "{outcome:#?}"
        );
    }
}
