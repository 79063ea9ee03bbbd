//! The one fact about a certificate that webpki does not tell: whether it is self-issued
//! (issuer = subject), read from its DER, so a self-signed server certificate is named so.

/// Whether the DER certificate names itself as its issuer; `false` for anything unreadable.
pub fn is_self_issued(der: &[u8]) -> bool {
    issuer_and_subject(der).is_some_and(|(issuer, subject)| issuer == subject)
}

/// The encoded issuer and subject names of a certificate.
fn issuer_and_subject(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let (certificate, _) = element(der, 0x30)?;
    let (mut tbs, _) = element(certificate, 0x30)?;
    // version [0] EXPLICIT, optional
    if tbs.first() == Some(&0xa0) {
        tbs = element(tbs, 0xa0)?.1;
    }
    let rest = element(tbs, 0x02)?.1; // serialNumber
    let rest = element(rest, 0x30)?.1; // signature algorithm
    let (_, after_issuer) = element(rest, 0x30)?;
    let issuer = &rest[..rest.len() - after_issuer.len()];
    let rest = element(after_issuer, 0x30)?.1; // validity
    let (_, after_subject) = element(rest, 0x30)?;
    let subject = &rest[..rest.len() - after_subject.len()];
    Some((issuer, subject))
}

/// One DER element with tag `tag` at the start of `input`: its content and what follows it.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&found, rest) = input.split_first()?;
    if found != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let length = rest[..count]
            .iter()
            .fold(0usize, |n, &b| (n << 8) | usize::from(b));
        (length, &rest[count..])
    };
    (rest.len() >= length).then(|| rest.split_at(length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_self_issued() {
        for der in [
            &b""[..],
            b"\x30",
            b"\x30\x84\xff\xff\xff\xff",
            b"\x02\x01\x00",
        ] {
            assert!(!is_self_issued(der));
        }
    }

    /// Made with `openssl req -x509` (CN=self), and a certificate it signed (CN=leaf).
    const SELF_SIGNED: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBdDCCARmgAwIBAgIUe96iBvUo77uspZUijCCpIWnjKy8wCgYIKoZIzj0EAwIw\n\
DzENMAsGA1UEAwwEc2VsZjAeFw0yNjEyMDExNTI1MzRaFw0yNjEyMDIxNTI1MzRa\n\
MA8xDTALBgNVBAMMBHNlbGYwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASjUAlZ\n\
G34edOqGWM2dikjnp7pcS9K6HGF+r8AOLDXUYYGZG7AnKrufAS6b13dMMsVahkmj\n\
6xiEw6+XOlC0Cc3bo1MwUTAdBgNVHQ4EFgQUsOl9pgqmXR0o4ZdGJqgCim7RnDAw\n\
HwYDVR0jBBgwFoAUsOl9pgqmXR0o4ZdGJqgCim7RnDAwDwYDVR0TAQH/BAUwAwEB\n\
/zAKBggqhkjOPQQDAgNJADBGAiEAy32APsozhwo127pIXOo8mikPPWHj0kkYQq7z\n\
3DwFnHwCIQCXaKNpDiBtxzN+ed9maZJ8eZlKrMjAb6V1lLTUa2Ulhg==\n\
-----END CERTIFICATE-----";
    const SIGNED_BY_IT: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBBTCBrAIBAjAKBggqhkjOPQQDAjAPMQ0wCwYDVQQDDARzZWxmMB4XDTI2MTIw\n\
MTE1MjUzNFoXDTI2MTIwMjE1MjUzNFowDzENMAsGA1UEAwwEbGVhZjBZMBMGByqG\n\
SM49AgEGCCqGSM49AwEHA0IABOtJm+m+YTfks1W//SEbO7rPbbZl6KRTNosJbqhU\n\
pQM9eYmrxHoRYKsgHN+btrwdhrQJn2vw8x8pRUMvp9dDkwkwCgYIKoZIzj0EAwID\n\
SAAwRQIhAPuQ3IVSgKMyvJffcQqgeXDRJTSwNgseK8ma4/GkbnUXAiBISPQJ3l2X\n\
Bgpm6i9UDgwkRz8ufldhwW3pvLGuYxm03A==\n\
-----END CERTIFICATE-----";

    fn der(pem: &str) -> Vec<u8> {
        use rustls::pki_types::pem::PemObject;
        rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
            .unwrap()
            .to_vec()
    }

    #[test]
    fn a_self_signed_certificate_is_told_from_one_its_ca_signed() {
        assert!(is_self_issued(&der(SELF_SIGNED)));
        assert!(!is_self_issued(&der(SIGNED_BY_IT)));
    }
}
