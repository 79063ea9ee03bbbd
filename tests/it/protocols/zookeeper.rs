//! `zk://` against real ZooKeeper servers: a standalone one serves; member 1 of a three-member
//! ensemble whose peers are absent has no quorum and says it is not serving.

use std::time::Duration;

use super::probe;
use crate::support::readygate;
use crate::support::run::RunExt;
use crate::support::zookeeper::{serving, without_quorum};

#[test]
fn a_standalone_zookeeper_is_ready() {
    let addr = serving();
    probe(&[], &[&format!("zk://{addr}")]).expect_code(0);
    probe(&[], &[&format!("zk://localhost:{}", addr.port())]).expect_code(0);
}

#[test]
fn a_member_without_quorum_is_not_serving() {
    let target = format!("zk://{}", without_quorum());
    let outcome = probe(&[], &[&target]);
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!("{target}: This ZooKeeper instance is not currently serving requests\n")
    );
    readygate(["wait", "--timeout", "1s", &target])
        .outcome()
        .expect_code(1)
        .expect_slower_than(Duration::from_secs(1))
        .expect_stderr("not currently serving requests");
    let ready = format!("zk://{}", serving());
    probe(&["--any"], &[&target, &ready]).expect_code(0);
}
