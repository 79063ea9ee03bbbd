//! A TLS server's certificate: the chain and key files read and matched, and a resolver that
//! hands rustls whichever pair was read last, so the files can be replaced while serving (as
//! cert-manager rotates them) without a restart or a dropped connection.

use std::path::Path;
use std::sync::{Arc, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::{fault, read_certificates, read_pem};
use crate::text::quoted;

/// Reads the chain at `cert` and the key at `key` (PEM), which must match; `flags` name them
/// in errors (`--tls-cert`, `--tls-key`).
pub fn read(cert: &Path, key: &Path, flags: (&str, &str)) -> Result<Arc<CertifiedKey>, String> {
    let (_, chain) = read_certificates(cert, flags.0)?;
    let private_key = PrivateKeyDer::from_pem_slice(&read_pem(key, flags.1)?)
        .map_err(|_| fault(flags.1, key, "no PEM private key in it"))?;
    let provider = rustls::crypto::ring::default_provider();
    let certified = CertifiedKey::from_der(chain, private_key, &provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => {
            let shown = |path: &Path| quoted(&path.display().to_string());
            format!(
                "{} {} does not match the certificate of {} {}",
                flags.1,
                shown(key),
                flags.0,
                shown(cert)
            )
        }
        other => fault(flags.1, key, format!("unusable key ({other})")),
    })?;
    Ok(Arc::new(certified))
}

/// The pair a server presents now; [`Current::replace`] swaps it for new handshakes.
#[derive(Debug)]
pub struct Current(RwLock<Arc<CertifiedKey>>);

impl Current {
    pub fn new(pair: Arc<CertifiedKey>) -> Arc<Current> {
        Arc::new(Current(RwLock::new(pair)))
    }

    /// Presents `pair` from the next handshake on.
    pub fn replace(&self, pair: Arc<CertifiedKey>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = pair;
    }

    /// The pair presented now.
    pub fn get(&self) -> Arc<CertifiedKey> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ResolvesServerCert for Current {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.get())
    }
}

/// A server configuration presenting `current`, speaking HTTP/1.1 (ALPN).
pub fn server_config(current: Arc<Current>) -> Result<rustls::ServerConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_cert_resolver(current);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
