//! `--touch FILE`: a marker made once ready, for a probe or an app that looks for a file.

use std::path::Path;

use crate::error::describe_io;
use crate::process::atomic::make_parents;
use crate::regular_file::open_to_write;

/// Creates the `--touch` marker (and its parent folders).
pub fn touch(path: &Path) -> Result<(), String> {
    let folder = path.parent().unwrap_or(path).display();
    make_parents(path).map_err(|e| format!("cannot create --touch folder {folder}: {e}"))?;
    open_to_write(path, true).map(drop).map_err(|e| {
        let shown = path.display();
        format!("cannot create --touch file {shown}: {}", describe_io(&e))
    })
}
