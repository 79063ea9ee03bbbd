//! `--termination-log`: why a run was not ready, written where the kubelet reads a container's
//! last words (`/dev/termination-log` by default, or a FILE).

use std::io::{self, Write};
use std::path::Path;

use crate::plan::{TerminationLog, KUBELET_TERMINATION_LOG};
use crate::process::atomic::make_parents;
use crate::regular_file::open_to_write;
use crate::secrets::Secrets;

/// Writes `message`, the run's `secrets` hidden, to the termination log, replacing what it held
/// (a message left by an earlier run may be longer). A `--termination-log` FILE is made with
/// its parent folders, as --touch's are: a path in a fresh emptyDir works. The kubelet's file is
/// written only if it is there.
pub fn write_termination_log(
    log: &TerminationLog,
    message: &str,
    secrets: &Secrets,
) -> io::Result<()> {
    let file = match log {
        TerminationLog::File(path) => make_parents(path).and_then(|()| open_to_write(path, true)),
        TerminationLog::Kubelet => open_to_write(Path::new(KUBELET_TERMINATION_LOG), false),
    };
    file.and_then(|mut file| {
        file.set_len(0)?;
        file.write_all(secrets.hide(message).as_bytes())
    })
}
