//! A real MariaDB (Debian's `mariadb-server`) from a fresh data folder, on a free port, run as
//! the `mysql` user when the tests run as root.

use std::net::SocketAddr;
use std::process::Command;

use super::daemon::{require, run_ok, Daemon};
use super::shared::{give, run_as, service_user};
use super::{free_port, TempDir};

/// A running MariaDB; stopped on drop.
pub struct MariaDb {
    /// The server process.
    pub daemon: Daemon,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its data folder, socket and log.
    _dir: TempDir,
}

/// The fewest connections MariaDB allows (one more is kept for an administrator).
pub const MAX_CONNECTIONS: usize = 10;

impl MariaDb {
    /// Creates the system tables and starts the server, waiting until it says it is ready.
    #[track_caller]
    pub fn start() -> MariaDb {
        let user = service_user("mysql");
        let dir = TempDir::new();
        give(&dir.0, user);
        let data = dir.join("data");
        run_ok(
            run_as(&mut Command::new(require("mariadb-install-db")), user)
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .args(["--auth-root-authentication-method=normal", "--skip-test-db"]),
        );
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = Command::new(require("mariadbd"));
        run_as(&mut command, user)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", dir.join("mysqld.pid").display()))
            .args([
                "--bind-address=127.0.0.1",
                &format!("--port={}", addr.port()),
            ])
            .arg(format!("--max-connections={MAX_CONNECTIONS}"))
            // Held connections that never log in must outlast the test.
            .args(["--connect-timeout=120", "--innodb-buffer-pool-size=16M"])
            .args(["--skip-log-bin", "--skip-name-resolve"]);
        let log = dir.join("mariadb.log");
        let mut daemon = Daemon::spawn("mariadbd", command, &log);
        daemon.wait_until("ready for connections", || {
            std::fs::read_to_string(&log).is_ok_and(|log| log.contains("ready for connections"))
        });
        daemon.wait_for_port(addr);
        MariaDb {
            daemon,
            addr,
            _dir: dir,
        }
    }
}
