//! TLS for `https://`, `grpcs://`, `rediss://` and `amqps://` targets (rustls with the `ring`
//! provider). Certificates are verified by default against roots built into the binary (a
//! `FROM scratch` image has no CA files) plus the system's bundle when there is one, and
//! `--cacert`'s; `--insecure` accepts any certificate, as the kubelet's own httpGet does.
//!
//! The system bundle is read only for a chain that the built-in roots and `--cacert` do not
//! anchor: parsing Debian's 220 KB of PEM took 7 M instructions, ~1 ms, nine tenths of a
//! one-shot `https://` probe (callgrind), for roots that almost every chain does not need.
//! Trusting the union of the three sets either way, the result is the same.

mod asked;
mod identity;
mod pem;
mod words;
mod x509;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use rustls::{Error as TlsError, SignatureScheme};
use tokio_rustls::TlsConnector;

use crate::error::{describe_io, Failure};
use crate::net::transport::BoxedIo;
use crate::redact::quoted;
use crate::target::Host;

pub use identity::{read as read_identity, Identity};

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

/// The TLS client settings of one run: the same trust, one per ALPN protocol.
#[derive(Debug)]
pub struct Clients {
    /// ALPN `http/1.1`.
    http1: Arc<ClientConfig>,
    /// ALPN `h2`.
    h2: Arc<ClientConfig>,
    /// No ALPN.
    plain: Arc<ClientConfig>,
    /// `--tls-server-name`: the name to use instead of the URL's host.
    server_name: Option<ServerName<'static>>,
}

impl Clients {
    /// Builds the settings: the roots and `cacert`, or with `insecure` no verification (said
    /// once in the log); `client_cert` to offer; `server_name` instead of the URL's host.
    pub fn new(
        insecure: bool,
        cacert: &[Certificate],
        client_cert: Option<&Identity>,
        server_name: Option<ServerName<'static>>,
    ) -> Result<Clients, Failure> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup: {e}"))?;
        let trust = if insecure {
            tracing::warn!("--insecure: TLS certificates are not verified");
            Trust::Any
        } else {
            Trust::Roots {
                quick: verifier(quick_roots(cacert), &provider)?,
                all: OnceLock::new(),
                cacert: cacert.to_vec(),
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier { trust, provider }));
        let config = match client_cert {
            Some(Identity(certified)) => builder.with_client_cert_resolver(Arc::new(
                rustls::sign::SingleCertAndKey::from(Arc::clone(certified)),
            )),
            None => builder.with_client_cert_resolver(Arc::new(asked::NoClientCert)),
        };
        let with_alpn = |protocol: &[u8]| {
            let mut config = config.clone();
            config.alpn_protocols = vec![protocol.to_vec()];
            Arc::new(config)
        };
        Ok(Clients {
            http1: with_alpn(b"http/1.1"),
            h2: with_alpn(b"h2"),
            plain: Arc::new(config),
            server_name,
        })
    }
}

/// The built-in roots and `--cacert`'s: what most chains are anchored by.
fn quick_roots(cacert: &[Certificate]) -> RootCertStore {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    roots.add_parsable_certificates(cacert.iter().cloned());
    roots
}

/// The quick roots and the system bundle's; `None` when there is no bundle.
fn all_roots(cacert: &[Certificate]) -> Option<RootCertStore> {
    let bundle = std::env::var_os("SSL_CERT_FILE")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            SYSTEM_BUNDLES
                .iter()
                .map(Path::new)
                .find(|path| path.is_file())
                .map(Path::to_path_buf)
        })?;
    // Only a regular file of bounded size: SSL_CERT_FILE may name a FIFO or /dev/zero.
    let text = match pem::read(&bundle) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!(
                "CA bundle {}: {}; not used",
                quoted(&bundle.display().to_string()),
                describe_io(&e)
            );
            return None;
        }
    };
    // A certificate the system bundle holds but webpki cannot use is skipped, as curl does.
    let mut roots = quick_roots(cacert);
    roots.add_parsable_certificates(CertificateDer::pem_slice_iter(&text).flatten());
    Some(roots)
}

