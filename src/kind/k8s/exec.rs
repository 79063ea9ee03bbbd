//! Exec credential plugins (`client.authentication.k8s.io/v1` and `v1beta1`), as EKS, GKE and
//! AKS kubeconfigs name them: the command runs with its arguments and environment and
//! `KUBERNETES_EXEC_INFO`, and prints an `ExecCredential` whose token or client certificate is
//! kept until its `expirationTimestamp`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine;
use rustls::ClientConfig;
use serde::Deserialize;
use tokio::sync::Mutex;

use crate::error::{describe_io, Failure};
use crate::net::tls::Certificate;
use crate::runtime::lane::Lane;
use crate::text::quoted;

/// The API versions of `ExecCredential` readygate speaks.
pub const API_VERSIONS: [&str; 2] = [
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
];

/// The most of a plugin's answer that is read: a credential is a few KB.
const MAX_ANSWER: u64 = 1 << 20;

/// A credential is taken as expired this long before its `expirationTimestamp`, so that a
/// request does not leave with a token that expires on the way.
const MARGIN: Duration = Duration::from_secs(10);

/// How long one run of a plugin may take: a cloud CLI asks its metadata service or refreshes
/// a token over the network.
pub const RUN_WITHIN: Duration = Duration::from_secs(60);

/// One plugin as the kubeconfig's `user.exec` describes it.
#[derive(Debug)]
pub struct Plugin {
    /// The program: a name looked up in `PATH`, or a path (relative ones resolved against the
    /// kubeconfig's folder).
    pub command: String,
    pub args: Vec<String>,
    /// Added to readygate's own environment.
    pub env: Vec<(String, String)>,
    /// `client.authentication.k8s.io/v1` or `v1beta1`: asked for and expected back.
    pub api_version: String,
    /// The kubeconfig's hint for a command that is not there.
    pub install_hint: Option<String>,
    /// `KUBERNETES_EXEC_INFO`: the request, with the cluster when `provideClusterInfo` says so.
    pub info: String,
    /// The cluster's CA (`None`: the built-in roots) and `insecure-skip-tls-verify`, for the
    /// TLS settings of a client certificate the plugin gives.
    pub roots: Option<Vec<Certificate>>,
    pub insecure: bool,
    /// The last credential, until it expires.
    pub(super) cache: Mutex<Option<Given>>,
}

/// What a plugin gave.
#[derive(Debug, Clone)]
pub struct Given {
    pub token: Option<String>,
    /// TLS settings offering its client certificate, if it gave one.
    pub tls: Option<Arc<ClientConfig>>,
    /// `None`: valid for the whole run.
    expires: Option<SystemTime>,
}

/// The `ExecCredential` a plugin prints.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    status: Option<Status>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    expiration_timestamp: Option<String>,
}

impl Plugin {
    /// The credential: the last one while it is valid, else a new one from a run of the plugin
    /// on `lane` (one run at a time), which is killed if the caller gives up on it.
    pub async fn credential(&self, lane: &Lane) -> Result<Given, Failure> {
        let mut cache = self.cache.lock().await;
        if let Some(given) = cache.as_ref() {
            let valid = given
                .expires
                .map_or(true, |at| SystemTime::now() + MARGIN < at);
            if valid {
                return Ok(given.clone());
            }
        }
        let given = self.run(lane).await?;
        *cache = Some(given.clone());
        Ok(given)
    }

    /// `the exec credential plugin "aws"`.
    fn name(&self) -> String {
        format!("the exec credential plugin {}", quoted(&self.command))
    }

