//! memcached and nats-server: quick to start, so each test runs its own, on a free port.

use std::net::SocketAddr;
use std::process::Command;

use super::daemon::{require, Daemon};
use super::{free_port, TempDir};

/// A running server; stopped on drop.
pub struct Small {
    /// The server process.
    pub daemon: Daemon,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its log.
    _dir: TempDir,
}

/// memcached on 127.0.0.1 (as `nobody` when root: it refuses root).
#[track_caller]
pub fn memcached() -> Small {
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut command = Command::new(require("memcached"));
    command.args(["-l", "127.0.0.1", "-p", &addr.port().to_string(), "-U", "0"]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command.args(["-u", "nobody"]);
    }
    start("memcached", command, addr)
}

/// nats-server on 127.0.0.1.
#[track_caller]
pub fn nats() -> Small {
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut command = Command::new(require("nats-server"));
    command.args(["-a", "127.0.0.1", "-p", &addr.port().to_string()]);
    start("nats-server", command, addr)
}

#[track_caller]
fn start(name: &str, command: Command, addr: SocketAddr) -> Small {
    let dir = TempDir::new();
    let mut daemon = Daemon::spawn(name, command, &dir.join("server.log"));
    daemon.wait_for_port(addr);
    Small {
        daemon,
        addr,
        _dir: dir,
    }
}