/// webpki's verifier over `roots`.
fn verifier(
    roots: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, Failure> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|e| Failure::Tls(format!("TLS setup: {e}")))
}

/// Reads `--cacert FILE`: every certificate in it, each usable as a trust anchor. Any fault is
/// the one-line usage error naming the file.
pub fn read_cacert(path: &Path) -> Result<Vec<Certificate>, String> {
    read_roots(path, "--cacert")
}

/// Reads a PEM bundle of trust anchors; a fault is one line naming `what` and the file.
pub fn read_roots(path: &Path, what: &str) -> Result<Vec<Certificate>, String> {
    let fault = |why: &str| format!("{what} {}: {why}", quoted(&path.display().to_string()));
    let text = pem::read(path).map_err(|e| fault(&describe_io(&e)))?;
    let certificates = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fault(&format!("not a PEM bundle ({e})")))?;
    if certificates.is_empty() {
        return Err(fault("no PEM certificate in it"));
    }
    for certificate in &certificates {
        RootCertStore::empty()
            .add(certificate.clone())
            .map_err(|e| fault(&format!("unusable certificate ({e})")))?;
    }
    Ok(certificates)
}

/// TLS settings (ALPN `http/1.1`) that trust `roots` and nothing else: for a server whose own
/// CA is known, as a pod knows its API server's from the service account's `ca.crt`.
pub fn trusting_only(roots: &[Certificate]) -> Result<Arc<ClientConfig>, Failure> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut store = RootCertStore::empty();
    store.add_parsable_certificates(roots.iter().cloned());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Wraps `stream` in TLS. The server name (SNI, and the name the certificate must carry) is
/// the URL's host, as curl does: a `Host:` header does not change it, and an IP literal is
/// checked against the certificate's IP addresses with no SNI sent.
pub async fn connect(
    stream: BoxedIo,
    host: &Host,
    alpn: Alpn,
    clients: &Clients,
) -> Result<BoxedIo, Failure> {
    let config = match alpn {
        Alpn::Http1 => &clients.http1,
        Alpn::H2 => &clients.h2,
        Alpn::None => &clients.plain,
    };
    let trust = "trust it with --cacert, or skip verification with --insecure";
    let name = match &clients.server_name {
        Some(name) => name.clone(),
        None => server_name(host)?,
    };
    let shown = name.to_str().into_owned();
    asked::handshake(&shown, connect_named(stream, name, config, trust)).await
}

/// The TLS server name of `host`: an IP literal as an address, a name without its final dot.
fn server_name(host: &Host) -> Result<ServerName<'static>, Failure> {
    match host {
        Host::Ip(ip) => Ok(ServerName::IpAddress((*ip).into())),
        Host::Name(name) => {
            let name = name.strip_suffix('.').unwrap_or(name);
            ServerName::try_from(name.to_string()).map_err(|_| {
                Failure::Tls(format!("{} is not a valid TLS server name", quoted(name)))
            })
        }
    }
}

/// `--tls-server-name NAME`: the name to send (SNI) and check the certificate against instead
/// of the URL's host, e.g. when dialling an IP address. An IP address is checked as one.
pub fn parse_server_name(text: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(text.to_string()).map_err(|_| {
        format!(
            "--tls-server-name {}: not a DNS name or IP address",
            quoted(text)
        )
    })
}

/// Wraps `stream` in TLS with these settings, `host` as the server name (as [`connect`]);
/// `trust` tells how to trust a certificate of an unknown authority.
pub async fn connect_with(
    stream: BoxedIo,
    host: &Host,
    config: &Arc<ClientConfig>,
    trust: &str,
) -> Result<BoxedIo, Failure> {
    connect_named(stream, server_name(host)?, config, trust).await
}

/// Wraps `stream` in TLS with these settings and this server name.
async fn connect_named(
    stream: BoxedIo,
    server_name: ServerName<'static>,
    config: &Arc<ClientConfig>,
    trust: &str,
) -> Result<BoxedIo, Failure> {
    let stream = TlsConnector::from(Arc::clone(config))
        .connect(server_name, stream)
        .await
        .map_err(|e| format!("TLS handshake: {}", describe_tls(&e, trust)))?;
    Ok(Box::new(stream))
}

