//! TLS for `https://`, `grpcs://`, `rediss://` and `amqps://` targets (rustls with `ring`).
//! Certificates are verified against roots built into the binary (a `FROM scratch` image has no
//! CA files), `--cacert`'s, and, only for a chain those do not anchor, the system's bundle (slow
//! to parse, and rarely needed); `--insecure` accepts any certificate, as the kubelet's httpGet.

mod client_cert;
pub mod server_cert;
mod words;

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use rustls::{Error as TlsError, SignatureScheme};
use tokio_rustls::TlsConnector;

use super::endpoint::Host;
use crate::error::{describe_io, Failure};
use crate::net::transport::BoxedIo;
use crate::runtime::lane::Lane;
use crate::runtime::{Attempt, TLS_HANDSHAKE};
use crate::text::quoted;

pub use client_cert::{from_pem as identity_from_pem, read as read_identity, Identity};

/// A trusted root certificate, as read from a PEM bundle.
pub type Certificate = CertificateDer<'static>;

/// Where Linux distributions keep their CA bundle (the list Go's `crypto/x509` reads); the first
/// that exists is used. `SSL_CERT_FILE` names another, as for OpenSSL and Go.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The largest PEM file read: Debian's whole CA bundle is about 220 KB.
const MAX_PEM: u64 = 4 << 20;

/// Which application protocol to ask the server for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    /// `http/1.1`, for `https://`.
    Http1,
    /// `h2`, for `grpcs://`.
    H2,
    /// None, for protocols that do not negotiate one (`rediss://`, `amqps://`).
    None,
}

impl Alpn {
    fn protocols(self) -> Vec<Vec<u8>> {
        match self {
            Alpn::Http1 => vec![b"http/1.1".to_vec()],
            Alpn::H2 => vec![b"h2".to_vec()],
            Alpn::None => vec![],
        }
    }
}

/// The warnings TLS settings give once per run, whichever of the run's settings give them
/// (the targets', `--on-exit`'s notice).
#[derive(Debug, Default)]
pub struct Told {
    /// Whether `--insecure` was said.
    insecure: AtomicBool,
    /// Whether a server asked for a client certificate that is not set, and was told so.
    asked: Arc<client_cert::Asked>,
}

/// The TLS client settings of one run, but for the ALPN protocol each connection sets.
#[derive(Debug)]
pub struct Clients {
    config: ClientConfig,
    /// Whether a server asked for a client certificate that is not set, and was told so.
    asked: Arc<client_cert::Asked>,
    /// `--tls-server-name`: the name to use instead of the URL's host.
    server_name: Option<ServerName<'static>>,
    /// The system bundle's bytes, which the verifier reads: read before the first handshake,
    /// off the runtime's thread (`SSL_CERT_FILE` may be on a mount that does not answer).
    bundle: Arc<OnceLock<Option<Vec<u8>>>>,
    /// Where the bundle is read: one read at a time, however many targets wait for it.
    lane: Lane,
}

impl Clients {
    /// Builds the settings: the roots and `cacert`, or with `insecure` no verification (said
    /// once per run, as `told` keeps); `client_cert` to offer; `server_name` instead of the URL's
    /// host.
    pub fn new(
        insecure: bool,
        cacert: &[Certificate],
        client_cert: Option<&Identity>,
        server_name: Option<ServerName<'static>>,
        told: &Told,
    ) -> Result<Clients, Failure> {
        if insecure && !told.insecure.swap(true, Ordering::Relaxed) {
            tracing::warn!("--insecure: TLS certificates are not verified");
        }
        let bundle = Arc::new(OnceLock::new());
        let asked = Arc::clone(&told.asked);
        let verifier = Verifier {
            insecure,
            quick: verifier(quick_roots(cacert))?,
            all: OnceLock::new(),
            cacert: cacert.to_vec(),
            bundle: bundle.clone(),
        };
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(setup)?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_client_cert_resolver(Arc::new(client_cert::Offer {
                identity: client_cert.cloned(),
                asked: Arc::clone(&asked),
            }));
        // Without verification no bundle is needed.
        if insecure {
            let _ = bundle.set(None);
        }
        Ok(Clients {
            config,
            asked,
            server_name,
            bundle,
            lane: Lane::default(),
        })
    }

