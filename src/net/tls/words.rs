//! Certificate failures in words a person can act on: what is wrong, and the fix.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::pki_types::UnixTime;
use rustls::{CertificateError, OtherError};

/// The server's certificate signed itself and no trusted root is it: said so, rather than
/// as an unknown authority or webpki's `CaUsedAsEndEntity`.
#[derive(Debug)]
pub struct SelfSigned;

impl std::fmt::Display for SelfSigned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("self-signed certificate")
    }
}

impl std::error::Error for SelfSigned {}

/// [`SelfSigned`] as the verifier returns it.
pub fn self_signed() -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(SelfSigned))))
}

/// A handshake failure in words; `trust` says how to trust a certificate of an unknown
/// authority.
pub fn handshake(err: &std::io::Error, trust: &str) -> String {
    let Some(tls) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    else {
        return crate::error::describe_io(err);
    };
    match tls {
        rustls::Error::InvalidCertificate(problem) => certificate(problem, trust),
        rustls::Error::AlertReceived(alert) => format!("the server sent alert {alert:?}"),
        other => other.to_string(),
    }
}

/// `problem` in words; `trust` says how to trust a certificate of an unknown authority.
pub fn certificate(problem: &CertificateError, trust: &str) -> String {
    match problem {
        CertificateError::UnknownIssuer => {
            format!("certificate signed by an unknown authority ({trust})")
        }
        CertificateError::NotValidForName => {
            "certificate not valid for this host name (ask for a name it holds, or set \
             --tls-server-name)"
                .into()
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "certificate not valid for {} (it is for {}: ask for one of those names, or set \
             --tls-server-name)",
            expected.to_str(),
            presented.join(", ")
        ),
        CertificateError::Expired => "certificate expired (renew the server's certificate)".into(),
        CertificateError::ExpiredContext { not_after, .. } => format!(
            "certificate expired on {} (renew the server's certificate)",
            date(*not_after)
        ),
        CertificateError::NotValidYet => {
            "certificate not valid yet (check the clocks of this machine and the server)".into()
        }
        CertificateError::NotValidYetContext { not_before, .. } => format!(
            "certificate not valid before {} (check the clocks of this machine and the server)",
            date(*not_before)
        ),
        CertificateError::Revoked => "certificate revoked".into(),
        CertificateError::BadSignature => "certificate signature does not verify".into(),
        CertificateError::BadEncoding => "certificate malformed".into(),
        CertificateError::UnsupportedSignatureAlgorithmContext { .. }
        | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "certificate signed with an algorithm readygate does not support".into()
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "certificate not meant for a TLS server (its extended key usage)".into()
        }
        CertificateError::Other(OtherError(other)) if other.is::<SelfSigned>() => {
            format!("self-signed certificate ({trust})")
        }
        CertificateError::Other(OtherError(other)) => match other.downcast_ref() {
            Some(webpki::Error::CaUsedAsEndEntity) => {
                "the server's certificate is a CA certificate, signed by another (serve a \
                 server certificate, or trust this one exactly with --cacert if it signed itself)"
                    .into()
            }
            Some(webpki::Error::EndEntityUsedAsCa) => {
                "a server certificate was used to sign another".into()
            }
            Some(
                webpki::Error::PathLenConstraintViolated | webpki::Error::NameConstraintViolation,
            ) => "certificate chain breaks its CA's constraints".into(),
            _ => format!("invalid certificate ({other})"),
        },
        other => format!("invalid certificate ({other:?})"),
    }
}

/// `2026-01-31T12:00:00Z`.
fn date(time: UnixTime) -> String {
    let time = SystemTime::UNIX_EPOCH + Duration::from_secs(time.as_secs());
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_says_what_to_do() {
        let trust = "trust it with --cacert";
        let time = UnixTime::since_unix_epoch(Duration::from_secs(1_700_000_000));
        let cases = [
            (
                CertificateError::UnknownIssuer,
                "unknown authority (trust it with --cacert)",
            ),
            (
                CertificateError::ExpiredContext {
                    time,
                    not_after: time,
                },
                "expired on 2023-11-14T22:13:20Z (renew",
            ),
            (
                CertificateError::NotValidForNameContext {
                    expected: rustls::pki_types::ServerName::try_from("db.local").unwrap(),
                    presented: vec!["DnsName(\"localhost\")".into()],
                },
                "not valid for db.local (it is for",
            ),
            (
                CertificateError::Other(OtherError(Arc::new(SelfSigned))),
                "self-signed certificate (trust it with --cacert)",
            ),
        ];
        for (problem, words) in cases {
            let text = certificate(&problem, trust);
            assert!(text.contains(words), "{text}");
            assert!(!text.contains("Other("), "{text}");
        }
    }
}
