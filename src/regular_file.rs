//! Reading a file readygate did not make (`/etc/hosts`, a PEM bundle, a token, a file target)
//! so that a hostile or broken one cannot hang or bloat it: opened without blocking (a FIFO
//! nobody writes to would hang the open), read only when it is a regular file (a device such as
//! `/dev/zero` never ends), and never past a cap. Files it writes into (`--touch`, the
//! termination log) are opened the same way.

use std::fs::{self, OpenOptions};
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

/// Opens (creating it if `create`) a file to write, refusing anything but a regular file: the
/// open is non-blocking, so a FIFO or a device named by mistake cannot hang readygate.
pub fn open_to_write(path: &Path, create: bool) -> io::Result<fs::File> {
    let not_regular = || io::Error::new(io::ErrorKind::InvalidInput, "not a regular file");
    let file = OpenOptions::new()
        .create(create)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        // A FIFO without a reader refuses a non-blocking writer with ENXIO.
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => not_regular(),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}
