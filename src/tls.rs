//! TLS for `https://` and `grpcs://` targets.

use crate::check::Context;
use crate::engine::Reason;
use crate::target::Endpoint;
use crate::transport::BoxedIo;

/// Wraps `stream` in TLS for `server_name` (ALPN `h2` when `http2`).
pub async fn connect(
    _stream: BoxedIo,
    _endpoint: &Endpoint,
    _server_name: &str,
    _http2: bool,
    _context: &Context,
) -> Result<BoxedIo, Reason> {
    Err("TLS is not available in this build".into())
}
