//! Tests wait on events, not on time: at most [`LIMIT`] sleeps of a thread in src/ and tests/
//! together, each the behaviour under test (a peer's pace, time passing with nobody asking) or
//! the suite's one polling loop (`support::events::poll_until`). A wait for something to happen
//! belongs to `support::events` (`wait_until`, `exit_within`, `Stop`) or `Running::line`.

use std::path::Path;

/// The most sleeps src/ and tests/ may hold.
const LIMIT: usize = 16;

/// Every line of the Rust files under `dir` that sleeps a thread, as `path:line: text`.
fn sleeps(dir: &Path, found: &mut Vec<String>) {
    // Spelt in two pieces, so that this file is not counted.
    let needle = concat!("thread::", "sleep");
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            sleeps(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            for (n, line) in text.lines().enumerate() {
                if line.contains(needle) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
}

#[test]
fn no_more_than_16_sleeps_in_src_and_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    sleeps(&root.join("src"), &mut found);
    sleeps(&root.join("tests"), &mut found);
    assert!(
        found.len() <= LIMIT,
        "{} thread sleeps, at most {LIMIT}: wait on an event instead (support::events)\n{}",
        found.len(),
        found.join("\n")
    );
}
