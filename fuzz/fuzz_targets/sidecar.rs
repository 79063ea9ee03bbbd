//! The injection the webhook and inject targets run with: a sidecar that uses every field
//! inject rewrites (command and args wrapped, a mount added beside its own, its probe dropped).

use readygate::{injection_of, Injection, SidecarMode};

/// The `--sidecar` file.
const SIDECAR: &str = "\
name: proxy
image: example.test/proxy:1
command: [/proxy]
args: [--port, \"15001\"]
startupProbe:
  tcpSocket:
    port: 15001
volumeMounts:
- name: certs
  mountPath: /certs
";

/// The injection of `--sidecar` with `mode`.
pub fn injection(mode: SidecarMode) -> Injection {
    injection_of("example.test/readygate:1", Some(SIDECAR), mode).expect("a valid sidecar")
}
