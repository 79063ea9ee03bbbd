//! Real ZooKeeper servers (Debian's `zookeeper`), shared by the tests: a standalone server
//! that serves, and member 1 of a three-member ensemble whose two peers never start, so it
//! has no quorum and is "not currently serving requests". Each JVM is started once.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::daemon::{require, Daemon};
use super::shared::{die_with_parent, end_at_exit, keep, remove_at_exit};
use super::{free_port, TempDir};

/// The standalone server's client address, started on first use.
pub fn serving() -> SocketAddr {
    static SHARED: OnceLock<SocketAddr> = OnceLock::new();
    *SHARED.get_or_init(|| keep("ZooKeeper", || start(false)))
}

/// The quorum-less ensemble member's client address, started on first use.
pub fn without_quorum() -> SocketAddr {
    static SHARED: OnceLock<SocketAddr> = OnceLock::new();
    *SHARED.get_or_init(|| keep("ZooKeeper ensemble member", || start(true)))
}

fn start(ensemble: bool) -> ((Daemon, TempDir), SocketAddr) {
    let java = require("java");
    let jar = Path::new("/usr/share/java/zookeeper.jar");
    assert!(
        jar.is_file(),
        "zookeeper is not installed: run scripts/install-test-deps.sh (as root)"
    );
    let dir = TempDir::new();
    remove_at_exit(dir.0.clone());
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut config = format!(
        "tickTime=2000\ninitLimit=5\nsyncLimit=2\ndataDir={}\nclientPort={}\n\
         clientPortAddress=127.0.0.1\nadmin.enableServer=false\n",
        data.display(),
        addr.port()
    );
    if ensemble {
        std::fs::write(data.join("myid"), "1\n").expect("myid");
        for member in 1..=3 {
            config.push_str(&format!(
                "server.{member}=127.0.0.1:{}:{}\n",
                free_port(),
                free_port()
            ));
        }
    }
    let config_path = dir.join("zoo.cfg");
    std::fs::write(&config_path, config).expect("zoo.cfg");
    let mut command = Command::new(java);
    command
        .args([
            "-Xmx64m",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-cp",
        ])
        .arg(jar)
        .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
        .arg(&config_path);
    die_with_parent(&mut command);
    let mut daemon = Daemon::spawn("zookeeper", command, &dir.join("zookeeper.log"));
    end_at_exit(daemon.pid());
    if ensemble {
        daemon.wait_for_port(addr);
    } else {
        daemon.wait_until("serving", || srvr(addr).contains("Mode: standalone"));
    }
    ((daemon, dir), addr)
}

/// The answer to `srvr`, or nothing.
fn srvr(addr: SocketAddr) -> String {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut answer = String::new();
    if stream.write_all(b"srvr").is_ok() {
        let _ = stream.read_to_string(&mut answer);
    }
    answer
}
