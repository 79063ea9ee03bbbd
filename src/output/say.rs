//! `say!`: a line on stderr that can never crash or block readygate, secrets hidden
//! ([`crate::output`]). `eprintln!` panics (status 101) when stderr is a closed pipe, and
//! blocks when nobody reads it.

/// Writes one formatted line to stderr through [`crate::output`].
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::output::stderr(&format!($($arg)*));
    }};
}
