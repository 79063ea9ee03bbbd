//! `tcp://HOST:PORT`: ready when a TCP connection is established.

use crate::engine::Reason;
use crate::target::Endpoint;
use crate::transport::connect_tcp;

/// One attempt: connect to any address of the endpoint, then close at once.
pub async fn check(endpoint: &Endpoint) -> Result<(), Reason> {
    connect_tcp(endpoint).await.map(drop)
}
