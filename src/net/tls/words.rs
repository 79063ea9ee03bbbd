//! TLS failures in words a person can act on: what is wrong, and the fix.

use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::pki_types::UnixTime;
use rustls::{CertificateError as Cert, Error, OtherError};

/// The server's certificate signed itself and no trusted root is it: said so, rather than as
/// an unknown authority or webpki's `CaUsedAsEndEntity`.
#[derive(Debug)]
struct SelfSigned;

impl std::fmt::Display for SelfSigned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("self-signed certificate")
    }
}

impl std::error::Error for SelfSigned {}

/// [`SelfSigned`] as the verifier returns it.
pub fn self_signed() -> Error {
    Error::InvalidCertificate(Cert::Other(OtherError(Arc::new(SelfSigned))))
}

/// What to tell about a failed handshake beyond its cause.
pub struct Advice<'a> {
    /// How to trust a certificate of an unknown authority.
    pub trust: &'a str,
    /// How to skip verification, where the user may (`--insecure`).
    pub skip: Option<&'a str>,
    /// The scheme without TLS (`http://`), for a server that does not speak TLS.
    pub plain: Option<&'a str>,
}

/// A failed handshake in words; a certificate that fails verification is said to, with how
/// to trust it or skip verification.
pub fn handshake(err: &io::Error, advice: &Advice) -> String {
    let problem = match err.get_ref().and_then(|e| e.downcast_ref()) {
        Some(Error::InvalidCertificate(problem)) => problem,
        Some(Error::AlertReceived(alert)) => return format!("the server sent alert {alert:?}"),
        // A plain server's first bytes (`HTTP/1.1 400`, `-ERR`) are no TLS record.
        Some(Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)) => {
            return match advice.plain {
                Some(plain) => format!("the server does not speak TLS: try {plain}"),
                None => "the server does not speak TLS".into(),
            }
        }
        Some(other) => return other.to_string(),
        None => return crate::error::describe_io(err),
    };
    let reason = certificate(problem, advice.trust);
    match advice.skip {
        Some(skip) if !reason.contains(skip) => {
            format!("certificate verification failed: {reason}; or {skip}")
        }
        _ => format!("certificate verification failed: {reason}"),
    }
}

/// A certificate that failed verification, in words; `trust` says how to trust one of an
/// unknown authority.
fn certificate(problem: &Cert, trust: &str) -> String {
    let renew = "renew the server's certificate";
    match problem {
        Cert::UnknownIssuer => format!("certificate signed by an unknown authority ({trust})"),
        Cert::NotValidForNameContext {
            expected,
            presented,
        } if presented.is_empty() => format!(
            "certificate not valid for {} (it names no host in a subjectAltName: reissue it with \
             one)",
            expected.to_str()
        ),
        Cert::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "certificate not valid for {} (it is for {}: ask for one of those names, or set \
             --tls-server-name)",
            expected.to_str(),
            presented
                .iter()
                .map(|name| as_written(name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Cert::Expired => format!("certificate expired ({renew})"),
        Cert::ExpiredContext { not_after, .. } => {
            format!("certificate expired on {} ({renew})", date(*not_after))
        }
        Cert::NotValidYetContext { not_before, .. } => format!(
            "certificate not valid before {} (check the clocks of this machine and the server)",
            date(*not_before)
        ),
        Cert::Revoked => "certificate revoked".into(),
        Cert::BadSignature => "certificate signature does not verify".into(),
        Cert::BadEncoding => "certificate malformed".into(),
        Cert::UnsupportedSignatureAlgorithmContext { .. }
        | Cert::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "certificate signed with an algorithm readygate does not support".into()
        }
        Cert::InvalidPurpose | Cert::InvalidPurposeContext { .. } => {
            "certificate not meant for a TLS server (its extended key usage)".into()
        }
        Cert::Other(OtherError(other)) if other.is::<SelfSigned>() => {
            format!("self-signed certificate ({trust})")
        }
        Cert::Other(OtherError(other)) => match other.downcast_ref() {
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

/// A name as webpki presents it (`DnsName("web")`, `IpAddress(10.0.0.1)`), as people write it.
fn as_written(presented: &str) -> &str {
    let inner = presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'));
    inner.unwrap_or(presented).trim_matches('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_says_what_to_do() {
        let time = UnixTime::since_unix_epoch(Duration::from_secs(1_700_000_000));
        let expected = rustls::pki_types::ServerName::try_from("db.local").unwrap();
        let presented = vec![
            "DnsName(\"localhost\")".into(),
            "IpAddress(10.0.0.1)".into(),
        ];
        let expired = Cert::ExpiredContext {
            time,
            not_after: time,
        };
        let name = Cert::NotValidForNameContext {
            expected: expected.clone(),
            presented,
        };
        let nameless = Cert::NotValidForNameContext {
            expected,
            presented: Vec::new(),
        };
        let cases = [
            (
                Cert::UnknownIssuer.into(),
                "unknown authority (trust it with --cacert)",
            ),
            (expired.into(), "expired on 2023-11-14T22:13:20Z (renew"),
            (
                name.into(),
                "not valid for db.local (it is for localhost, 10.0.0.1: ask",
            ),
            (nameless.into(), "(it names no host in a subjectAltName"),
            (
                self_signed(),
                "self-signed certificate (trust it with --cacert)",
            ),
        ];
        let advice = Advice {
            trust: "trust it with --cacert",
            skip: None,
            plain: None,
        };
        for (problem, words) in cases {
            let text = handshake(&io::Error::other(problem), &advice);
            assert!(text.contains(words), "{text}");
            assert!(!text.contains("Other("), "{text}");
        }
    }
}
