//! `unix:///PATH`: ready when a stream connection to the Unix socket succeeds.

use std::path::Path;

use crate::error::Failure;
use crate::net::transport::connect_unix;

/// One attempt: connect, then close at once.
pub async fn check(path: &Path) -> Result<(), Failure> {
    connect_unix(path).await.map(drop)
}
