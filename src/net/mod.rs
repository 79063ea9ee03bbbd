//! Bytes to a peer: name resolution, TCP and Unix connects, TLS. Nothing here knows what a
//! check asks of the peer.

pub mod endpoint;
pub mod first_bytes;
pub mod resolve;
pub mod tls;
pub mod transport;