    /// Reads the system bundle on the lane, unless it was: the attempt's timeout and the
    /// run's signals bound the wait, and a later attempt waits for the same read.
    async fn read_bundle(&self, at: &Attempt) -> Result<(), Failure> {
        if self.bundle.get().is_some() {
            return Ok(());
        }
        at.waiting_for(BUNDLE_NOT_READ);
        let bundle = self.lane.run(read_system_bundle).await?;
        let _ = self.bundle.set(bundle);
        at.waiting_for(TLS_HANDSHAKE);
        Ok(())
    }
}

/// What an attempt waits for while the system bundle is read.
const BUNDLE_NOT_READ: &str = "CA bundle (SSL_CERT_FILE, or the system's) not read";

/// The cryptography: rustls's `ring` provider.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A fault in building the TLS settings.
fn setup(e: impl Display) -> Failure {
    Failure::Text(format!("TLS setup: {e}"))
}

/// The built-in roots and `--cacert`'s: what most chains are anchored by.
fn quick_roots(cacert: &[Certificate]) -> RootCertStore {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    roots.add_parsable_certificates(cacert.iter().cloned());
    roots
}

/// The system bundle (`SSL_CERT_FILE`, else the first of [`SYSTEM_BUNDLES`] there), if there
/// is a usable one; blocking.
fn read_system_bundle() -> Option<Vec<u8>> {
    let bundle = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .or_else(|| {
            let mut paths = SYSTEM_BUNDLES.iter().map(PathBuf::from);
            paths.find(|path| path.is_file())
        })?;
    read_pem(&bundle, "CA bundle")
        .map_err(|fault| tracing::warn!("{fault}; not used"))
        .ok()
}

/// The quick roots and those of the system bundle's `text`.
fn all_roots(cacert: &[Certificate], text: &[u8]) -> RootCertStore {
    // A certificate the system bundle holds but webpki cannot use is skipped, as curl does.
    let mut roots = quick_roots(cacert);
    roots.add_parsable_certificates(CertificateDer::pem_slice_iter(text).flatten());
    roots
}

/// webpki's verifier over `roots`.
fn verifier(roots: RootCertStore) -> Result<Arc<WebPkiServerVerifier>, Failure> {
    let builder = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider());
    builder.build().map_err(setup)
}

/// One line naming the file `what` (an option) gives, and what is wrong with it.
fn fault(what: &str, path: &Path, why: impl Display) -> String {
    format!("{what} {}: {why}", quoted(&path.display().to_string()))
}

/// The PEM file at `path` that `what` names: only a regular file (`SSL_CERT_FILE` may name a
/// FIFO or `/dev/zero`) of at most [`MAX_PEM`] bytes.
fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    // One byte past the cap tells a file over it, even one that grows while read.
    let content = crate::regular_file::read_head(path, MAX_PEM + 1)
        .map_err(|e| fault(what, path, describe_io(&e)))?;
    if content.len() as u64 > MAX_PEM {
        return Err(fault(what, path, "larger than 4 MiB"));
    }
    Ok(content)
}

/// The PEM file at `path` and the certificates in it (at least one).
fn read_certificates(path: &Path, what: &str) -> Result<(Vec<u8>, Vec<Certificate>), String> {
    let text = read_pem(path, what)?;
    let certificates = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fault(what, path, format!("not a PEM bundle ({e})")))?;
    if certificates.is_empty() {
        return Err(fault(what, path, "no PEM certificate in it"));
    }
    Ok((text, certificates))
}

/// Reads `--cacert FILE`: every certificate in it, each usable as a trust anchor.
pub fn read_cacert(path: &Path) -> Result<Vec<Certificate>, String> {
    read_roots(path, "--cacert")
}

/// Reads a PEM bundle of trust anchors; a fault is one line naming `what` and the file.
pub fn read_roots(path: &Path, what: &str) -> Result<Vec<Certificate>, String> {
    let (_, certificates) = read_certificates(path, what)?;
    for certificate in &certificates {
        RootCertStore::empty()
            .add(certificate.clone())
            .map_err(|e| fault(what, path, format!("unusable certificate ({e})")))?;
    }
    Ok(certificates)
}

/// TLS settings (ALPN `http/1.1`) that trust `roots` and nothing else: for a server whose own
/// CA is known, as a pod knows its API server's from the service account's `ca.crt`. A
/// self-signed server certificate that `roots` holds exactly is trusted, CA or not, as kubectl
/// trusts it.
pub fn trusting_only(roots: &[Certificate]) -> Result<Arc<ClientConfig>, Failure> {
    for_cluster(Some(roots), false, None)
}

