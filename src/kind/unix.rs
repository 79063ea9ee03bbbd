//! `unix:///ABS/PATH`: ready when a stream connection to the Unix socket succeeds.

use std::path::Path;

use super::url_parts::TargetUrl;
use super::Kind;
use crate::error::Failure;
use crate::net::transport::connect_unix;

/// Parses a `unix://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    super::file::url_path(url.rest).map(Kind::Unix)
}

/// One attempt: connect, then close.
pub async fn check(path: &Path) -> Result<(), Failure> {
    connect_unix(path).await.map(drop)
}
