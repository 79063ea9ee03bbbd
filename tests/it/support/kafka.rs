//! Real Apache Kafka nodes in KRaft combined mode (broker and controller in one JVM), from the
//! jars scripts/install-kafka.sh fetches: each formatted in a temp folder of its own, started on
//! free 127.0.0.1 ports by the test that needs it, and stopped by its PID.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::certs::Certs;
use super::daemon::{require, run_ok, Daemon};
use super::shared::die_with_parent;
use super::{free_port, TempDir};

/// Where scripts/install-kafka.sh puts the broker's jars.
const LIBS: &str = "/opt/readygate-test-kafka/libs";

/// The line a node logs once its broker serves clients.
pub const STARTED: &str = "Kafka Server started";

/// Any valid cluster id (16 bytes, base64): the node only checks that its folder has it.
const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qk";

/// A node's folder and addresses, formatted but not started.
pub struct Formatted {
    dir: TempDir,
    config: PathBuf,
    /// The broker's listener.
    pub broker: SocketAddr,
    /// The KRaft controller's listener.
    pub controller: SocketAddr,
    /// The broker's TLS listener, if it has one.
    pub tls: Option<SocketAddr>,
}

/// A started node, killed on drop.
pub struct Node {
    pub daemon: Daemon,
    pub broker: SocketAddr,
    pub controller: SocketAddr,
    pub tls: Option<SocketAddr>,
    _dir: TempDir,
}

/// Formats a node's log folder: with `quorum`, the node is the one voter and elects itself;
/// without, it is one of three voters whose two peers never start, so it has no quorum (and
/// its broker never starts). The broker advertises itself as `localhost`; with `certs`, it also
/// has a TLS listener with their server certificate.
pub fn format(quorum: bool, certs: Option<&Certs>) -> Formatted {
    let dir = TempDir::new();
    let broker = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let controller = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let tls = certs.map(|_| SocketAddr::from(([127, 0, 0, 1], free_port())));
    let mut voters = format!("1@{controller}");
    if !quorum {
        for id in 2..=3 {
            voters.push_str(&format!(",{id}@127.0.0.1:{}", free_port()));
        }
    }
    let (mut listeners, mut advertised) = (format!("PLAINTEXT://{broker}"), String::new());
    advertised.push_str(&format!("PLAINTEXT://localhost:{}", broker.port()));
    let mut ssl = String::new();
    if let (Some(tls), Some(certs)) = (tls, certs) {
        // A PEM key store is the key, then the certificate chain, in one file.
        let store = dir.join("keystore.pem");
        let read = |path: &Path| std::fs::read_to_string(path).expect("read PEM");
        let pem = [read(&certs.key), read(&certs.cert), read(&certs.ca)].concat();
        std::fs::write(&store, pem).expect("keystore.pem");
        listeners.push_str(&format!(",SSL://{tls}"));
        advertised.push_str(&format!(",SSL://localhost:{}", tls.port()));
        ssl = format!(
            "ssl.keystore.type=PEM\nssl.keystore.location={}\n",
            store.display()
        );
    }
    let config = dir.join("server.properties");
    let text = format!(
        "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters={voters}\n\
         listeners={listeners},CONTROLLER://{controller}\nadvertised.listeners={advertised}\n\
         controller.listener.names=CONTROLLER\n\
         listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT\n{ssl}\
         inter.broker.listener.name=PLAINTEXT\nlog.dirs={}\n\
         offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n\
         transaction.state.log.min.isr=1\ngroup.initial.rebalance.delay.ms=0\n\
         initial.broker.registration.timeout.ms=600000\n",
        dir.join("data").display(),
    );
    std::fs::write(&config, text).expect("server.properties");
    std::fs::write(dir.join("log4j2.properties"), LOG_CONFIG).expect("log4j2.properties");
    let mut storage = java(&dir, "kafka.tools.StorageTool");
    storage
        .args(["format", "-t", CLUSTER_ID, "-c"])
        .arg(&config);
    run_ok(&mut storage);
    Formatted {
        dir,
        config,
        broker,
        controller,
        tls,
    }
}

impl Formatted {
    /// Starts the node; it comes up on its own (see [`STARTED`]).
    pub fn start(self) -> Node {
        let mut command = java(&self.dir, "kafka.Kafka");
        command.arg(&self.config);
        die_with_parent(&mut command);
        let daemon = Daemon::spawn("kafka", command, &self.dir.join("kafka.log"));
        Node {
            daemon,
            broker: self.broker,
            controller: self.controller,
            tls: self.tls,
            _dir: self.dir,
        }
    }
}

impl Node {
    /// Waits for the line that says the broker serves.
    pub fn wait_started(&mut self) {
        let log = self.daemon.log_path();
        self.daemon.wait_until("started", || {
            std::fs::read_to_string(&log).is_ok_and(|text| text.contains(STARTED))
        });
    }
}

/// A JVM running `main` of the Kafka jars, small and quick to start: one client-sized heap,
/// the first JIT tier only, the serial collector.
fn java(dir: &TempDir, main: &str) -> Command {
    let libs = Path::new(LIBS);
    assert!(
        libs.is_dir(),
        "the Kafka jars are not installed: run scripts/install-test-deps.sh (as root)"
    );
    let mut command = Command::new(require("java"));
    command
        .args([
            "-Xmx256m",
            "-Xss512k",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-XX:-UsePerfData",
            "-Djava.awt.headless=true",
        ])
        .arg(format!(
            "-Dlog4j2.configurationFile={}",
            dir.join("log4j2.properties").display()
        ))
        .arg(format!("-Dkafka.logs.dir={}", dir.join("logs").display()))
        .arg("-cp")
        .arg(format!("{LIBS}/*"))
        .arg(main);
    command
}

/// INFO and above to standard output (the daemon's log file), as Kafka's own scripts set it.
const LOG_CONFIG: &str = "status = error\n\
appender.out.type = Console\n\
appender.out.name = OUT\n\
appender.out.layout.type = PatternLayout\n\
appender.out.layout.pattern = [%d] %p %m (%c)%n\n\
rootLogger.level = info\n\
rootLogger.appenderRef.out.ref = OUT\n";
