//! `check::http`'s request and redirect modules.

#[path = "../../src/check/http/redirect.rs"]
pub mod redirect;
#[path = "../../src/check/http/request.rs"]
pub mod request;
