//! `kind::http`'s request and redirect modules.

#[path = "../../src/kind/http/redirect.rs"]
pub mod redirect;
#[path = "../../src/kind/http/request.rs"]
pub mod request;
