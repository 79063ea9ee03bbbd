//! Real PostgreSQL servers (Debian's `postgresql`), shared by the tests: a primary that asks
//! for a SCRAM password, and a standby with `hot_standby=off` that answers 57P03 for ever.
//! One `initdb`, copied for the standby; run as the `postgres` user when the tests run as root
//! (PostgreSQL refuses root).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::daemon::{run_ok, Daemon};
use super::shared::{
    die_with_parent, end_at_exit, give, keep, remove_at_exit, run_as, service_user,
};
use super::{free_port, TempDir};

/// The shared PostgreSQL servers.
pub struct Postgres {
    /// A primary that takes connections (password authentication over TCP).
    pub primary: SocketAddr,
    /// A standby in recovery with `hot_standby=off`: "not accepting connections" (57P03).
    pub standby: SocketAddr,
}

/// The servers, started on first use.
pub fn shared() -> &'static Postgres {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    SHARED.get_or_init(|| keep("PostgreSQL", start))
}

/// The folder of the server programs (`initdb`, `postgres`), of the newest major installed.
fn bin() -> PathBuf {
    let mut majors: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dir| dir.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    majors.retain(|bin| bin.join("postgres").is_file());
    majors.sort();
    majors.pop().unwrap_or_else(|| {
        panic!("PostgreSQL is not installed: run scripts/install-test-deps.sh (as root)")
    })
}

fn start() -> ((Daemon, Daemon, TempDir), Postgres) {
    let bin = bin();
    let user = service_user("postgres");
    let dir = TempDir::new();
    remove_at_exit(dir.0.clone());
    give(&dir.0, user);
    let primary_data = dir.join("primary");
    run_ok(
        run_as(&mut Command::new(bin.join("initdb")), user)
            .arg("-D")
            .arg(&primary_data)
            .args([
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ])
            .args(["--no-sync", "--no-instructions", "-E", "UTF8"]),
    );
    let standby_data = dir.join("standby");
    run_ok(
        run_as(&mut Command::new("cp"), user)
            .arg("-a")
            .arg(&primary_data)
            .arg(&standby_data),
    );
    std::fs::write(standby_data.join("standby.signal"), "").expect("standby.signal");
    give(&standby_data, user);
    let primary = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let primary_server = spawn(&bin, user, &dir.0, &primary_data, primary, &[]);
    let standby = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let standby_server = spawn(
        &bin,
        user,
        &dir.0,
        &standby_data,
        standby,
        &["hot_standby=off"],
    );
    (
        (primary_server, standby_server, dir),
        Postgres { primary, standby },
    )
}

/// Starts `postgres` on `data`, listening on `addr` (and a socket in `dir`), and waits until
/// it says it is ready (the primary) or that recovery is waiting for WAL (the standby).
fn spawn(
    bin: &Path,
    user: Option<(u32, u32)>,
    dir: &Path,
    data: &Path,
    addr: SocketAddr,
    settings: &[&str],
) -> Daemon {
    let mut command = Command::new(bin.join("postgres"));
    run_as(&mut command, user)
        .arg("-D")
        .arg(data)
        .args([
            "-p",
            &addr.port().to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
        ])
        .arg("-k")
        .arg(dir)
        .args([
            "-c",
            "fsync=off",
            "-c",
            "shared_buffers=16MB",
            "-c",
            "max_connections=20",
        ]);
    for setting in settings {
        command.args(["-c", setting]);
    }
    die_with_parent(&mut command);
    let name = data.file_name().unwrap().to_string_lossy().into_owned();
    let log = dir.join(format!("{name}.log"));
    let mut daemon = Daemon::spawn(&format!("postgres ({name})"), command, &log);
    end_at_exit(daemon.pid());
    daemon.wait_until("ready", || {
        std::fs::read_to_string(&log).is_ok_and(|log| {
            log.contains("ready to accept connections") || log.contains("waiting for WAL")
        })
    });
    daemon.wait_for_port(addr);
    daemon
}
