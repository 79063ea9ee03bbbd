//! `--cert FILE --key FILE`: the client certificate an `https://` or `grpcs://` server may ask
//! for (mutual TLS, e.g. etcd as kubeadm sets it up), read and matched once, by the plan.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use rustls::sign::CertifiedKey;

use super::{fault, read_certificates, read_pem};
use crate::redact::quoted;

/// A client certificate chain and its private key, known to match.
#[derive(Clone)]
pub struct Identity(pub Arc<CertifiedKey>);

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        write!(f, "Identity({} certificates)", self.0.cert.len())
    }
}

/// Reads `--cert` and `--key`; a file that holds both may be given as `--cert` alone, as curl
/// allows. Every fault is a one-line usage error naming the option and file.
pub fn read(cert: Option<&Path>, key: Option<&Path>) -> Result<Option<Identity>, String> {
    let cert = match (cert, key) {
        (None, None) => return Ok(None),
        (None, Some(_)) => return Err("--key needs --cert".into()),
        (Some(cert), _) => cert,
    };
    let (cert_text, chain) = read_certificates(cert, "--cert")?;
    let private_key = match key {
        Some(key) => PrivateKeyDer::from_pem_slice(&read_pem(key, "--key")?)
            .map_err(|_| fault("--key", key, "no PEM private key in it"))?,
        None => PrivateKeyDer::from_pem_slice(&cert_text)
            .map_err(|_| "--cert needs --key (or a file holding both)".to_string())?,
    };
    let key = key.unwrap_or(cert);
    let provider = rustls::crypto::ring::default_provider();
    let certified = CertifiedKey::from_der(chain, private_key, &provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => format!(
            "--key {} does not match the certificate of --cert {}",
            shown(key),
            shown(cert)
        ),
        other => fault("--key", key, format!("unusable key ({other})")),
    })?;
    Ok(Some(Identity(Arc::new(certified))))
}

fn shown(path: &Path) -> String {
    quoted(&path.display().to_string())
}
