//! Where a redirect leads: any `Location` a server sends becomes a target to follow, an answer
//! (judged by its 3xx status), or a one-line reason, never a panic. A relative `Location` is
//! resolved by `url`'s `join` (RFC 3986 section 5), with the bytes a URI may not hold
//! percent-encoded first as curl does (`url` would drop a tab instead).

use hyper::header::HeaderValue;
use hyper::http::uri::PathAndQuery;
use hyper::StatusCode;
use url::{Position, Url};

use super::HttpTarget;
use crate::kind::target::Target;
use crate::kind::Kind;
use crate::text::quoted;

/// Which redirects an `http(s)://` check follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Redirects {
    /// The kubelet's rule: same host only, and the 10th redirect fails the attempt; a redirect
    /// to another host is the answer, judged by its 3xx status.
    #[default]
    SameHost,
    /// wget's rule (the `wait-for` drop-in): any http(s) location, at most 20 redirects.
    AnyHost,
}

impl Redirects {
    /// The most requests one attempt sends.
    pub fn most_requests(self) -> usize {
        match self {
            Redirects::SameHost => 10,
            Redirects::AnyHost => 21,
        }
    }
}

/// What a response's status and `Location` lead to.
#[derive(Debug, PartialEq, Eq)]
pub enum Redirect {
    /// The response itself is the answer: no redirect, or one elsewhere than policy allows.
    Answer,
    /// A redirect to follow.
    Follow {
        /// The next request's target, with only the credentials the `Location` itself holds.
        next: HttpTarget,
        /// The `Location` was an absolute URL (`http://…` or `//…`): a custom `Host` is then
        /// dropped, as Go's client (and so the kubelet) does.
        absolute: bool,
    },
}

/// Where `status` with `location` leads from `current`; `Err` for a `Location` that can be
/// neither followed nor ignored.
pub fn next(
    current: &HttpTarget,
    status: StatusCode,
    location: Option<&HeaderValue>,
    policy: Redirects,
) -> Result<Redirect, String> {
    let raw = match location {
        Some(value) if matches!(status.as_u16(), 301..=303 | 307 | 308) && !value.is_empty() => {
            value.as_bytes()
        }
        // No redirect, or a 3xx without a place to go: the answer, as Go's client takes it.
        _ => return Ok(Redirect::Answer),
    };
    let invalid = || format!("redirect to an invalid location {}", shown(raw));
    // The fragment is never sent; what a URI cannot hold is escaped.
    let raw = raw.split(|&b| b == b'#').next().unwrap_or(raw);
    let reference = crate::text::percent::encode_uri_bytes(raw);
    // Target::parse refuses an http(s) scheme without its `//`.
    let absolute = match scheme_of(&reference).map(str::to_ascii_lowercase) {
        Some(scheme) if scheme != "http" && scheme != "https" => return Ok(Redirect::Answer),
        Some(scheme) => Some(format!("{scheme}{}", &reference[scheme.len()..])),
        None if reference.starts_with("//") => {
            let scheme = if current.tls { "https" } else { "http" };
            Some(format!("{scheme}:{reference}"))
        }
        None => None,
    };
    let next = match &absolute {
        Some(url) => match Target::parse(url).map_err(|_| invalid())?.kind {
            Kind::Http(next) => next,
            _ => return Err(invalid()),
        },
        None => HttpTarget {
            path: resolve(&current.path, &reference).ok_or_else(invalid)?,
            credentials: None,
            ..current.clone()
        },
    };
    if PathAndQuery::try_from(next.path.as_str()).is_err() {
        return Err(invalid());
    }
    if policy == Redirects::SameHost && next.endpoint.host != current.endpoint.host {
        return Ok(Redirect::Answer);
    }
    Ok(Redirect::Follow {
        next,
        absolute: absolute.is_some(),
    })
}

/// A `Location` for a message: userinfo hidden, control characters escaped, cut short.
fn shown(raw: &[u8]) -> String {
    let text = crate::kind::target::redact_userinfo(&String::from_utf8_lossy(raw));
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", quoted(&text[..cut])),
        None => quoted(&text),
    }
}

/// The scheme of a URI reference, if it has one (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" /
/// "-" / "." ) before the first ':').
fn scheme_of(reference: &str) -> Option<&str> {
    let (scheme, _) = reference.split_once(':')?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    valid.then_some(scheme)
}

/// A relative reference (no scheme, no authority) resolved against the current path and
/// query; the host is the current one, so a stand-in serves as the base's. Its scheme is not
/// one `url` treats as special, which would also escape a `'` in the query.
fn resolve(current: &str, reference: &str) -> Option<String> {
    if reference.is_empty() {
        return Some(current.to_string());
    }
    let mut base = Url::parse("readygate://h/").ok()?;
    let (path, query) = current
        .split_once('?')
        .map_or((current, None), |(p, q)| (p, Some(q)));
    base.set_path(path);
    base.set_query(query);
    let next = base.join(reference).ok()?;
    Some(next[Position::BeforePath..Position::AfterQuery].to_string())
}

#[cfg(test)]
mod tests {
    use super::super::test_target as target;
    use super::*;

