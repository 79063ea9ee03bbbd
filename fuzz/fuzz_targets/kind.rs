//! The parts of readygate's `kind` module the fuzz targets include (each shim file names its
//! sources by a path relative to its own folder).

#[path = "kind_http.rs"]
pub mod http;
#[path = "kind_k8s.rs"]
pub mod k8s;
#[path = "../../src/kind/locality.rs"]
pub mod locality;
#[path = "../../src/kind/service.rs"]
mod service;
#[path = "../../src/kind/target.rs"]
pub mod target;

#[allow(unused_imports)]
pub use http::redirect::Redirects;

/// Stand-in for `kind::HttpMethod`, which the clap definitions name: the real `kind` module
/// needs the whole binary. Same variants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HttpMethod {
    #[default]
    Get,
    Head,
    #[value(skip)]
    Post,
}
