//! A pod's view of names, made real: private mount and network namespaces (`unshare`) in which
//! a temp `resolv.conf` (the cluster's search list, `ndots:5`) and a temp hosts file are
//! bind-mounted over `/etc`, and dnsmasq on 127.0.0.1:53 answers cluster-style names. Each pod
//! has its own loopback, so port 53 and every other port are its own.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::daemon::{require, Daemon};
use super::nginx::Nginx;
use super::run::readygate;
use super::TempDir;

/// The `resolv.conf` the kubelet writes for a pod in namespace `default`.
pub const RESOLV_CONF: &str = "nameserver 127.0.0.1
search default.svc.cluster.local svc.cluster.local cluster.local
options ndots:5
";

/// Namespaces holding a pod's `/etc/resolv.conf` and `/etc/hosts`, kept alive by a sleeping
/// process; everything in them ends when the pod is dropped.
pub struct Pod {
    /// The hosts file bind-mounted over `/etc/hosts` (rewrite it in place to change it).
    pub hosts: PathBuf,
    /// The dnsmasq servers running in the pod, stopped before the holder.
    servers: Vec<Daemon>,
    /// How many dnsmasq servers were started, to name their files.
    started: usize,
    /// The process whose namespaces the pod is.
    holder: Daemon,
    /// The files and logs.
    dir: TempDir,
}

impl Pod {
    /// New namespaces with loopback up, [`RESOLV_CONF`] and `hosts` in place.
    #[track_caller]
    pub fn new(hosts: &str) -> Pod {
        Pod::with_resolv_conf(hosts, RESOLV_CONF)
    }

    /// New namespaces with loopback up, `resolv_conf` and `hosts` in place.
    #[track_caller]
    pub fn with_resolv_conf(hosts: &str, resolv_conf_text: &str) -> Pod {
        let unshare = require("unshare");
        require("nsenter");
        require("ip");
        let dir = TempDir::new();
        let resolv_conf = dir.join("resolv.conf");
        let hosts_path = dir.join("hosts");
        std::fs::write(&resolv_conf, resolv_conf_text).expect("write resolv.conf");
        std::fs::write(&hosts_path, hosts).expect("write hosts");
        let up = dir.join("up");
        let script = format!(
            "set -e; ip link set lo up; mount --bind '{}' /etc/resolv.conf; \
             mount --bind '{}' /etc/hosts; touch '{}'; exec sleep 3600",
            resolv_conf.display(),
            hosts_path.display(),
            up.display()
        );
        let mut command = Command::new(unshare);
        command.args(["--mount", "--net", "--", "sh", "-c", &script]);
        let mut holder = Daemon::spawn("unshare", command, &dir.join("unshare.log"));
        holder.wait_for_path(&up);
        Pod {
            hosts: hosts_path,
            servers: Vec::new(),
            started: 0,
            holder,
            dir,
        }
    }

    /// The pod's network namespace, as a path to open for `setns`.
    pub fn net_namespace(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/ns/net", self.holder.pid()))
    }

    /// Runs a shell script inside the pod's namespaces, failing the test if it fails.
    #[track_caller]
    pub fn sh(&self, script: &str) {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        super::daemon::run_ok(&mut self.enter(&command));
    }

    /// `command`, to be run inside the pod's namespaces (through `nsenter`).
    pub fn enter(&self, command: &Command) -> Command {
        let mut entered = Command::new(require("nsenter"));
        entered
            .args([
                "--target",
                &self.holder.pid().to_string(),
                "--net",
                "--mount",
            ])
            .arg("--")
            .arg(command.get_program())
            .args(command.get_args())
            .stdin(Stdio::null());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => entered.env(key, value),
                None => entered.env_remove(key),
            };
        }
        if let Some(dir) = command.get_current_dir() {
            entered.current_dir(dir);
        }
        entered
    }

    /// The real `readygate` with these arguments, run inside the pod.
    pub fn readygate<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.enter(&readygate(args))
    }

    /// Starts dnsmasq on the pod's 127.0.0.1:53 (UDP and TCP), answering each `(name, address)`
    /// (a name may come more than once) and NXDOMAIN for every other name, as a cluster DNS
    /// does for a Service that does not exist.
    #[track_caller]
    pub fn start_dns(&mut self, records: &[(&str, &str)]) {
        self.started += 1;
        let pid_file = self.dir.join(&format!("dnsmasq-{}.pid", self.started));
        let mut command = Command::new(require("dnsmasq"));
        command
            .args([
                "--keep-in-foreground",
                "--conf-file=/dev/null",
                "--no-resolv",
            ])
            .args([
                "--no-hosts",
                "--bind-interfaces",
                "--listen-address=127.0.0.1",
            ])
            .args([
                "--port=53",
                "--user=root",
                "--group=root",
                "--log-facility=-",
            ])
            .args(["--log-queries", "--address=/#/"])
            // CoreDNS's TTL for cluster records: an answer a caching client would keep.
            .arg("--local-ttl=30")
            .arg(format!("--pid-file={}", pid_file.display()));
        for (name, address) in records {
            command.arg(format!("--host-record={name},{address}"));
        }
        let log = self.dir.join(&format!("dnsmasq-{}.log", self.started));
        let mut daemon = Daemon::spawn("dnsmasq", self.enter(&command), &log);
        // dnsmasq writes its pid file after binding its sockets.
        daemon.wait_for_path(&pid_file);
        self.servers.push(daemon);
    }

    /// Stops every dnsmasq started so far (to start another with other records).
    pub fn stop_dns(&mut self) {
        for daemon in &mut self.servers {
            daemon.stop();
        }
        self.servers.clear();
    }

    /// Starts nginx inside the pod, serving `servers` (see [`Nginx::start`]).
    #[track_caller]
    pub fn start_nginx(&self, servers: &str) -> Nginx {
        Nginx::start_with(servers, |command| self.enter(&command))
    }

    /// What dnsmasq logged (queries included), for failure messages.
    pub fn dns_log(&self) -> String {
        (1..=self.started)
            .filter_map(|n| {
                std::fs::read_to_string(self.dir.join(&format!("dnsmasq-{n}.log"))).ok()
            })
            .collect()
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        self.stop_dns();
        self.holder.stop();
    }
}