    fn go(from: &str, status: u16, location: Option<&[u8]>, policy: Redirects) -> Redirect {
        let value = location.map(|l| HeaderValue::from_bytes(l).unwrap());
        let status = StatusCode::from_u16(status).unwrap();
        next(&target(from), status, value.as_ref(), policy).unwrap()
    }

    fn follow(from: &str, location: &[u8]) -> Result<Redirect, String> {
        let value = HeaderValue::from_bytes(location).unwrap();
        next(
            &target(from),
            StatusCode::FOUND,
            Some(&value),
            Redirects::SameHost,
        )
    }

    fn followed(from: &str, location: &str) -> (HttpTarget, bool) {
        match follow(from, location.as_bytes()) {
            Ok(Redirect::Follow { next, absolute }) => (next, absolute),
            other => panic!("{location}: {other:?}"),
        }
    }

    #[test]
    fn relative_references_resolve_as_rfc_3986_says() {
        for (location, path) in [
            ("g", "/a/b/g"),
            ("./g", "/a/b/g"),
            ("g/", "/a/b/g/"),
            ("/g", "/g"),
            ("?y", "/a/b/c?y"),
            ("g?y", "/a/b/g?y"),
            (".", "/a/b/"),
            ("./", "/a/b/"),
            ("..", "/a/"),
            ("../g", "/a/g"),
            ("../..", "/"),
            ("../../../g", "/g"),
            ("/./g", "/g"),
            ("/../g", "/g"),
            ("g.", "/a/b/g."),
            ("g#frag", "/a/b/g"),
            ("#frag", "/a/b/c?q"),
            ("/next?to=http://other/x", "/next?to=http://other/x"),
            ("next?url=https://a.b/c", "/a/b/next?url=https://a.b/c"),
            // What a URI cannot hold is escaped.
            ("/a b", "/a%20b"),
            ("/<x>`y`", "/%3Cx%3E%60y%60"),
            ("/\ttab", "/%09tab"),
            ("/caf\u{e9}", "/caf%C3%A9"),
        ] {
            assert_eq!(
                followed("http://h/a/b/c?q", location).0.path,
                path,
                "{location}"
            );
        }
    }

    #[test]
    fn a_quote_in_the_query_is_sent_as_written() {
        let (next, _) = followed("http://h/a?b", "/c'd?e'f");
        assert_eq!(next.path, "/c'd?e'f");
    }

    #[test]
    fn absolute_locations_to_the_same_host_are_followed_with_their_form_noted() {
        let (next, absolute) = followed("http://h:80/", "https://u:p%40w@h:8443/x y");
        assert!(absolute && next.tls);
        assert_eq!(next.endpoint.port, 8443);
        assert_eq!(next.path, "/x%20y");
        assert_eq!(next.credentials.as_deref(), Some(&b"u:p@w"[..]));
        let (next, absolute) = followed("https://h/", "//h/z");
        assert!(absolute && next.tls);
        let (next, absolute) = followed("http://u:p@h/a", "/b");
        assert!(!absolute);
        assert_eq!(next.credentials, None, "the caller decides");
    }

    #[test]
    fn elsewhere_or_nowhere_is_the_answer() {
        for location in [
            &b"http://other/"[..],
            b"//other/x",
            b"ftp://h/file",
            b"mailto:x@h",
            b"",
        ] {
            assert_eq!(follow("http://h/a", location), Ok(Redirect::Answer));
        }
        for (status, location) in [(200, None), (302, None), (300, Some(&b"/x"[..]))] {
            let answer = go("http://h/", status, location, Redirects::SameHost);
            assert_eq!(answer, Redirect::Answer, "{status}");
        }
    }

    #[test]
    fn wgets_rule_follows_other_hosts_and_schemes() {
        for (location, host, tls) in [
            ("http://other/x", "other", false),
            ("https://other:8443/x", "other", true),
            ("//other/x", "other", false),
            ("https://h/x", "h", true),
            ("HTTPS://h/x", "h", true),
        ] {
            match go(
                "http://h/a",
                301,
                Some(location.as_bytes()),
                Redirects::AnyHost,
            ) {
                Redirect::Follow { next, .. } => {
                    assert_eq!(next.endpoint.host.to_string(), host, "{location}");
                    assert_eq!(next.tls, tls, "{location}");
                }
                other => panic!("{location}: {other:?}"),
            }
        }
        let ftp = go("http://h/", 302, Some(b"ftp://h/file"), Redirects::AnyHost);
        assert_eq!(ftp, Redirect::Answer);
    }

    #[test]
    fn an_unusable_location_is_a_one_line_reason() {
        for location in [
            &b"http:/one-slash"[..],
            b"http://",
            b"http://h:99999/",
            b"http://bad host/",
            b"http://[zz]/",
            b"https:no-slashes",
            // Target::parse takes it as `tcp://http:80`: still not an http(s) URL.
            b"http:80",
        ] {
            let err = follow("http://h/", location).unwrap_err();
            assert!(err.starts_with("redirect to an invalid location"), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
        let err = follow("http://h/", b"http://user:hunter2@bad host/").unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
        let long = [b'/', b'a'].repeat(500);
        let err = follow("http://h/", &[b"http://bad host", &long[..]].concat()).unwrap_err();
        assert!(err.len() < 200, "{err}");
    }
}
