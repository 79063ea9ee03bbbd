//! Noticing that a server asked for a client certificate when none is set: with TLS 1.3 the
//! server refuses only after the handshake, and the client then sees a bare "connection
//! closed". The resolver below records the request for the handshake being polled, so the
//! run can say what to do.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;

thread_local! {
    /// Set by [`NoClientCert`] while a handshake is polled on this thread.
    static ASKED: Cell<bool> = const { Cell::new(false) };
}

/// The client-certificate resolver without `--cert`: offers none, and notes that one was asked.
#[derive(Debug)]
pub struct NoClientCert;

impl ResolvesClientCert for NoClientCert {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        ASKED.set(true);
        None
    }

    fn has_certs(&self) -> bool {
        false
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