/// TLS settings (ALPN `http/1.1`) for an API server named by a kubeconfig: its CA's `roots`
/// alone when it names one, else the built-in roots; no verification with `insecure`
/// (`insecure-skip-tls-verify`); `identity` offered as the client certificate.
pub fn for_cluster(
    roots: Option<&[Certificate]>,
    insecure: bool,
    identity: Option<&Identity>,
) -> Result<Arc<ClientConfig>, Failure> {
    let store = match roots {
        Some(roots) => {
            let mut store = RootCertStore::empty();
            store.add_parsable_certificates(roots.iter().cloned());
            store
        }
        None => quick_roots(&[]),
    };
    let verifier = Verifier {
        insecure,
        quick: verifier(store)?,
        all: OnceLock::new(),
        cacert: roots.map(<[_]>::to_vec).unwrap_or_default(),
        // No system bundle: a kubeconfig names its CA, and the built-in roots cover the rest.
        bundle: Arc::new(OnceLock::from(None)),
    };
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(setup)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_client_cert_resolver(Arc::new(client_cert::Offer {
            identity: identity.cloned(),
            asked: Arc::default(),
        }));
    config.alpn_protocols = Alpn::Http1.protocols();
    Ok(Arc::new(config))
}

/// Reads a PEM bundle of trust anchors given as bytes (a kubeconfig's
/// `certificate-authority-data`); a fault names `what`.
pub fn roots_from_pem(text: &[u8], what: &str) -> Result<Vec<Certificate>, String> {
    let certificates = CertificateDer::pem_slice_iter(text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: not a PEM bundle ({e})"))?;
    if certificates.is_empty() {
        return Err(format!("{what}: no PEM certificate in it"));
    }
    Ok(certificates)
}

/// Wraps `stream` in TLS. The server name (SNI, and the name the certificate must carry) is
/// the URL's host, as curl does: a `Host:` header does not change it, and an IP literal is
/// checked against the certificate's IP addresses with no SNI sent.
/// `plain` is the scheme without TLS (`http://`), to suggest to a server that does not speak it.
pub async fn connect(
    stream: BoxedIo,
    host: &Host,
    alpn: Alpn,
    plain: &str,
    clients: &Clients,
    at: &Attempt,
) -> Result<BoxedIo, Failure> {
    let skip = "skip verification with --insecure, as the kubelet's httpGet does";
    let advice = words::Advice {
        trust: &format!("trust it with --cacert FILE, or {skip}"),
        skip: Some(skip),
        plain: Some(plain),
    };
    let mut config = clients.config.clone();
    config.alpn_protocols = alpn.protocols();
    let name = clients.server_name.clone();
    clients.read_bundle(at).await?;
    let asked = Some(&*clients.asked);
    handshake(stream, host, name, Arc::new(config), &advice, asked).await
}

/// Wraps `stream` in TLS with these settings, `name` or else `host` as the server name (as
/// [`connect`]);
/// `trust` tells how to trust a certificate of an unknown authority.
pub async fn connect_with(
    stream: BoxedIo,
    host: &Host,
    name: Option<ServerName<'static>>,
    config: &Arc<ClientConfig>,
    trust: &str,
) -> Result<BoxedIo, Failure> {
    let advice = words::Advice {
        trust,
        skip: None,
        plain: None,
    };
    handshake(stream, host, name, Arc::clone(config), &advice, None).await
}

/// Wraps `stream` in TLS with these settings, naming the server `name` or else `host`.
async fn handshake(
    stream: BoxedIo,
    host: &Host,
    name: Option<ServerName<'static>>,
    config: Arc<ClientConfig>,
    advice: &words::Advice<'_>,
    asked: Option<&client_cert::Asked>,
) -> Result<BoxedIo, Failure> {
    let name = match name {
        Some(name) => name,
        None => server_name(host)?,
    };
    let shown = name.to_str().into_owned();
    let connecting = TlsConnector::from(config).connect(name, stream);
    let stream = client_cert::handshake(&shown, connecting, asked).await;
    let stream = stream
        .map_err(|e| Failure::Text(format!("TLS handshake: {}", words::handshake(&e, advice))))?;
    Ok(Box::new(stream))
}

/// The TLS server name of `host`: an IP literal as an address, a name without its final dot.
fn server_name(host: &Host) -> Result<ServerName<'static>, Failure> {
    match host {
        Host::Ip(ip) => Ok(ServerName::IpAddress((*ip).into())),
        Host::Name(name) => {
            let name = name.strip_suffix('.').unwrap_or(name);
            ServerName::try_from(name.to_string()).map_err(|_| {
                Failure::Text(format!("{} is not a valid TLS server name", quoted(name)))
            })
        }
    }
}

