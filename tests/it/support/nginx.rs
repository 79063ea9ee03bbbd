//! A real nginx with a temp prefix and config (`nginx -p DIR -c DIR/nginx.conf`), in the
//! foreground, never the system service.

use std::path::PathBuf;
use std::process::Command;

use super::daemon::{require, Daemon};
use super::TempDir;

/// A running nginx; stopped (master and workers) on drop.
pub struct Nginx {
    /// The server process (its master).
    pub daemon: Daemon,
    /// Its prefix: config, pid file, logs, temp files, Unix sockets.
    pub dir: TempDir,
}

impl Nginx {
    /// Starts nginx serving `servers` (the `server { … }` blocks of its `http` section, where
    /// `{dir}` stands for the prefix folder) and waits until it listens.
    #[track_caller]
    pub fn start(servers: &str) -> Nginx {
        Nginx::start_with(servers, |command| command)
    }

    /// As [`Nginx::start`], with the command adapted first (e.g. to run in another network
    /// namespace).
    #[track_caller]
    pub fn start_with(servers: &str, adapt: impl FnOnce(Command) -> Command) -> Nginx {
        let nginx = require("nginx");
        let dir = TempDir::new();
        let prefix = dir.0.to_str().expect("utf-8 temp dir");
        let config = CONFIG
            .replace("{servers}", servers)
            .replace("{dir}", prefix);
        let config_path = dir.join("nginx.conf");
        std::fs::write(&config_path, config).expect("write nginx.conf");
        let mut command = Command::new(nginx);
        command
            .arg("-p")
            .arg(format!("{prefix}/"))
            .arg("-c")
            .arg(&config_path)
            .args(["-e", "stderr", "-g", "daemon off;"]);
        let mut daemon = Daemon::spawn("nginx", adapt(command), &dir.join("nginx.log"));
        // nginx writes its pid file once its listening sockets are open.
        daemon.wait_for_path(&dir.join("nginx.pid"));
        Nginx { daemon, dir }
    }

    /// A path in the prefix folder (e.g. a Unix socket nginx listens on).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Stops nginx now.
    pub fn stop(&mut self) {
        self.daemon.stop();
    }
}

/// The whole config; `user root` keeps the workers able to read the temp files when the tests
/// run as root (as in CI), and is ignored with a notice otherwise. Every temp path is inside
/// the prefix, away from the packaged `/var/lib/nginx`.
const CONFIG: &str = "
user root;
worker_processes 1;
pid {dir}/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    {servers}
}
";
