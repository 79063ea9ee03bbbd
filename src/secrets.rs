//! Hiding secrets, in one place: the run's known secrets ([`Secrets`]), whatever looks like one
//! by its shape ([`hide_by_shape`]), and names that say their value is one ([`looks_secret`]).
//!
//! The run's secrets, and the one scrub every line passes before it leaves readygate. A peer
//! may quote back what it was sent (Redis's `unknown command 'AUTH'`, an API server's 400
//! quoting the token), so hiding by shape (`user:***@`) is not enough: the exact bytes of every
//! URL password, secret header value and service-account token are hidden wherever they show,
//! also percent-encoded, percent-decoded or escaped as a quote or a JSON string writes them.

mod names;
mod shapes;

use std::fmt;
use std::sync::{Arc, RwLock};

use base64::Engine;

pub use names::{looks_secret, malformed_header, name_parts};
pub use shapes::{hide_by_shape, query_secrets, redact_userinfo, secret_pieces_hidden, userinfos};

/// A secret shorter than this (in bytes) is hidden only where it stands as a whole word: hiding
/// every `pw` in every line would garble them and protect nothing a guess would not find.
const SHORT: usize = 4;
/// A secret of one byte is never searched for in text: it would hide every such letter.
const TINY: usize = 1;
/// A secret cut short (a peer that quotes only its first bytes, a clipped reason) is hidden
/// once this many of its first characters show.
const PREFIX: usize = 16;

/// A value never shown: its `Debug` is `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Keeps `value`, never to be shown.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the bytes sent to the server only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Every secret of one run: found in the command line and environment at start, in the plan
/// (targets, headers) and as the service-account token is read. Shared by whoever learns one
/// and by [`crate::output`], which hides them all from every line.
#[derive(Default)]
pub struct Secrets {
    known: RwLock<Vec<Pattern>>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.known.read().map_or(0, |known| known.len());
        write!(f, "Secrets({count} known)")
    }
}

impl Secrets {
    /// The secrets of this invocation's arguments and `READYGATE_*` variables: the password
    /// (or lone token) of every URL-shaped word in them, and what `also` finds in each (the
    /// layers above know more shapes: the passwords of `exec:` commands). An argument is one
    /// unit, so a password holding white space (`--timeout 'http://u:p w@h'`) is known whole
    /// before any parser quotes it.
    pub fn of_invocation(also: fn(&Secrets, &str)) -> Arc<Secrets> {
        let secrets = Arc::new(Secrets::default());
        let args = std::env::args_os().skip(1);
        let variables = std::env::vars_os()
            .filter(|(name, _)| name.to_string_lossy().starts_with("READYGATE_"))
            .map(|(_, value)| value);
        for text in args.chain(variables) {
            let text = text.to_string_lossy();
            secrets.learn_urls(&text);
            also(&secrets, &text);
        }
        secrets
    }

    /// Learns `secret`, and its percent-decoded form when it holds `%XX` escapes.
    pub fn learn(&self, secret: &[u8]) {
        self.learn_one(secret);
        let decoded = crate::text::percent::decode(secret);
        if decoded != secret {
            self.learn_one(&decoded);
        }
    }

    /// Learns the password (or lone token) of every URL in `text`, the basic authentication an
    /// HTTP request would carry for it, and its secret-looking query parameters' values.
    pub fn learn_urls(&self, text: &str) {
        for value in shapes::query_secrets(text) {
            self.learn(value.as_bytes());
        }
        for userinfo in shapes::userinfos(text) {
            let decoded = crate::text::percent::decode(userinfo.as_bytes());
            let secret = match userinfo.split_once(':') {
                Some((_, password)) => password,
                None => userinfo,
            };
            self.learn(secret.as_bytes());
            if decoded.contains(&b':') {
                let basic = base64::engine::general_purpose::STANDARD.encode(&decoded);
                self.learn(basic.as_bytes());
            }
        }
    }

    /// Learns the value of a secret header, and the parts a peer may quote alone: the
    /// credentials after an auth scheme (`Bearer TOKEN`, the password inside `Basic …`) and
    /// each cookie's value.
    pub fn learn_header_value(&self, value: &[u8]) {
        self.learn(value);
        let text = String::from_utf8_lossy(value);
        let mut parts: Vec<Vec<u8>> = Vec::new();
        if let Some((scheme, credentials)) = text.trim().split_once(' ') {
            let credentials = credentials.trim();
            parts.push(credentials.as_bytes().to_vec());
            if scheme.eq_ignore_ascii_case("basic") {
                let decoded = base64::engine::general_purpose::STANDARD.decode(credentials);
                if let Ok(userinfo) = decoded {
                    let colon = userinfo.iter().position(|&b| b == b':');
                    parts.push(colon.map_or(userinfo.clone(), |at| userinfo[at + 1..].to_vec()));
                }
            }
        }
        for pair in text.split(';') {
            if let Some((_, cookie)) = pair.split_once('=') {
                parts.push(cookie.trim().as_bytes().to_vec());
            }
        }
        // A part is hidden wherever it shows only when it is long enough to be the secret.
        for part in parts.iter().filter(|part| part.len() >= SHORT) {
            self.learn(part);
        }
    }

