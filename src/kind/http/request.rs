//! One HTTP request as the kubelet's prober and curl send it: readygate's `User-Agent`,
//! `Accept: */*`, one request per connection; `-H` replaces a header of the same name (an empty
//! value only removes it), and repeated `-H` of one name are all sent.

use base64::Engine as _;
use http_body_util::Empty;
use hyper::body::Bytes;
use hyper::header::{
    HeaderValue, ACCEPT, AUTHORIZATION, CONNECTION, CONTENT_LENGTH, HOST, USER_AGENT,
};
use hyper::{Method, Request, Uri};

use super::HttpTarget;
use crate::grammar::header::Header;
use crate::text::peer_text;

/// The `User-Agent` readygate sends unless `-H` says otherwise.
pub const AGENT: &str = concat!("readygate/", env!("CARGO_PKG_VERSION"));

/// What a hop of a redirect chain may carry over from the request the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carry {
    /// A `-H Host:` still applies: no absolute redirect has been followed yet.
    pub custom_host: bool,
    /// URL credentials and secret-looking `-H` headers go along: the hop has the original
    /// scheme, host and port (curl's rule since CVE-2022-27776).
    pub secrets: bool,
}

impl Carry {
    /// The first request carries everything.
    pub const ALL: Carry = Carry {
        custom_host: true,
        secrets: true,
    };
}

/// The request for `target`, with `extra` headers as far as `carry` allows.
pub fn build(
    target: &HttpTarget,
    method: Method,
    extra: &[Header],
    carry: Carry,
) -> Result<Request<Empty<Bytes>>, String> {
    let uri = Uri::try_from(target.path.as_str())
        .map_err(|_| format!("invalid request path \"{}\"", peer_text(&target.path)))?;
    let host = HeaderValue::from_str(&target.authority).map_err(|_| "invalid host")?;
    let mut request = Request::new(Empty::new());
    *request.uri_mut() = uri;
    let headers = request.headers_mut();
    headers.insert(HOST, host);
    headers.insert(USER_AGENT, HeaderValue::from_static(AGENT));
    headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
    // One request per connection, as the kubelet's prober says too: hyper then neither reads
    // on for a next response nor keeps a buffer for one.
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    if let Some(credentials) = target.credentials.as_ref().filter(|_| carry.secrets) {
        let encoded = base64::engine::general_purpose::STANDARD.encode(credentials);
        let mut value = HeaderValue::try_from(format!("Basic {encoded}"))
            .map_err(|_| "invalid credentials in URL")?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    if method == Method::POST {
        // Said outright: some servers refuse a POST without a length (411).
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
    }
    let carried = extra.iter().filter(|header| {
        (header.name != HOST || carry.custom_host)
            && (!header.value.is_sensitive() || carry.secrets)
    });
    crate::grammar::header::apply(headers, carried);
    *request.method_mut() = method;
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::super::test_target as target;
    use super::*;

    /// A GET of `url` with `extra` headers, and a way to read its headers' values.
    fn get(url: &str, extra: &[&str]) -> impl Fn(&str) -> Vec<String> {
        let extra: Vec<Header> = extra.iter().map(|h| Header::parse(h).unwrap()).collect();
        let request = build(&target(url), Method::GET, &extra, Carry::ALL).unwrap();
        move |name| {
            let values = request.headers().get_all(name).iter();
            values.map(|v| v.to_str().unwrap().to_string()).collect()
        }
    }

    #[test]
    fn defaults_as_the_kubelet_sends_them() {
        let request = build(&target("http://h:81/x?y"), Method::GET, &[], Carry::ALL).unwrap();
        assert_eq!(request.uri(), "/x?y");
        let values = get("http://h:81/x?y", &[]);
        assert_eq!(values("host"), ["h:81"]);
        assert_eq!(values("accept"), ["*/*"]);
        assert_eq!(values("user-agent"), [AGENT]);
        assert_eq!(values("connection"), ["close"]);
        assert!(values("authorization").is_empty());
    }

    #[test]
    fn given_headers_replace_append_or_remove() {
        let extra = [
            "Accept:",
            "User-Agent: probe/2",
            "X-Twice: one",
            "x-twice: two",
            "X-Empty:",
        ];
        let values = get("http://h/", &extra);
        assert!(values("accept").is_empty());
        assert!(values("x-empty").is_empty());
        assert_eq!(values("user-agent"), ["probe/2"]);
        assert_eq!(values("x-twice"), ["one", "two"]);
        assert!(get("http://h/", &["User-Agent:"])("user-agent").is_empty());
    }

    #[test]
    fn a_path_a_uri_cannot_hold_is_a_reason() {
        let mut bad = target("http://h/");
        bad.path = "/a b".into();
        let err = build(&bad, Method::GET, &[], Carry::ALL).unwrap_err();
        assert_eq!(err, "invalid request path \"/a b\"");
        // A path built from a peer's text (a k8s resourceVersion) is quoted cut, not whole.
        bad.path = format!("/?v={}", "9".repeat(1 << 20));
        let err = build(&bad, Method::GET, &[], Carry::ALL).unwrap_err();
        assert!(err.len() < 400, "{} bytes", err.len());
    }
}