    /// Runs the plugin once and reads its answer.
    async fn run(&self, lane: &Lane) -> Result<Given, Failure> {
        let mut command = Command::new(&self.command);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("KUBERNETES_EXEC_INFO", &self.info)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Where a plugin tells a person what to do (log in first), as kubectl lets it.
            .stderr(Stdio::inherit());
        let pid = Arc::new(AtomicI32::new(0));
        let guard = KillOnDrop(pid.clone());
        let job = move || -> std::io::Result<(std::process::ExitStatus, Vec<u8>)> {
            let mut child = command.spawn()?;
            pid.store(child.id() as i32, Ordering::SeqCst);
            let mut answer = Vec::new();
            if let Some(stdout) = child.stdout.take() {
                stdout.take(MAX_ANSWER + 1).read_to_end(&mut answer)?;
            }
            if answer.len() as u64 > MAX_ANSWER {
                let _ = child.kill();
            }
            let status = child.wait();
            pid.store(0, Ordering::SeqCst);
            Ok((status?, answer))
        };
        let ran = tokio::time::timeout(RUN_WITHIN, lane.run(job)).await;
        drop(guard);
        let name = self.name();
        let (status, answer) = match ran {
            Err(_) => {
                let within = crate::grammar::duration::humanize(RUN_WITHIN);
                return Err(format!("{name} gave no credential within {within}").into());
            }
            Ok(ran) => ran?.map_err(|e| {
                let hint = match (&self.install_hint, e.kind()) {
                    (Some(hint), std::io::ErrorKind::NotFound) => format!(": {}", one_line(hint)),
                    _ => String::new(),
                };
                format!("cannot run {name}: {}{hint}", describe_io(&e))
            })?,
        };
        if answer.len() as u64 > MAX_ANSWER {
            return Err(format!("{name} printed over 1 MiB: not an ExecCredential").into());
        }
        if !status.success() {
            return Err(format!("{name} failed ({status})").into());
        }
        self.read(&answer)
    }

    /// Reads a plugin's `ExecCredential`.
    fn read(&self, answer: &[u8]) -> Result<Given, Failure> {
        let name = self.name();
        let credential: ExecCredential = serde_json::from_slice(answer)
            .map_err(|e| format!("{name} printed no ExecCredential ({e})"))?;
        if credential.kind != "ExecCredential" || credential.api_version != self.api_version {
            let (kind, version) = (quoted(&credential.kind), quoted(&credential.api_version));
            let asked = &self.api_version;
            return Err(format!(
                "{name} printed kind {kind} of apiVersion {version}, not an ExecCredential of \
                 {asked}"
            )
            .into());
        }
        let status = credential
            .status
            .ok_or_else(|| format!("{name} printed an ExecCredential without a status"))?;
        let expires = match &status.expiration_timestamp {
            None => None,
            Some(at) => Some(humantime::parse_rfc3339_weak(at).map_err(|_| {
                format!("{name}: expirationTimestamp {} is not a time", quoted(at))
            })?),
        };
        let identity = match (&status.client_certificate_data, &status.client_key_data) {
            (None, None) => None,
            (Some(cert), Some(key)) => Some(
                crate::net::tls::identity_from_pem(cert.as_bytes(), key.as_bytes(), &name)
                    .map_err(Failure::Text)?,
            ),
            _ => {
                return Err(format!(
                    "{name} gave a client certificate without its key, or a key without its \
                     certificate"
                )
                .into())
            }
        };
        let token = status.token.filter(|token| !token.is_empty());
        if token.is_none() && identity.is_none() {
            return Err(format!("{name} gave neither a token nor a client certificate").into());
        }
        if let Some(token) = &token {
            if !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(format!("{name} gave a token with characters a token has not").into());
            }
        }
        let tls = match identity {
            None => None,
            Some(identity) => Some(crate::net::tls::for_cluster(
                self.roots.as_deref(),
                self.insecure,
                Some(&identity),
            )?),
        };
        Ok(Given {
            token,
            tls,
            expires,
        })
    }
}

/// Kills the plugin's process if it still runs when the wait for it ends (a timeout, or the
/// caller's deadline dropping the wait).
struct KillOnDrop(Arc<AtomicI32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let pid = self.0.swap(0, Ordering::SeqCst);
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// A kubeconfig's multi-line text on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `certificate-authority-data` as `KUBERNETES_EXEC_INFO` carries it: base64 of the PEM.
pub fn encode(pem: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(pem)
}
