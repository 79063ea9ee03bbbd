//! Files readygate did not make (`/etc/hosts`, a PEM bundle, a token, a file target) are read
//! only when they are regular files, and never past a cap: a FIFO, a device or a folder is
//! refused at once, naming what it is.

use std::io;
use std::path::Path;

use readygate::read_head;

use crate::support::{make_fifo, TempDir};

#[test]
fn only_regular_files_are_read_and_only_so_much() {
    let dir = TempDir::new();
    let file = dir.join("file");
    std::fs::write(&file, "0123456789").unwrap();
    assert_eq!(read_head(&file, 4).unwrap(), b"0123");
    let fifo = dir.join("fifo");
    make_fifo(&fifo).unwrap();
    for (path, why) in [
        (fifo.as_path(), "not a regular file"),
        (Path::new("/dev/zero"), "not a regular file"),
        (dir.0.as_path(), "is a directory"),
    ] {
        let err = read_head(path, 4).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{path:?}");
        assert_eq!(err.to_string(), why, "{path:?}");
    }
}
