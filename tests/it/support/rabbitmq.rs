//! A real RabbitMQ (Debian's `rabbitmq-server`), shared by the tests: AMQP on one free port
//! and AMQPS on another, with its own epmd, node name and data folder. The Erlang VM takes
//! seconds to boot, so it is started once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::certs::Certs;
use super::daemon::{require, Daemon};
use super::shared::{die_with_parent, end_at_exit, keep, remove_at_exit};
use super::{free_port, TempDir};

/// The shared broker.
pub struct RabbitMq {
    /// The AMQP 0-9-1 listener.
    pub amqp: SocketAddr,
    /// The AMQPS listener (a certificate for localhost).
    pub amqps: SocketAddr,
    /// The CA that signed its certificate.
    pub ca: PathBuf,
}

/// The broker, started on first use.
pub fn shared() -> &'static RabbitMq {
    static SHARED: OnceLock<RabbitMq> = OnceLock::new();
    SHARED.get_or_init(|| keep("RabbitMQ", start))
}

fn start() -> ((Daemon, Daemon, Certs, TempDir), RabbitMq) {
    // Debian's /usr/sbin wrapper switches user and logs to /var/log: the real script, with
    // `detached` set, execs the VM in place (one process to stop).
    let script = PathBuf::from("/usr/lib/rabbitmq/bin/rabbitmq-server");
    assert!(
        script.is_file(),
        "rabbitmq-server is not installed: run scripts/install-test-deps.sh (as root)"
    );
    let certs = Certs::localhost();
    remove_at_exit(certs.ca.parent().expect("certs folder").to_path_buf());
    let dir = TempDir::new();
    remove_at_exit(dir.0.clone());
    let amqp = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let amqps = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let epmd_port = free_port().to_string();
    let config = dir.join("rabbitmq.conf");
    std::fs::write(
        &config,
        format!(
            "listeners.tcp.default = {amqp}\n\
             listeners.ssl.default = {amqps}\n\
             ssl_options.cacertfile = {}\n\
             ssl_options.certfile = {}\n\
             ssl_options.keyfile = {}\n\
             ssl_options.verify = verify_none\n\
             ssl_options.fail_if_no_peer_cert = false\n",
            certs.ca.display(),
            certs.cert.display(),
            certs.key.display()
        ),
    )
    .expect("rabbitmq.conf");
    // Our own epmd in the foreground, so it ends with the tests (the broker's would linger).
    let mut epmd = Command::new(require("epmd"));
    epmd.args(["-port", &epmd_port]);
    die_with_parent(&mut epmd);
    let mut epmd = Daemon::spawn("epmd", epmd, &dir.join("epmd.log"));
    end_at_exit(epmd.pid());
    epmd.wait_for_port(SocketAddr::from((
        [127, 0, 0, 1],
        epmd_port.parse::<u16>().unwrap(),
    )));
    let mut command = Command::new(script);
    let node = format!("readygate-{}@localhost", std::process::id());
    command
        .env("HOME", &dir.0)
        .env("detached", "1")
        .env("ERL_EPMD_PORT", &epmd_port)
        .env("RABBITMQ_NODENAME", &node)
        .env("RABBITMQ_DIST_PORT", free_port().to_string())
        .env("RABBITMQ_CONFIG_FILE", &config)
        .env("RABBITMQ_ADVANCED_CONFIG_FILE", dir.join("advanced.config"))
        .env("RABBITMQ_CONF_ENV_FILE", dir.join("rabbitmq-env.conf"))
        .env("RABBITMQ_ENABLED_PLUGINS_FILE", dir.join("enabled_plugins"))
        .env("RABBITMQ_MNESIA_BASE", dir.join("mnesia"))
        .env("RABBITMQ_LOG_BASE", dir.join("log"))
        .env("RABBITMQ_LOGS", "-")
        // One scheduler that sleeps when idle: the VM must not spin on the suite's shared cores.
        .env(
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
            "+S 1:1 +A 2 +sbwt none +sbwtdcpu none +sbwtdio none",
        );
    die_with_parent(&mut command);
    let log = dir.join("rabbitmq.log");
    let mut daemon = Daemon::spawn("rabbitmq-server", command, &log);
    end_at_exit(daemon.pid());
    daemon.wait_until("started", || {
        std::fs::read_to_string(&log).is_ok_and(|log| log.contains("Server startup complete"))
    });
    daemon.wait_for_port(amqp);
    daemon.wait_for_port(amqps);
    let ca = certs.ca.clone();
    ((daemon, epmd, certs, dir), RabbitMq { amqp, amqps, ca })
}