    /// `text` as it may leave readygate: every known secret hidden, then whatever looks like
    /// one by its shape ([`hide_by_shape`]).
    pub fn hide(&self, text: &str) -> String {
        hide_by_shape(&self.scrub(text))
    }

    /// `text` with every known secret (in any of its forms) replaced by `***`.
    fn scrub(&self, text: &str) -> String {
        let Ok(known) = self.known.read() else {
            return text.to_string();
        };
        let mut bytes = text.as_bytes().to_vec();
        for pattern in known.iter() {
            if let Some(hidden) = pattern.hide_in(&bytes) {
                bytes = hidden;
            }
        }
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    fn learn_one(&self, secret: &[u8]) {
        if secret.len() <= TINY {
            return;
        }
        let Ok(mut known) = self.known.write() else {
            return;
        };
        if known.iter().any(|pattern| pattern.secret == secret) {
            return;
        }
        known.push(Pattern::new(secret));
        // Longer first: a secret that holds another is hidden whole, not around it.
        known.sort_by_key(|pattern| std::cmp::Reverse(pattern.secret.len()));
    }
}

/// One secret as it may be written: each of its characters in any of its forms.
struct Pattern {
    secret: Vec<u8>,
    /// Per character, the ways it may be written.
    units: Vec<Unit>,
    /// The bytes a match can start with.
    first: [bool; 256],
}

/// One character of a secret: most are a byte that shows as itself or `%XX` (a token is
/// mostly these, and may be 64 KiB long); the others have their forms spelled out.
enum Unit {
    Plain(u8),
    Forms(Box<[Box<[u8]>]>),
}

impl Unit {
    fn of(c: char) -> Unit {
        match c.is_ascii_alphanumeric() || "-._~!$&()*,;=:@/?#[]".contains(c) {
            true => Unit::Plain(c as u8),
            false => Unit::Forms(char_forms(c)),
        }
    }

    /// How many bytes at the start of `text` write this character, if they do.
    fn written(&self, text: &[u8]) -> Option<usize> {
        match self {
            Unit::Plain(byte) => match text {
                [first, ..] if first == byte => Some(1),
                [b'%', high, low, ..] => {
                    let digit = |d: u8| (d as char).to_digit(16);
                    (digit(*high)? * 16 + digit(*low)? == u32::from(*byte)).then_some(3)
                }
                _ => None,
            },
            Unit::Forms(forms) => forms
                .iter()
                .find(|form| text.starts_with(form))
                .map(|form| form.len()),
        }
    }

    /// Whether a match can start with `byte`.
    fn starts(&self, byte: u8) -> bool {
        match self {
            Unit::Plain(plain) => byte == *plain || byte == b'%',
            Unit::Forms(forms) => forms.iter().any(|form| form[0] == byte),
        }
    }
}

impl Pattern {
    fn new(secret: &[u8]) -> Pattern {
        let mut units = Vec::new();
        for chunk in secret.utf8_chunks() {
            units.extend(chunk.valid().chars().map(Unit::of));
            let invalid = chunk.invalid().iter();
            units.extend(invalid.map(|&byte| Unit::Forms(byte_forms(&[byte]).into())));
        }
        let first = std::array::from_fn(|byte| units[0].starts(byte as u8));
        Pattern {
            secret: secret.to_vec(),
            units,
            first,
        }
    }

    /// `text` with every match hidden, or `None` if there was none.
    fn hide_in(&self, text: &[u8]) -> Option<Vec<u8>> {
        let mut shown: Option<Vec<u8>> = None;
        let (mut at, mut copied) = (0, 0);
        while at < text.len() {
            let end = match self.first[text[at] as usize] {
                true => self.match_at(text, at),
                false => None,
            };
            let Some(end) = end else {
                at += 1;
                continue;
            };
            let shown = shown.get_or_insert_with(Vec::new);
            shown.extend_from_slice(&text[copied..at]);
            shown.extend_from_slice(b"***");
            (at, copied) = (end, end);
        }
        shown.map(|mut shown| {
            shown.extend_from_slice(&text[copied..]);
            shown
        })
    }

