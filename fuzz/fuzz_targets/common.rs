//! What every fuzz target asserts of a rejection.

/// Panics unless a rejection is one line, as the contract promises.
pub fn assert_one_line(message: &str) {
    assert!(!message.is_empty(), "empty message");
    assert!(
        !message.contains('\n') && !message.contains('\r'),
        "more than one line: {message:?}"
    );
}
