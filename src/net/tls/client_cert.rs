//! Client certificates: `--cert FILE --key FILE`, read and matched once by the plan, offered to
//! a server that asks (mutual TLS, e.g. etcd as kubeadm sets it up); and, when none is set,
//! noticing that one was asked for: with TLS 1.3 the server refuses only after the handshake,
//! and the client then sees a bare "connection closed".

use std::cell::Cell;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;

use super::{fault, read_certificates, read_pem};
use crate::redact::quoted;

thread_local! {
    /// Set by [`Offer`] without a certificate while a handshake is polled on this thread.
    static ASKED: Cell<bool> = const { Cell::new(false) };
}

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

/// The client-certificate resolver: offers the identity if there is one, else notes that one
/// was asked for.
#[derive(Debug)]
pub struct Offer(pub Option<Identity>);

impl ResolvesClientCert for Offer {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        let offered = self
            .0
            .as_ref()
            .map(|Identity(certified)| Arc::clone(certified));
        ASKED.set(offered.is_none());
        offered
    }

    fn has_certs(&self) -> bool {
        self.0.is_some()
    }
}

/// Runs the handshake `connecting`; when its server asked for a client certificate and none
/// is set, says so once per run (a warning: the refusal comes later, in other words).
pub async fn handshake<F: Future>(host: &str, connecting: F) -> F::Output {
    static SAID: AtomicBool = AtomicBool::new(false);
    let mut connecting = std::pin::pin!(connecting);
    let mut asked = false;
    let outcome = std::future::poll_fn(|cx| {
        ASKED.set(false);
        let polled = connecting.as_mut().poll(cx);
        asked |= ASKED.get();
        polled
    })
    .await;
    if asked && !SAID.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "{host} asked for a TLS client certificate and none is set (--cert FILE --key FILE)"
        );
    }
    outcome
}
