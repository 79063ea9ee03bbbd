//! `-H "Name: value"`: extra HTTP request headers, validated once and redacted when shown.

use std::fmt;

use hyper::header::{HeaderMap, HeaderName, HeaderValue};

use crate::text::quoted;

/// One extra request header; its `Display` hides the value of secret headers.
#[derive(Debug, Clone)]
pub struct Header {
    /// The validated header name (lower case).
    pub name: HeaderName,
    /// The validated header value, marked sensitive for secret headers.
    pub value: HeaderValue,
}

impl Header {
    /// Parses `Name: value`; the error names the fault without echoing a secret value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let malformed = || {
            let shown = quoted(&crate::secrets::malformed_header(text));
            format!("invalid header {shown}: expected \"Name: value\"")
        };
        let (name, value) = text.split_once(':').ok_or_else(malformed)?;
        let (name, value) = (name.trim(), value.trim());
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            // `Authorization Basic user:pass`: the ':' of the value made a name of it all.
            match crate::secrets::malformed_header(name) == name {
                true => format!("invalid header name {}", quoted(name)),
                false => malformed(),
            }
        })?;
        let secret = is_secret(name.as_str());
        let mut value = HeaderValue::from_str(value).map_err(|_| match secret {
            true => format!("invalid value for header {name}"),
            false => format!("invalid value for header {name}: {}", quoted(value)),
        })?;
        value.set_sensitive(secret);
        Ok(Header { name, value })
    }
}

/// The clap value parser of `-H`/`READYGATE_HEADER`. clap's own wrapper around a parse function
/// quotes the raw value in its error, which would print a secret; this one reports only
/// [`Header::parse`]'s redacted message.
#[derive(Debug, Clone, Copy)]
pub struct HeaderParser;

impl clap::builder::TypedValueParser for HeaderParser {
    type Value = Header;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Header, clap::Error> {
        let option = arg.map_or_else(|| "--header".to_string(), ToString::to_string);
        let parsed = value.to_str().ok_or("invalid UTF-8".to_string());
        parsed.and_then(Header::parse).map_err(|message| {
            let message = format!("invalid value for '{option}': {message}\n");
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, message).with_cmd(cmd)
        })
    }
}

/// Whether a header with this name carries a secret (`Authorization`, `Cookie`, `X-Api-Key`,
/// `X-Auth-Token`; [`crate::secrets::looks_secret`]): such values are hidden, and not carried
/// to another origin.
pub fn is_secret(name: &str) -> bool {
    crate::secrets::looks_secret(name)
}

/// Puts `given` headers on a request: a name given replaces the request's own headers of that
/// name (every value given is kept), and an empty value only removes them.
pub fn apply<'a>(headers: &mut HeaderMap, given: impl IntoIterator<Item = &'a Header>) {
    let mut replaced = Vec::new();
    for header in given {
        if !replaced.contains(&&header.name) {
            headers.remove(&header.name);
            replaced.push(&header.name);
        }
        if !header.value.is_empty() {
            headers.append(header.name.clone(), header.value.clone());
        }
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = match self.value.is_sensitive() {
            true => "***".into(),
            false => String::from_utf8_lossy(self.value.as_bytes()),
        };
        write!(f, "{}: {value}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_and_value() {
        let header = Header::parse("X-Probe:  yes ").unwrap();
        assert_eq!(header.name.as_str(), "x-probe");
        assert_eq!(header.value.to_str().unwrap(), "yes");
        assert_eq!(header.to_string(), "x-probe: yes");
    }

    #[test]
    fn secrets_are_hidden() {
        let header = Header::parse("Authorization: Bearer hunter2").unwrap();
        assert_eq!(header.to_string(), "authorization: ***");
        for typo in [
            "Authorization!: hunter2",
            "Cookies: hunter2",
            "authorization-token: hunter2",
            "X-Api-Key: hunter2",
            "X-Auth-Token: hunter2",
            "X-Session-Id: hunter2",
            "X-Client-Secret: hunter2",
        ] {
            let header = Header::parse(typo).unwrap();
            assert!(header.value.is_sensitive(), "{typo}");
            assert!(!header.to_string().contains("hunter2"), "{typo}");
        }
        assert!(header.value.is_sensitive());
        assert!(!Header::parse("X-Request-Id: 7")
            .unwrap()
            .value
            .is_sensitive());
        for typo in [
            "X-Auth-Token=hunter2",
            "X-Api-Key hunter2",
            "X-Api-Key\thunter2",
            "Private-Token\u{2003}hunter2",
            "X-Vault-Token  hunter2",
            "api_key=hunter2",
            "api_keyahunter2",
            "X-Api-Key hunter2:x",
            "X-Auth-Tokenhunter2",
            "Cookie: a=\u{7f}hunter2",
            "Authorization hunter2",
            "Authorization\thunter2",
            "cookie=hunter2",
            "  PROXY-AUTHORIZATIONhunter2",
            "Authorization Basic admin:hunter2",
        ] {
            let err = Header::parse(typo).unwrap_err();
            assert!(!err.contains("hunter2"), "{err}");
        }
    }

    #[test]
    fn rejects_malformed_headers() {
        for bad in ["", "novalue", ": x", "bad name: x", "x: a\nb"] {
            assert!(Header::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
