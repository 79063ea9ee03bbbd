//! A real redis-server on a free port, with nothing persisted, in the foreground.

use std::net::SocketAddr;
use std::process::Command;

use super::daemon::{require, run_ok, Daemon};
use super::{free_port, TempDir};

/// A running redis-server; stopped on drop.
pub struct Redis {
    /// The server process.
    pub daemon: Daemon,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its working folder and log.
    _dir: TempDir,
}

impl Redis {
    /// Starts redis-server on 127.0.0.1 and waits until it accepts connections.
    #[track_caller]
    pub fn start() -> Redis {
        Redis::start_in(TempDir::new(), &[])
    }

    /// As [`Redis::start`], in `dir` with `extra` settings (`--name value` pairs) after ours.
    #[track_caller]
    pub fn start_in(dir: TempDir, extra: &[&str]) -> Redis {
        let redis = require("redis-server");
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = Command::new(redis);
        command
            .args(["--port", &addr.port().to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir.0)
            .args(extra);
        let mut daemon = Daemon::spawn("redis-server", command, &dir.join("redis.log"));
        daemon.wait_for_port(addr);
        Redis {
            daemon,
            addr,
            _dir: dir,
        }
    }

    /// Asks the server to shut down, as an operator would (`redis-cli shutdown nosave`).
    #[track_caller]
    pub fn shutdown(&mut self) {
        let cli = require("redis-cli");
        let port = self.addr.port().to_string();
        // The server drops the connection as it goes, so redis-cli's own status is moot.
        let _ = Command::new(cli)
            .args(["-h", "127.0.0.1", "-p", &port, "shutdown", "nosave"])
            .output();
    }

    /// Stops the server and hands over its folder (to start another on its dataset).
    pub fn into_dir(self) -> TempDir {
        let Redis {
            mut daemon, _dir, ..
        } = self;
        daemon.stop();
        _dir
    }

    /// Runs `redis-cli` with `args` against the server and returns its output.
    #[track_caller]
    pub fn cli(&self, args: &[&str]) -> String {
        let cli = require("redis-cli");
        let port = self.addr.port().to_string();
        run_ok(
            Command::new(cli)
                .args(["-h", "127.0.0.1", "-p", &port])
                .args(args),
        )
    }

    /// How many connections the server has accepted so far (`INFO stats`), counting the one
    /// this query makes.
    #[track_caller]
    pub fn connections_received(&self) -> u64 {
        let stats = self.cli(&["info", "stats"]);
        stats
            .lines()
            .find_map(|line| line.strip_prefix("total_connections_received:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no total_connections_received in {stats:?}"))
    }

    /// The server's answer to `PING` (so a test knows it is the real thing).
    #[track_caller]
    pub fn ping(&self) -> String {
        let cli = require("redis-cli");
        let port = self.addr.port().to_string();
        run_ok(Command::new(cli).args(["-h", "127.0.0.1", "-p", &port, "ping"]))
    }
}
