//! `unix:///PATH`: ready when a stream connection to the Unix socket succeeds.

use std::path::Path;

use crate::engine::Reason;
use crate::transport::connect_unix;

/// One attempt: connect, then close at once.
pub async fn check(path: &Path) -> Result<(), Reason> {
    connect_unix(path).await.map(drop)
}
