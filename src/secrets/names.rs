//! Names that say their value is a secret (a header's, a query parameter's): one rule for both,
//! and what of a malformed header line may be shown.

/// Whether a name (a header's, a query parameter's) says its value is a secret: the one rule for
/// both. It holds a secret word in any case (`X-Auth-Token`, `Private-Token`, `apiKey`,
/// `session_id`, `Set-Cookie`, `X-Amz-Signature`), or one of its parts (split at anything but a
/// letter or digit, and where lower case turns upper) is `key`, `keys`, `sig` or `pass`
/// (`api_key`, `X-Api-Key`, `myKey`; not `monkey`, `signal` or `passenger`).
pub fn looks_secret(name: &str) -> bool {
    const WORDS: [&str; 15] = [
        "auth",
        "token",
        "secret",
        "passw",
        "passphrase",
        "pwd",
        "session",
        "cookie",
        "credential",
        "signature",
        "apikey",
        "accesskey",
        "privatekey",
        "csrf",
        "xsrf",
    ];
    let lower = name.to_ascii_lowercase();
    if WORDS.iter().any(|word| lower.contains(word)) {
        return true;
    }
    name_parts(name)
        .iter()
        .any(|part| matches!(part.as_str(), "key" | "keys" | "sig" | "pass"))
}

/// The parts of a name in lower case, split at anything but a letter or digit and where lower
/// case turns upper (`X-Api-Key`, `apiKey`: `api`, `key`); empty parts left out.
pub fn name_parts(name: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut previous = ' ';
    for c in name.chars() {
        if !c.is_alphanumeric() || (previous.is_lowercase() && c.is_uppercase()) {
            parts.push(String::new());
        }
        if c.is_alphanumeric() {
            parts
                .last_mut()
                .expect("one part at least")
                .extend(c.to_lowercase());
        }
        previous = c;
    }
    parts.retain(|part| !part.is_empty());
    parts
}

/// A malformed header line as typed, unless the name it starts with (its first characters that
/// a header name may hold), or a start of it, looks secret. Then only that name and `***`, and the name only when
/// it ends in a secret word (`X-Api-Key`, `Authorization`): in `AuthorizationHunter2` nothing
/// tells the name from the value.
pub fn malformed_header(text: &str) -> String {
    const ENDINGS: [&str; 19] = [
        "authorization",
        "authentication",
        "auth",
        "token",
        "key",
        "keys",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pass",
        "pwd",
        "cookie",
        "cookies",
        "session",
        "credential",
        "credentials",
        "signature",
        "sig",
    ];
    let trimmed = text.trim_start();
    let in_name = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let name = &trimmed[..trimmed.find(|c: char| !in_name(c)).unwrap_or(trimmed.len())];
    // A value glued to the name may hide its end (`api_keyhunter2`): any start of it counts. A
    // start looks secret when the whole name holds a secret word or a part begins with a short
    // one, so one pass decides it (a 100,000-character name costs no quadratic scan).
    let glued = |part: &String| ["key", "sig", "pass"].iter().any(|w| part.starts_with(w));
    if !looks_secret(name) && !name_parts(name).iter().any(glued) {
        return text.to_string();
    }
    let ending = name_parts(name).pop().unwrap_or_default();
    match ENDINGS.contains(&ending.as_str()) && name.len() < trimmed.len() {
        true => format!("{name}: ***"),
        false => "***".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_says_which_names_are_secret() {
        for name in [
            "Authorization",
            "Proxy-Authorization",
            "Cookie",
            "Set-Cookie",
            "X-Auth-Token",
            "X-Api-Key",
            "Private-Token",
            "X-Vault-Token",
            "api_key",
            "apiKey",
            "myKey",
            "X-Amz-Signature",
            "X-Amz-Credential",
            "sig",
            "client_secret",
            "db.pass",
            "PASSWORD",
            "dbpwd",
            "JSESSIONID",
            "X-CSRF-Token",
            "ssh-passphrase",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "monkey",
            "keyboard",
            "signal",
            "passenger",
            "X-Request-Id",
            "Accept",
            "page",
            "Content-Type",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }
}
