//! `--cert FILE --key FILE`: the client certificate an `https://` or `grpcs://` server may ask
//! for (mutual TLS, e.g. etcd as kubeadm sets it up), read and matched once, by the plan.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

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
    let shown = |path: &Path| quoted(&path.display().to_string());
    let (cert_path, key_path) = match (cert, key) {
        (None, None) => return Ok(None),
        (None, Some(_)) => return Err("--key needs --cert".into()),
        (Some(cert), key) => (cert, key),
    };
    let read = |option: &str, path: &Path| {
        super::pem::read(path).map_err(|e| {
            format!(
                "{option} {}: {}",
                shown(path),
                crate::error::describe_io(&e)
            )
        })
    };
    let cert_text = read("--cert", cert_path)?;
    let chain = CertificateDer::pem_slice_iter(&cert_text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("--cert {}: not a PEM file ({e})", shown(cert_path)))?;
    if chain.is_empty() {
        return Err(format!(
            "--cert {}: no PEM certificate in it",
            shown(cert_path)
        ));
    }
    let private_key = match key_path {
        Some(path) => {
            let text = read("--key", path)?;
            PrivateKeyDer::from_pem_slice(&text)
                .map_err(|_| format!("--key {}: no PEM private key in it", shown(path)))?
        }
        None => PrivateKeyDer::from_pem_slice(&cert_text)
            .map_err(|_| "--cert needs --key (or a file holding both)".to_string())?,
    };
    let key_shown = shown(key_path.unwrap_or(cert_path));
    let provider = rustls::crypto::ring::default_provider();
    let certified = CertifiedKey::from_der(chain, private_key, &provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => format!(
            "--key {key_shown} does not match the certificate of --cert {}",
            shown(cert_path)
        ),
        other => format!("--key {key_shown}: unusable key ({other})"),
    })?;
    Ok(Some(Identity(Arc::new(certified))))
}
