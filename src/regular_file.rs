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

/// Makes a FIFO at `path` for tests of what must never be read from one (coreutils' mkfifo, so
/// that tests need no `unsafe`).
#[cfg(test)]
pub fn make_fifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(
        made.is_ok_and(|status| status.success()),
        "mkfifo {}",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_only_so_much() {
        let dir = std::env::temp_dir().join(format!("readygate-regular-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_head(&file, 4).unwrap(), b"0123");
        let fifo = dir.join("fifo");
        crate::regular_file::make_fifo(&fifo);
        for (path, why) in [
            (fifo.as_path(), "not a regular file"),
            (Path::new("/dev/zero"), "not a regular file"),
            (dir.as_path(), "is a directory"),
        ] {
            let err = read_head(path, 4).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{path:?}");
            assert_eq!(err.to_string(), why, "{path:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
