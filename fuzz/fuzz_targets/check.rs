//! The parts of readygate's `check` module the fuzz targets include (each shim file names its
//! sources by a path relative to its own folder).

#[path = "check_http.rs"]
pub mod http;

#[allow(unused_imports)]
pub use http::redirect::Redirects;

/// Stand-in for `check::HttpMethod`, which the clap definitions name: the real `check` module
/// needs the whole binary. Same variants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HttpMethod {
    #[default]
    Get,
    Head,
    #[value(skip)]
    Post,
}