    /// Where a match starting at `at` ends: the whole secret (a short one as a whole word
    /// only), or a prefix of at least [`PREFIX`] characters of a longer one.
    fn match_at(&self, text: &[u8], at: usize) -> Option<usize> {
        let mut end = at;
        for (matched, unit) in self.units.iter().enumerate() {
            match unit.written(&text[end..]) {
                Some(length) => end += length,
                None => return (matched >= PREFIX).then_some(end),
            }
        }
        let word_edge = |byte: Option<&u8>| !byte.is_some_and(u8::is_ascii_alphanumeric);
        let whole_word =
            word_edge(at.checked_sub(1).and_then(|i| text.get(i))) && word_edge(text.get(end));
        (self.secret.len() >= SHORT || whole_word).then_some(end)
    }
}

/// The ways a character of a secret may be written: itself, escaped as a quote
/// (`escape_debug`), a peer's text (`escape_unicode`) or a JSON string writes it (and a quote
/// logged as JSON),
/// percent-encoded in either case of hex, and `+` for a space (a form's encoding).
fn char_forms(c: char) -> Box<[Box<[u8]>]> {
    let itself = c.to_string();
    let mut forms = vec![itself.clone(), c.escape_debug().to_string(), json(&itself)];
    forms.push(json(&forms[1]));
    if !c.is_ascii() {
        // As a peer's invisible characters are escaped (`\u{2028}`).
        forms.push(c.escape_unicode().to_string());
    }
    let mut forms: Vec<Vec<u8>> = forms.into_iter().map(String::into_bytes).collect();
    let encoded = byte_forms(itself.as_bytes()).into_iter().skip(1);
    forms.extend(encoded.map(Vec::from));
    if c == ' ' {
        forms.push(b"+".to_vec());
    }
    forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
    forms.dedup();
    forms.retain(|form| !form.is_empty());
    forms.into_iter().map(Vec::into_boxed_slice).collect()
}

/// `bytes` as they are, and percent-encoded in upper- and lower-case hex.
fn byte_forms(bytes: &[u8]) -> Vec<Box<[u8]>> {
    let upper: String = bytes.iter().map(|b| format!("%{b:02X}")).collect();
    let lower = upper.to_ascii_lowercase();
    let mut forms = vec![
        bytes.into(),
        upper.as_bytes().into(),
        lower.as_bytes().into(),
    ];
    forms.dedup();
    forms
}

/// `text` escaped as inside a JSON string.
fn json(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knowing(secrets: &[&str]) -> Secrets {
        let known = Secrets::default();
        for secret in secrets {
            known.learn(secret.as_bytes());
        }
        known
    }

    #[test]
    fn a_known_secret_is_hidden_in_any_form() {
        let known = knowing(&["hunter2!", "p@ss w\"rd"]);
        for (text, shown) in [
            (
                "ERR unknown command 'AUTH', with args beginning with: 'app' 'hunter2!'",
                "ERR unknown command 'AUTH', with args beginning with: 'app' '***'",
            ),
            ("x=hunter2%21&y", "x=***&y"),
            ("x=hunter2%21%21", "x=***%21"),
            ("p%40ss%20w%22rd", "***"),
            ("p%40ss+w%22rd", "***"),
            ("\"p@ss w\\\"rd\"", "\"***\""),
            ("{\"reason\":\"p@ss w\\\\\\\"rd\"}", "{\"reason\":\"***\"}"),
            ("hunter2 is fine", "hunter2 is fine"),
        ] {
            assert_eq!(known.hide(text), shown, "{text}");
        }
    }

    #[test]
    fn short_secrets_are_hidden_as_whole_words_only() {
        let known = knowing(&["pw", "x"]);
        assert_eq!(known.hide("args: 'app' 'pw'"), "args: 'app' '***'");
        assert_eq!(known.hide("pwd is /x, x marks"), "pwd is /x, x marks");
    }

    #[test]
    fn a_long_secret_cut_short_is_hidden() {
        let token = "eyJhbGciOiJSUzI1NiJ9.payloadpayloadpayload.signature";
        let known = knowing(&[token]);
        let clipped = format!("status 400: bad token {}…", &token[..30]);
        assert_eq!(known.hide(&clipped), "status 400: bad token ***…");
        assert_eq!(known.hide("eyJhbGciOiJSUzI"), "eyJhbGciOiJSUzI");
    }

    #[test]
    fn a_token_of_64_kib_is_hidden() {
        let token = "t".repeat(64 << 10);
        let known = knowing(&[&token]);
        let line = format!("status 400: token {token} refused, {}", &token[..20]);
        assert_eq!(known.hide(&line), "status 400: token *** refused, ***");
    }

    #[test]
    fn urls_and_headers_teach_their_secrets() {
        let known = Secrets::default();
        known.learn_urls("--timeout=http://u:pa ss\u{2003}x@h,redis://:p%40ss@h2");
        known.learn_header_value(b"Bearer tok-en-123");
        known.learn_header_value(b"a=1; session=cookie-value");
        let basic = base64::engine::general_purpose::STANDARD.encode("u:pa ss\u{2003}x");
        for secret in [
            "pa ss\u{2003}x",
            "p@ss",
            "p%40ss",
            "tok-en-123",
            "cookie-value",
            &basic,
        ] {
            assert_eq!(known.hide(&format!("<{secret}>")), "<***>", "{secret}");
        }
        assert_eq!(known.hide("a=1 Bearer"), "a=1 Bearer");
    }
}
