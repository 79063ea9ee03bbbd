//! Percent-encoding as URLs and `grpc-message` use it: decoding what a server or user wrote,
//! and encoding the bytes a URI may not hold as they are (the `percent-encoding` crate).

use percent_encoding::{percent_decode, percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// RFC 3986's unreserved characters are kept; every other byte is escaped.
const UNRESERVED: &AsciiSet = &all_but(b"-._~");
/// A URI's reserved characters and `%` are kept too: what a `Location` may hold as it is.
const URI: &AsciiSet = &all_but(b"-._~:/?#[]@!$&'()*+,;=%");

/// Every byte but ASCII letters, digits and those in `keep`.
const fn all_but(keep: &[u8]) -> AsciiSet {
    let (mut set, mut at) = (NON_ALPHANUMERIC.add(b'%'), 0);
    while at < keep.len() {
        set = set.remove(keep[at]);
        at += 1;
    }
    set
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits is kept as it is.
pub fn decode(text: &[u8]) -> Vec<u8> {
    percent_decode(text).collect()
}

/// Decodes `%XX` escapes; `None` if a `%` is not followed by two hex digits.
pub fn decode_strict(text: &[u8]) -> Option<Vec<u8>> {
    let escape = |at: usize| {
        text.get(at + 1..at + 3)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    };
    let stray = (0..text.len()).any(|at| text[at] == b'%' && !escape(at));
    (!stray).then(|| decode(text))
}

/// %-encodes a query value: everything but RFC 3986's unreserved characters.
pub fn encode_query_value(text: &str) -> String {
    percent_encode(text.as_bytes(), UNRESERVED).to_string()
}

/// Escapes every byte a URI's path or query may not hold as it is (space, `<`, `>`, a
/// backtick, quotes, control characters, non-ASCII...), as browsers and curl do with a
/// `Location` that holds them; `%` and the reserved characters are kept.
pub fn encode_uri_bytes(text: &[u8]) -> String {
    percent_encode(text, URI).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_keeps_stray_percents() {
        assert_eq!(decode(b"p%40ss"), b"p@ss");
        assert_eq!(decode(b"a%20b%zz%2%+1"), b"a b%zz%2%+1");
        assert_eq!(decode("caf%C3%A9".as_bytes()), "café".as_bytes());
    }

    #[test]
    fn strict_decoding_refuses_stray_percents() {
        assert_eq!(decode_strict(b"p%40ss").as_deref(), Some(&b"p@ss"[..]));
        for bad in [&b"a%zz"[..], b"a%2", b"%", b"%+1"] {
            assert_eq!(decode_strict(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_query_value_keeps_only_unreserved_characters() {
        assert_eq!(
            encode_query_value("app.kubernetes.io/name=api,env in (a,b)"),
            "app.kubernetes.io%2Fname%3Dapi%2Cenv%20in%20%28a%2Cb%29"
        );
        assert_eq!(encode_query_value("a!=b"), "a%21%3Db");
    }

    #[test]
    fn encodes_what_a_uri_cannot_hold() {
        let encode = |text: &str| encode_uri_bytes(text.as_bytes());
        assert_eq!(encode("/a b<c>`d\"é"), "/a%20b%3Cc%3E%60d%22%C3%A9");
        assert_eq!(encode("/x?y=http://z&w=%41"), "/x?y=http://z&w=%41");
    }
}
