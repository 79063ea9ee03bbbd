//! Reading a file readygate did not make (`/etc/hosts`, a PEM bundle, a token, a file target)
//! so that a hostile or broken one cannot hang or bloat it: opened without blocking (a FIFO
//! nobody writes to would hang the open), read only when it is a regular file (a device such as
//! `/dev/zero` never ends), and never past a cap.

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The first `limit` bytes of the regular file at `path`. Anything but a regular file is
/// `InvalidInput`: `is a directory` or `not a regular file`.
pub fn read_head(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        let what = if metadata.is_dir() {
            "is a directory"
        } else {
            "not a regular file"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    let mut content = Vec::new();
    file.take(limit).read_to_end(&mut content)?;
    Ok(content)
}