/// `--tls-server-name NAME`: the name to send (SNI) and check the certificate against instead
/// of the URL's host, e.g. when dialling an IP address. An IP address is checked as one.
pub fn parse_server_name(text: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(text.to_string()).map_err(|_| {
        let text = quoted(text);
        format!("--tls-server-name {text}: not a DNS name or IP address")
    })
}

/// readygate's certificate verifier: the chain against the quick roots, and only if none of
/// them anchors it, against all, reading the system bundle then (once per run); any chain with
/// `--insecure`. The handshake's own signatures always, so even then the session is with the
/// holder of the certificate's key.
#[derive(Debug)]
struct Verifier {
    insecure: bool,
    /// Built-in roots and `--cacert`'s.
    quick: Arc<WebPkiServerVerifier>,
    /// Those and the system bundle's, made on first need; `None` without a bundle.
    all: OnceLock<Option<Arc<WebPkiServerVerifier>>>,
    cacert: Vec<Certificate>,
    /// The system bundle's bytes, read before the handshake by [`Clients::read_bundle`].
    bundle: Arc<OnceLock<Option<Vec<u8>>>>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        if self.insecure {
            return Ok(ServerCertVerified::assertion());
        }
        let verify = |verifier: &WebPkiServerVerifier| {
            verifier.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        };
        let unknown = TlsError::InvalidCertificate(CertificateError::UnknownIssuer);
        let verdict = match verify(&self.quick) {
            Err(err) if err == unknown => {
                let all = self.all.get_or_init(|| {
                    let text = self.bundle.get()?.as_deref()?;
                    verifier(all_roots(&self.cacert, text)).ok()
                });
                all.as_deref().map_or(Err(err), verify)
            }
            verdict => verdict,
        };
        let Err(err) = verdict else { return verdict };
        // A refused certificate that signed itself: `--cacert` holding it exactly makes it
        // trusted, CA or not, as curl does (webpki refuses a CA certificate as a server's; its
        // validity was checked before that, its name is checked here); any other is named a
        // self-signed certificate rather than an unknown authority.
        let self_issued = webpki::EndEntityCert::try_from(end_entity)
            .is_ok_and(|cert| cert.issuer() == cert.subject());
        if !intermediates.is_empty() || !self_issued {
            return Err(err);
        }
        let ca_as_server = matches!(&err, TlsError::InvalidCertificate(CertificateError::Other(other))
            if other.0.downcast_ref() == Some(&webpki::Error::CaUsedAsEndEntity));
        if ca_as_server
            && self
                .cacert
                .iter()
                .any(|c| c.as_ref() == end_entity.as_ref())
        {
            let parsed = ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_name(&parsed, server_name)?;
            return Ok(ServerCertVerified::assertion());
        }
        match ca_as_server || err == unknown {
            true => Err(words::self_signed()),
            false => Err(err),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.quick.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.quick.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.quick.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cacert_faults_are_one_line_usage_errors() {
        let dir = std::env::temp_dir().join(format!("readygate-cacert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let broken = "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n";
        let big = "x".repeat(MAX_PEM as usize + 1);
        for (name, text, fault) in [
            ("missing.pem", None, "no such file"),
            ("empty.pem", Some("just text\n"), "no PEM certificate"),
            ("broken.pem", Some(broken), "not a PEM bundle"),
            ("big.pem", Some(&big), "larger than 4 MiB"),
        ] {
            if let Some(text) = text {
                std::fs::write(dir.join(name), text).unwrap();
            }
            let err = read_cacert(&dir.join(name)).unwrap_err();
            assert!(
                err.starts_with("--cacert \"") && err.contains(fault),
                "{err}"
            );
            assert!(!err.contains('\n'), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn built_in_roots_are_there_without_any_file() {
        assert!(quick_roots(&[]).len() > 100);
    }
}
