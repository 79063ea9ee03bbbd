//! `tcp://HOST:PORT`: ready when a TCP connection is established.

use crate::error::Failure;
use crate::net::transport::connect_tcp;
use crate::target::Endpoint;

/// One attempt: connect to any address of the endpoint, then close at once.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    connect_tcp(endpoint).await.map(drop)
}
