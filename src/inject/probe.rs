//! A container's `startupProbe` for a target: the kubelet's own probe where it checks the same
//! thing (a plain TCP, HTTP or gRPC port of the pod itself), else `readygate probe` run from
//! the shared folder the install init container fills.

use crate::kind::target::Target;
use crate::kind::Kind;

use super::shared;
use super::tree::{map_of, Node};

/// The probe's period: the sidecar is looked at every second.
const PERIOD_SECONDS: &str = "1";
/// Attempts before the kubelet restarts the container: a minute at one a second.
const FAILURE_THRESHOLD: &str = "60";

/// The startupProbe for `target`, and whether it needs readygate in the shared folder.
pub fn startup_probe(target: &Target) -> (Node, bool) {
    let (handler, needs_binary) = match kubelet_handler(&target.kind) {
        Some(handler) => (handler, false),
        None => {
            let command = [shared::BINARY, "probe", &target.to_string()];
            (
                ("exec", map_of([("command", Node::strings(command))])),
                true,
            )
        }
    };
    let probe = map_of([
        handler,
        ("periodSeconds", Node::plain(PERIOD_SECONDS)),
        ("failureThreshold", Node::plain(FAILURE_THRESHOLD)),
    ]);
    (probe, needs_binary)
}

/// The kubelet's own handler for a target on the pod's loopback that it probes alike: the
/// kubelet dials the pod's IP on the same port (what a server on all addresses answers), with
/// the same accepted statuses (200-399) and no TLS or credentials.
fn kubelet_handler(kind: &Kind) -> Option<(&'static str, Node)> {
    let port = |port: u16| ("port", Node::plain(port.to_string()));
    match kind {
        Kind::Tcp(endpoint) if endpoint.host.is_local() => {
            Some(("tcpSocket", map_of([port(endpoint.port)])))
        }
        Kind::Http(http)
            if !http.tls && http.credentials.is_none() && http.endpoint.host.is_local() =>
        {
            let path = ("path", Node::string(http.path.clone()));
            Some(("httpGet", map_of([path, port(http.endpoint.port)])))
        }
        Kind::Grpc(grpc) if !grpc.tls && grpc.endpoint.host.is_local() => {
            let mut handler = map_of([port(grpc.endpoint.port)]);
            if !grpc.service.is_empty() {
                handler.set("service", Node::string(grpc.service.clone()));
            }
            Some(("grpc", handler))
        }
        _ => None,
    }
}
