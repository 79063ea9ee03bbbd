//! `readygate sidecar native|legacy`: the run-time handshake between the two copies of an
//! injected sidecar.

use crate::cli::SidecarCommand;
use crate::exit::Exit;

/// Runs one side of the handshake.
pub async fn run(_command: SidecarCommand) -> Exit {
    Exit::Usage("sidecar is not available in this build".into())
}
