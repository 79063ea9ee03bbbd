//! Percent-encoding as URLs and `grpc-message` use it: decoding what a server or user wrote,
//! and encoding the bytes a URI may not hold as they are.

/// Decodes `%XX` escapes; a `%` not followed by two hex digits is kept as it is.
pub fn decode(text: &[u8]) -> Vec<u8> {
    decode_with(text, Some(b'%')).unwrap_or_default()
}

/// Decodes `%XX` escapes; `None` if a `%` is not followed by two hex digits.
pub fn decode_strict(text: &[u8]) -> Option<Vec<u8>> {
    decode_with(text, None)
}

/// Decodes `%XX` escapes; `stray` says what a `%` without two hex digits becomes (`None`: the
/// text is refused).
fn decode_with(text: &[u8], stray: Option<u8>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some((&byte, tail)) = rest.split_first() {
        rest = tail;
        if byte != b'%' {
            out.push(byte);
            continue;
        }
        let hex = tail.get(..2).and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(decoded) => {
                out.push(decoded);
                rest = &tail[2..];
            }
            None => out.push(stray?),
        }
    }
    Some(out)
}

/// %-encodes every byte of `text` but ASCII letters, digits and the bytes in `keep`.
pub fn encode(text: &[u8], keep: &[u8]) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text {
        if b.is_ascii_alphanumeric() || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Escapes every byte a URI's path or query may not hold as it is (space, `<`, `>`, a
/// backtick, quotes, control characters, non-ASCII...), as browsers and curl do with a
/// `Location` that holds them; `%` and the reserved characters are kept.
pub fn encode_uri_bytes(text: &[u8]) -> String {
    encode(text, b"-._~:/?#[]@!$&'()*+,;=%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_keeps_stray_percents() {
        assert_eq!(decode(b"p%40ss"), b"p@ss");
        assert_eq!(decode(b"a%20b%zz%2"), b"a b%zz%2");
        assert_eq!(decode("caf%C3%A9".as_bytes()), "café".as_bytes());
    }

    #[test]
    fn strict_decoding_refuses_stray_percents() {
        assert_eq!(decode_strict(b"p%40ss").as_deref(), Some(&b"p@ss"[..]));
        for bad in [&b"a%zz"[..], b"a%2", b"%"] {
            assert_eq!(decode_strict(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn encodes_what_a_uri_cannot_hold() {
        let encode = |text: &str| encode_uri_bytes(text.as_bytes());
        assert_eq!(encode("/a b<c>`d\"é"), "/a%20b%3Cc%3E%60d%22%C3%A9");
        assert_eq!(encode("/x?y=http://z&w=%41"), "/x?y=http://z&w=%41");
    }
}
