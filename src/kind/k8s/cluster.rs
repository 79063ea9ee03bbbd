//! An API server and the credentials readygate shows it. In a pod, found as client-go's
//! in-cluster config finds them: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`,
//! and the service account's `token`, `ca.crt` and `namespace` in one folder; outside one, from
//! a kubeconfig ([`super::kubeconfig`]).

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;

use crate::error::{describe_io, Failure};
use crate::kind::http::HttpTarget;
use crate::kind::target::Target;
use crate::kind::Kind;
use crate::secrets::Secrets;
use crate::text::quoted;

use super::credential::{Credential, Session};

/// Where the kubelet mounts a pod's service account credentials.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// A token is a JWT of a few KB; a bigger file is not one.
const MAX_TOKEN: u64 = 64 * 1024;

/// How to reach the API server, and as whom.
#[derive(Debug)]
pub struct Cluster {
    /// The API server's address and `Host` header (`host:port`, IPv6 in brackets), and the
    /// path it is served under (`/` but behind a proxy); `http://` for `kubectl proxy`.
    pub api: HttpTarget,
    /// The namespace of a target that names none: the pod's own, or the context's.
    pub namespace: String,
    /// The attempts' bound (`--attempt-timeout`): a watch's answer comes within it.
    pub attempt_timeout: std::time::Duration,
    /// Who readygate is to the API server, as a grant's subject reads in an error: `the pod's
    /// service account`, `user "NAME" of context "C"`.
    pub who: String,
    /// What the TLS handshake is told: where the CA comes from, as an error advises.
    pub trust: String,
    /// The name the certificate must carry instead of the URL's host (`tls-server-name`).
    pub server_name: Option<ServerName<'static>>,
    /// The token (or exec credential plugin) each request carries.
    pub(super) credential: Credential,
    /// TLS with the cluster's CA (and client certificate); `None` for `http://`.
    pub(super) tls: Option<Arc<ClientConfig>>,
    /// Where the token is read and plugins run: off the runtime's thread, one at a time.
    pub(super) lane: crate::runtime::lane::Lane,
    /// The run's secrets: each token read becomes one.
    pub(super) secrets: Arc<Secrets>,
}

impl Cluster {
    /// Finds the in-cluster config; `dir` replaces the service account folder. Outside a pod
    /// (no variables, no token) the error is the one-line usage message that says so.
    pub fn find(
        dir: Option<&Path>,
        secrets: Arc<Secrets>,
        attempt_timeout: std::time::Duration,
    ) -> Result<Cluster, String> {
        let dir = dir.unwrap_or(Path::new(SERVICE_ACCOUNT_DIR));
        let outside =
            |what: String| format!("k8s:// targets work inside a Kubernetes pod, and {what}");
        let variable = |name: &str| match std::env::var(name) {
            Ok(value) if !value.is_empty() => Ok(value),
            _ => Err(outside(format!("{name} is not set"))),
        };
        let (host, port) = (
            variable("KUBERNETES_SERVICE_HOST")?,
            variable("KUBERNETES_SERVICE_PORT")?,
        );
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| format!("KUBERNETES_SERVICE_PORT={} is not a port", quoted(&port)))?;
        let authority = match host.parse::<IpAddr>() {
            Ok(ip) => SocketAddr::new(ip, port).to_string(),
            Err(_) => format!("{host}:{port}"),
        };
        // Read as any https:// target is: the `Host` header, the TLS name, a checked host.
        let Ok(Kind::Http(api)) = Target::parse(&format!("https://{authority}/")).map(|t| t.kind)
        else {
            return Err(format!(
                "KUBERNETES_SERVICE_HOST={} is not a host",
                quoted(&host)
            ));
        };
        let token = dir.join("token");
        if let Err(e) = std::fs::metadata(&token) {
            let path = quoted(&token.display().to_string());
            return Err(outside(format!(
                "there is no service account token at {path} ({})",
                describe_io(&e)
            )));
        }
        let roots = crate::net::tls::read_roots(&dir.join("ca.crt"), "k8s:// API server CA")?;
        Ok(Cluster {
            api,
            namespace: own_namespace(dir)?,
            attempt_timeout,
            who: "the pod's service account".into(),
            trust: "not the one in the service account's ca.crt".into(),
            server_name: None,
            credential: Credential::File(token),
            tls: Some(crate::net::tls::trusting_only(&roots).map_err(|e| e.to_string())?),
            lane: crate::runtime::lane::Lane::default(),
            secrets,
        })
    }

    /// What the next request carries: the bearer token as it is now (a file read off the
    /// runtime's thread, a plugin run unless its credential is still valid) and the TLS
    /// settings. Never shown: an error names the file or the plugin only.
    pub async fn session(&self) -> Result<Session, Failure> {
        super::credential::session(self).await
    }
}

/// The token in `file`, checked to be one.
pub(super) fn read_token(file: &Path) -> Result<String, Failure> {
    let path = file.display();
    // Only a regular file, opened without blocking and read up to the cap: a FIFO or a device
    // mounted in its place cannot hang or bloat the attempt.
    let bytes = crate::regular_file::read_head(file, MAX_TOKEN + 1)
        .map_err(|e| format!("cannot read the token {path}: {}", describe_io(&e)))?;
    // Cut, it would be sent as a token it is not; the API server's refusal would hide why.
    if bytes.len() as u64 > MAX_TOKEN {
        let kib = MAX_TOKEN >> 10;
        return Err(format!("the token {path} is over {kib} KiB: not a token").into());
    }
    let text = String::from_utf8_lossy(&bytes);
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the token {path} is empty").into());
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("the token {path} holds characters a token has not").into());
    }
    Ok(token.to_string())
}

/// The pod's namespace as client-go's in-cluster config takes it: `POD_NAMESPACE`, else the
/// service account's `namespace` file, else `default`.
fn own_namespace(dir: &Path) -> Result<String, String> {
    let namespace = match std::env::var("POD_NAMESPACE") {
        Ok(value) if !value.is_empty() => value,
        // A namespace name is at most 63 bytes; a bounded, non-blocking read of a regular file.
        _ => crate::regular_file::read_head(&dir.join("namespace"), 1024)
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
            .ok()
            .filter(|namespace| !namespace.is_empty())
            .unwrap_or_else(|| "default".to_string()),
    };
    crate::kind::k8s::target::namespace_name(&namespace).map_err(|e| format!("the pod's {e}"))?;
    Ok(namespace)
}
