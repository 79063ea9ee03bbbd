//! What each request to the API server carries: a bearer token (given, read from a file afresh
//! each time, or from an exec credential plugin while its credential is valid) and the TLS
//! settings, which a plugin's client certificate changes.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::ClientConfig;

use super::cluster::{read_token, Cluster};
use super::exec::Plugin;
use crate::error::Failure;

/// Who readygate is to the API server, besides a client certificate in the TLS settings.
#[derive(Debug)]
pub enum Credential {
    /// Nothing: `kubectl proxy` adds its own, or a client certificate says who.
    Anonymous,
    /// A token written in the kubeconfig.
    Token(String),
    /// A token file, read before each request: bound tokens rotate.
    File(PathBuf),
    /// An exec credential plugin, run when its last credential has expired.
    Exec(Box<Plugin>),
}

/// What one request carries.
pub struct Session {
    /// `Authorization: Bearer` this, if set.
    pub bearer: Option<String>,
    /// The TLS settings; `None` for `http://`.
    pub tls: Option<Arc<ClientConfig>>,
}

/// The credential of `cluster` as it is now.
pub async fn session(cluster: &Cluster) -> Result<Session, Failure> {
    let tls = cluster.tls.clone();
    let bearer = match &cluster.credential {
        Credential::Anonymous => None,
        Credential::Token(token) => Some(token.clone()),
        Credential::File(path) => {
            let path = path.clone();
            Some(cluster.lane.run(move || read_token(&path)).await??)
        }
        Credential::Exec(plugin) => {
            let given = plugin.credential(&cluster.lane).await?;
            let tls = given.tls.or(tls);
            if let Some(token) = &given.token {
                cluster.secrets.learn(token.as_bytes());
            }
            return Ok(Session {
                bearer: given.token,
                tls,
            });
        }
    };
    // Before it is sent: a server that quotes it back is then shown `***`.
    if let Some(token) = &bearer {
        cluster.secrets.learn(token.as_bytes());
    }
    Ok(Session { bearer, tls })
}
