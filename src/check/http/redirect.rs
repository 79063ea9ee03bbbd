//! Where a redirect leads: any `Location` a server sends becomes a target to follow, an answer
//! (judged by its 3xx status), or a one-line reason, never a panic. Resolution follows
//! RFC 3986 section 5, with the bytes a URI may not hold percent-encoded as curl does.

use hyper::header::HeaderValue;
use hyper::http::uri::PathAndQuery;
use hyper::StatusCode;

use crate::redact::quoted;
use crate::target::{HttpTarget, Kind, Target};

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
    /// Not a redirect to follow: no redirect status, no `Location`, another host or another
    /// scheme than http(s). The response itself is the answer.
    Answer,
    /// A redirect to follow: to the same host, or with [`Redirects::AnyHost`] to any.
    Follow {
        /// The next request's target. It carries only the credentials the `Location` itself
        /// holds: whether the original ones go along is the caller's choice.
        next: HttpTarget,
        /// The `Location` was an absolute URL (`http://…` or `//…`), not a path: a custom
        /// `Host` is dropped then, as Go's client (and so the kubelet) does.
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
    let redirects = matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    let Some(location) = location.filter(|_| redirects) else {
        return Ok(Redirect::Answer);
    };
    let raw = location.as_bytes();
    if raw.is_empty() {
        // A 3xx without a place to go: the answer, as Go's client takes it.
        return Ok(Redirect::Answer);
    }
    let invalid = || format!("redirect to an invalid location {}", shown(raw));
    // The fragment is never sent; what a URI cannot hold is escaped.
    let raw = &raw[..raw.iter().position(|&b| b == b'#').unwrap_or(raw.len())];
    let reference = crate::percent::encode_uri_bytes(raw);
    let absolute = if let Some(scheme) = scheme_of(&reference) {
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Ok(Redirect::Answer);
        }
        let rest = &reference[scheme.len() + 1..];
        if !rest.starts_with("//") {
            return Err(invalid());
        }
        Some(format!("{scheme}:{rest}"))
    } else if reference.starts_with("//") {
        let scheme = if current.tls { "https" } else { "http" };
        Some(format!("{scheme}:{reference}"))
    } else {
        None
    };
    let next = match &absolute {
        Some(url) => match Target::parse(url).map_err(|_| invalid())?.kind {
            Kind::Http(next) => next,
            _ => return Err(invalid()),
        },
        None => HttpTarget {
            path: resolve_path(&current.path, &reference),
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
    const MOST: usize = 120;
    let text = crate::target::redact_userinfo(&String::from_utf8_lossy(raw));
    match text.char_indices().nth(MOST) {
        Some((cut, _)) => format!("{}…", quoted(&text[..cut])),
        None => quoted(&text),
    }
}

/// The scheme of a URI reference, if it has one (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" /
/// "-" / "." ) before the first ':', and no '/', '?' before it).
fn scheme_of(reference: &str) -> Option<&str> {
    let colon = reference.find(':')?;
    let scheme = &reference[..colon];
    let mut bytes = scheme.bytes();
    let first = bytes.next()?;
    (first.is_ascii_alphabetic()
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
    .then_some(scheme)
}

/// A relative reference (no scheme, no authority) resolved against the current path and
/// query (RFC 3986 5.2.2), dot segments removed.
fn resolve_path(base: &str, reference: &str) -> String {
    let (base_path, _) = base.split_once('?').unwrap_or((base, ""));
    let (path, query) = match reference.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (reference, None),
    };
    let merged = if path.is_empty() {
        base_path.to_string()
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        let dir = &base_path[..base_path.rfind('/').map_or(0, |i| i + 1)];
        format!("{dir}{path}")
    };
    let mut resolved = remove_dot_segments(&merged);
    if !resolved.starts_with('/') {
        resolved.insert(0, '/');
    }
    match query {
        Some(query) => format!("{resolved}?{query}"),
        // `?`-less reference with an empty path keeps the base's query (RFC 3986 5.2.2).
        None if path.is_empty() => base.to_string(),
        None => resolved,
    }
}

/// RFC 3986 5.2.4: `.` and `..` segments folded away.
fn remove_dot_segments(path: &str) -> String {
    let mut output: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len() - 1;
    for (index, segment) in segments.iter().enumerate() {
        match *segment {
            "." | ".." => {
                if *segment == ".." && output.len() > 1 {
                    output.pop();
                }
                // A trailing dot segment leaves a trailing slash.
                if index == last {
                    output.push("");
                }
            }
            other => output.push(other),
        }
    }
    let joined = output.join("/");
    if path.starts_with('/') && !joined.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_target as target;
    use super::*;

    fn follow(from: &str, location: &[u8]) -> Result<Redirect, String> {
        let value = HeaderValue::from_bytes(location).unwrap();
        next(
            &target(from),
            StatusCode::FOUND,
            Some(&value),
            Redirects::SameHost,
        )
    }

    fn path_of(from: &str, location: &str) -> String {
        match follow(from, location.as_bytes()) {
            Ok(Redirect::Follow { next, .. }) => next.path,
            other => panic!("{location}: {other:?}"),
        }
    }

    #[test]
    fn relative_references_resolve_as_rfc_3986_says() {
        let base = "http://h/a/b/c?q";
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
        ] {
            assert_eq!(path_of(base, location), path, "{location}");
        }
    }

    #[test]
    fn what_a_uri_cannot_hold_is_escaped() {
        assert_eq!(path_of("http://h/", "/a b"), "/a%20b");
        assert_eq!(path_of("http://h/", "/<x>`y`"), "/%3Cx%3E%60y%60");
        assert_eq!(path_of("http://h/", "/\ttab"), "/%09tab");
        assert_eq!(path_of("http://h/", "/caf\u{e9}"), "/caf%C3%A9");
    }

    #[test]
    fn absolute_locations_to_the_same_host_are_followed_with_their_form_noted() {
        let Ok(Redirect::Follow { next, absolute }) =
            follow("http://h:80/", b"https://u:p%40w@h:8443/x y")
        else {
            panic!()
        };
        assert!(absolute && next.tls);
        assert_eq!(next.endpoint.port, 8443);
        assert_eq!(next.path, "/x%20y");
        assert_eq!(next.credentials.as_deref(), Some(&b"u:p@w"[..]));
        let Ok(Redirect::Follow { next, absolute }) = follow("https://h/", b"//h/z") else {
            panic!()
        };
        assert!(absolute && next.tls);
        let Ok(Redirect::Follow { next, absolute }) = follow("http://u:p@h/a", b"/b") else {
            panic!()
        };
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
        let ok = next(
            &target("http://h/"),
            StatusCode::OK,
            None,
            Redirects::SameHost,
        );
        assert_eq!(ok, Ok(Redirect::Answer));
        let no_location = next(
            &target("http://h/"),
            StatusCode::FOUND,
            None,
            Redirects::SameHost,
        );
        assert_eq!(no_location, Ok(Redirect::Answer));
        let not_followed = HeaderValue::from_static("/x");
        let multiple = next(
            &target("http://h/"),
            StatusCode::MULTIPLE_CHOICES,
            Some(&not_followed),
            Redirects::SameHost,
        );
        assert_eq!(multiple, Ok(Redirect::Answer));
    }

    #[test]
    fn wgets_rule_follows_other_hosts_and_schemes() {
        for (location, host, tls) in [
            ("http://other/x", "other", false),
            ("https://other:8443/x", "other", true),
            ("//other/x", "other", false),
            ("https://h/x", "h", true),
        ] {
            let value = HeaderValue::from_str(location).unwrap();
            let followed = next(
                &target("http://h/a"),
                StatusCode::MOVED_PERMANENTLY,
                Some(&value),
                Redirects::AnyHost,
            );
            match followed {
                Ok(Redirect::Follow { next, .. }) => {
                    assert_eq!(next.endpoint.host.to_string(), host, "{location}");
                    assert_eq!(next.tls, tls, "{location}");
                }
                other => panic!("{location}: {other:?}"),
            }
        }
        let ftp = HeaderValue::from_static("ftp://h/file");
        let answer = next(
            &target("http://h/"),
            StatusCode::FOUND,
            Some(&ftp),
            Redirects::AnyHost,
        );
        assert_eq!(answer, Ok(Redirect::Answer));
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
