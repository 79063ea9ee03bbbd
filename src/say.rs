//! `say!`: a line on stderr that can never crash readygate. `eprintln!` panics (status 101)
//! when stderr is a closed pipe; a readiness gate must exit with its own status instead.

/// Writes one formatted line to stderr, ignoring a closed or full stderr.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
