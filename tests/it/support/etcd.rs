//! A real single-member etcd (package `etcd-server`), whose gRPC port serves the standard
//! health service: with a temp data folder and free ports, in the foreground.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

use super::certs::Certs;
use super::daemon::{require, Daemon};
use super::{free_port, TempDir};

/// A running etcd; stopped on drop.
pub struct Etcd {
    /// The server process.
    pub daemon: Daemon,
    /// Its client (gRPC) address on 127.0.0.1.
    pub addr: SocketAddr,
    /// The Unix socket it also serves gRPC on.
    pub socket: PathBuf,
    /// Data folder, socket and log.
    _dir: TempDir,
}

impl Etcd {
    /// Starts etcd on a free port (and a Unix socket), plain or with TLS, and waits until it
    /// accepts connections.
    #[track_caller]
    pub fn start(tls: Option<&Certs>) -> Etcd {
        Etcd::start_on(free_port(), tls)
    }

    /// As [`Etcd::start`], on 127.0.0.1:`port`.
    #[track_caller]
    pub fn start_on(port: u16, tls: Option<&Certs>) -> Etcd {
        Etcd::start_with(port, tls, false)
    }

    /// etcd with TLS that also requires a client certificate signed by the same CA
    /// (`--client-cert-auth`, as kubeadm sets etcd up).
    #[track_caller]
    pub fn start_requiring_client_certs(certs: &Certs) -> Etcd {
        Etcd::start_with(free_port(), Some(certs), true)
    }

    #[track_caller]
    fn start_with(port: u16, tls: Option<&Certs>, client_auth: bool) -> Etcd {
        let etcd = require("etcd");
        let dir = TempDir::new();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let peer = format!("http://127.0.0.1:{}", free_port());
        let scheme = if tls.is_some() { "https" } else { "http" };
        let client = format!("{scheme}://{addr}");
        // etcd names a Unix socket `HOST:PORT`, made in its working folder.
        let unix_name = format!("localhost:{}", free_port());
        let unix_scheme = if tls.is_some() { "unixs" } else { "unix" };
        let mut command = Command::new(etcd);
        command
            .current_dir(&dir.0)
            .args(["--name", "readygate-test", "--data-dir"])
            .arg(dir.join("data"))
            .arg(format!(
                "--listen-client-urls={client},{unix_scheme}://{unix_name}"
            ))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=readygate-test={peer}"))
            .args(["--logger=zap", "--log-outputs=stderr"]);
        if let Some(certs) = tls {
            command
                .arg("--cert-file")
                .arg(&certs.cert)
                .arg("--key-file")
                .arg(&certs.key);
            if client_auth {
                command
                    .arg("--client-cert-auth")
                    .arg("--trusted-ca-file")
                    .arg(&certs.ca);
            }
        }
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ETCD") {
                command.env_remove(key);
            }
        }
        let mut daemon = Daemon::spawn("etcd", command, &dir.join("etcd.log"));
        // The port accepts before etcd serves (it elects itself leader first), so its own
        // word is awaited: one "serving client traffic" line per client listener.
        let log = dir.join("etcd.log");
        daemon.wait_until("serving", || {
            std::fs::read_to_string(&log)
                .is_ok_and(|log| log.matches("serving client traffic").count() >= 2)
        });
        let socket = dir.join(&unix_name);
        daemon.wait_for_path(&socket);
        Etcd {
            daemon,
            addr,
            socket,
            _dir: dir,
        }
    }

    /// Stops etcd now.
    pub fn stop(&mut self) {
        self.daemon.stop();
    }
}
