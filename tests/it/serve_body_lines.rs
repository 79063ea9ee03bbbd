//! `serve`'s body lines hold what a target's reason says, redacted exactly as log lines are
//! and then cut at 256 bytes: a secret the peer echoes back, placed across the cut, is hidden
//! whole, not left half shown where the redactor no longer recognises it.

use std::sync::{Arc, OnceLock};

use crate::support::http::{Answer, HttpServer};
use crate::support::served::Served;

/// The bearer token readygate sends, which the peer below echoes in its JSON.
const SECRET: &str = "t0ken-4f9c2a7e1b8d3c6f5a0e9d2c7b4a1f8e";

/// Where each body line is cut.
const MAX_LINE: usize = 256;

#[test]
fn a_secret_across_the_cut_of_a_body_line_is_hidden_whole() {
    // The JSON the peer answers, made once its URL (and so the line's length) is known.
    let body: Arc<OnceLock<String>> = Arc::default();
    let answered = body.clone();
    let server = HttpServer::start(move |_, _| Answer::body(answered.get().unwrap().clone()));
    let url = server.url("/health");
    // The line: `URL: JSON field status is "VALUE", not "UP"`; VALUE ends with the secret,
    // whose first 15 bytes come before the cut and the rest after it. (The redactor also hides
    // a secret's first 16 characters where they end a text: 15 are too few to be told.) Redacted,
    // the line is exactly 256 bytes long.
    let before = format!("{url}: JSON field status is \"");
    let pad = "x".repeat(MAX_LINE - 15 - before.len());
    body.set(format!(r#"{{"status":"{pad}{SECRET}"}}"#))
        .unwrap();
    let header = format!("Authorization: Bearer {SECRET}");
    let served = Served::start(&["-H", &header, "--json-field", "status=UP", &url]);
    let ready = served.get("/ready");
    assert_eq!(ready.status, 503, "{ready:?}");
    assert!(server.hits() >= 1, "the peer was never asked");
    let line = ready.body.lines().next().unwrap_or_default();
    // Redacted first, the line fits: the secret is `***` and what follows it is kept. Cut
    // first, the secret's head would be left in the line, too short to be recognised.
    let whole = format!("{before}{pad}***\", not \"UP\"");
    assert_eq!(line, whole);
    assert!(!line.contains(&SECRET[..15]), "{line}");
}