/// A handshake failure in words a person can act on.
fn describe_tls(err: &std::io::Error, trust: &str) -> String {
    let Some(tls) = err.get_ref().and_then(|e| e.downcast_ref::<TlsError>()) else {
        return describe_io(err);
    };
    match tls {
        TlsError::InvalidCertificate(problem) => words::certificate(problem, trust),
        TlsError::AlertReceived(alert) => format!("the server sent alert {alert:?}"),
        other => other.to_string(),
    }
}

/// How a server's certificate chain is judged.
#[derive(Debug)]
enum Trust {
    /// `--insecure`: any certificate is accepted.
    Any,
    /// Against the quick roots, and only if none of them anchors the chain, against all roots,
    /// reading the system bundle then (once per run).
    Roots {
        /// Built-in roots and `--cacert`'s.
        quick: Arc<WebPkiServerVerifier>,
        /// Those and the system bundle's, made on first need; `None` without a bundle.
        all: OnceLock<Option<Arc<WebPkiServerVerifier>>>,
        /// `--cacert`'s certificates, for `all`.
        cacert: Vec<Certificate>,
    },
}

/// readygate's certificate verifier: the chain as [`Trust`] says; the handshake's own
/// signatures always, so that even with `--insecure` the session is with the holder of the
/// certificate's key.
#[derive(Debug)]
struct Verifier {
    /// How the chain is judged.
    trust: Trust,
    /// The signature algorithms, and what `all` is built with.
    provider: Arc<CryptoProvider>,
}

/// A refused certificate that signed itself, looked at again. `--cacert` holding it exactly
/// makes it trusted, CA or not, as curl does (webpki refuses a CA certificate as a server's:
/// its validity was checked before that, its name is checked here); any other is named a
/// self-signed certificate rather than an unknown authority.
fn self_signed(
    err: TlsError,
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    server_name: &ServerName<'_>,
    cacert: &[Certificate],
) -> Result<ServerCertVerified, TlsError> {
    if !intermediates.is_empty() || !x509::is_self_issued(end_entity) {
        return Err(err);
    }
    let ca_as_server = matches!(
        &err,
        TlsError::InvalidCertificate(CertificateError::Other(other))
            if other.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::CaUsedAsEndEntity)
    );
    let unknown = err == TlsError::InvalidCertificate(CertificateError::UnknownIssuer);
    let given = cacert.iter().any(|c| c.as_ref() == end_entity.as_ref());
    if ca_as_server && given {
        let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_name(&parsed, server_name)?;
        return Ok(ServerCertVerified::assertion());
    }
    if ca_as_server || unknown {
        return Err(words::self_signed());
    }
    Err(err)
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
        let Trust::Roots { quick, all, cacert } = &self.trust else {
            return Ok(ServerCertVerified::assertion());
        };
        let verify = |verifier: &WebPkiServerVerifier| {
            verifier.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        };
        let unknown = TlsError::InvalidCertificate(CertificateError::UnknownIssuer);
        let verdict = match verify(quick) {
            Err(err) if err == unknown => {
                let all = all.get_or_init(|| verifier(all_roots(cacert)?, &self.provider).ok());
                all.as_deref().map_or(Err(unknown), verify)
            }
            verdict => verdict,
        };
        verdict.or_else(|err| self_signed(err, end_entity, intermediates, server_name, cacert))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cacert_faults_are_one_line_usage_errors() {
        let dir = std::env::temp_dir().join(format!("readygate-cacert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = read_cacert(&dir.join("missing.pem")).unwrap_err();
        assert!(missing.starts_with("--cacert \""), "{missing}");
        assert!(missing.contains("no such file"), "{missing}");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "just text\n").unwrap();
        let err = read_cacert(&empty).unwrap_err();
        assert!(err.contains("no PEM certificate"), "{err}");
        let broken = dir.join("broken.pem");
        std::fs::write(
            &broken,
            "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let err = read_cacert(&broken).unwrap_err();
        assert!(err.contains("not a PEM bundle"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn built_in_roots_are_there_without_any_file() {
        assert!(quick_roots(&[]).len() > 100);
    }
}
