//! The parts of readygate's `check` module the fuzz targets include (each shim file names its
//! sources by a path relative to its own folder).

#[path = "check_http.rs"]
pub mod http;

#[allow(unused_imports)]
pub use http::redirect::Redirects;
