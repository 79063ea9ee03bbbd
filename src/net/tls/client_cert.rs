//! Client certificates: `--cert FILE --key FILE`, read and matched once by the plan, offered to
//! a server that asks (mutual TLS, e.g. etcd as kubeadm sets it up); and, when none is set,
//! noticing that one was asked for: with TLS 1.3 the server refuses only after the handshake,
//! and the client then sees a bare "connection closed".

use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;

use super::{fault, read_certificates, read_pem};
use crate::text::quoted;

/// A client certificate chain and its private key, known to match.
#[derive(Clone)]
pub struct Identity(Arc<CertifiedKey>);

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
        rustls::Error::InconsistentKeys(_) => {
            let shown = |path: &Path| quoted(&path.display().to_string());
            let (key, cert) = (shown(key), shown(cert));
            format!("--key {key} does not match the certificate of --cert {cert}")
        }
        other => fault("--key", key, format!("unusable key ({other})")),
    })?;
    Ok(Some(Identity(Arc::new(certified))))
}

/// A client certificate chain and key given as PEM bytes (a kubeconfig's `*-data`, an exec
/// credential plugin's answer); a fault names `what`.
pub fn from_pem(cert: &[u8], key: &[u8], what: &str) -> Result<Identity, String> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: the client certificate is not PEM ({e})"))?;
    if chain.is_empty() {
        return Err(format!("{what}: no PEM client certificate"));
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|_| format!("{what}: no PEM private key for the client certificate"))?;
    let provider = rustls::crypto::ring::default_provider();
    let certified = CertifiedKey::from_der(chain, key, &provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => {
            format!("{what}: the client key does not match the client certificate")
        }
        other => format!("{what}: unusable client key ({other})"),
    })?;
    Ok(Identity(Arc::new(certified)))
}

/// Whether a server asked for a client certificate that is not set, for the run's TLS
/// settings: rustls's resolver has no other way to tell the handshake that called it.
#[derive(Debug, Default)]
pub struct Asked {
    /// Set by [`Offer`] without a certificate during one poll of a handshake.
    during: AtomicBool,
    /// Whether the warning was given (once per run).
    said: AtomicBool,
}

/// The client-certificate resolver: offers the identity if there is one, else notes in
/// `asked` that one was asked for.
#[derive(Debug)]
pub struct Offer {
    pub identity: Option<Identity>,
    pub asked: Arc<Asked>,
}

impl ResolvesClientCert for Offer {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        let offered = self
            .identity
            .as_ref()
            .map(|Identity(certified)| Arc::clone(certified));
        self.asked
            .during
            .store(offered.is_none(), Ordering::Relaxed);
        offered
    }

    fn has_certs(&self) -> bool {
        self.identity.is_some()
    }
}

/// Runs the handshake `connecting`; when its server asked for a client certificate and none
/// is set, says so once per run (a warning: the refusal comes later, in other words). `asked`
/// is the run's, shared with its [`Offer`]; the flag is read around each poll, and the
/// runtime polls one future at a time on its thread, so it is this handshake's.
pub async fn handshake<F: Future>(host: &str, connecting: F, asked: Option<&Asked>) -> F::Output {
    let Some(asked) = asked else {
        return connecting.await;
    };
    let mut connecting = std::pin::pin!(connecting);
    let mut was_asked = false;
    let outcome = std::future::poll_fn(|cx| {
        asked.during.store(false, Ordering::Relaxed);
        let polled = connecting.as_mut().poll(cx);
        was_asked |= asked.during.load(Ordering::Relaxed);
        polled
    })
    .await;
    if was_asked && !asked.said.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "{host} asked for a TLS client certificate and none is set (--cert FILE --key FILE)"
        );
    }
    outcome
}
