//! Reading the PEM files TLS needs (`--cacert`, `--cert`, `--key`, `SSL_CERT_FILE`) safely, as
//! [`crate::regular_file`] reads, and never one of more than [`MOST`] bytes.

use std::io;
use std::path::Path;

/// The largest PEM file read: Debian's whole CA bundle is about 220 KB.
pub const MOST: u64 = 4 << 20;

/// The whole content of the regular file at `path`, if it holds at most [`MOST`] bytes.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    // One byte past the cap tells a file over it, even one that grows while read.
    let content = crate::regular_file::read_head(path, MOST + 1)?;
    if content.len() as u64 > MOST {
        return Err(io::Error::other(format!("larger than {} MiB", MOST >> 20)));
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = std::env::temp_dir().join(format!("readygate-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        crate::regular_file::make_fifo(&fifo);
        let err = read(&fifo).unwrap_err();
        assert_eq!(err.to_string(), "not a regular file");
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(err.to_string(), "not a regular file");
        let big = dir.join("big");
        std::fs::File::create(&big)
            .and_then(|f| f.set_len(MOST + 1))
            .unwrap();
        assert_eq!(read(&big).unwrap_err().to_string(), "larger than 4 MiB");
        let small = dir.join("small");
        std::fs::write(&small, "pem").unwrap();
        assert_eq!(read(&small).unwrap(), b"pem");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
