//! `grpc://HOST:PORT[/SERVICE]`: the standard `grpc.health.v1.Health/Check`.

use super::Context;
use crate::engine::Reason;
use crate::target::GrpcTarget;

/// One attempt: ask the health service about the target's service.
pub async fn check(_target: &GrpcTarget, _context: &Context) -> Result<(), Reason> {
    Err("gRPC health checks are not available in this build".into())
}
