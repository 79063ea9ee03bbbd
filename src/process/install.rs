//! `readygate install DIR`: copy this executable into a shared folder, atomically.
//!
//! An init container built `FROM scratch` has no `cp` and no shell, so readygate copies itself:
//! `/proc/self/exe` is written to a fresh temporary file inside DIR (created exclusively, never
//! through a symlink), flushed to disk, then renamed over `DIR/readygate`. A container that
//! reads `DIR/readygate` sees either the old file or the complete new one, never a half-written
//! binary, and a failed install leaves no temporary file behind.
//!
//! Exit statuses: 0 installed; 2 when DIR names no folder (missing, or not a folder: the
//! manifest is wrong); 1 when the folder is right but writing failed (read-only, full,
//! permission denied: the environment is wrong).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use crate::error::describe_io;
use crate::exit::Exit;
use crate::process::atomic::{self, Step};
use crate::redact;

/// The name the binary gets inside DIR; the README's recipe runs `DIR/readygate`.
const INSTALLED_NAME: &str = "readygate";

/// Where the kernel exposes the running executable, even when its file was since replaced.
const SELF_EXE: &str = "/proc/self/exe";

/// Copies `/proc/self/exe` to `DIR/readygate` and reports the outcome as one line on stderr.
pub fn install(dir: &Path) -> Exit {
    let shown = redact::one_line(&dir.display().to_string());
    match fs::metadata(dir) {
        // ENOTDIR: a component of the path is a file, so DIR cannot exist either.
        Err(err)
            if err.kind() == io::ErrorKind::NotFound
                || err.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Exit::Usage(format!("install: no such folder {shown}"));
        }
        Ok(meta) if !meta.is_dir() => {
            return Exit::Usage(format!("install: {shown} is not a folder"));
        }
        _ => {}
    }
    match copy_self(dir) {
        Ok((dest, bytes)) => {
            let dest = redact::one_line(&dest.display().to_string());
            say!("readygate: installed {dest} ({bytes} bytes)");
            Exit::Ready
        }
        Err(message) => Exit::Failed(format!("install: {message}")),
    }
}

/// Does the copy; on error returns a message naming the step and the folder.
fn copy_self(dir: &Path) -> Result<(PathBuf, u64), String> {
    let mut source = File::open(SELF_EXE).map_err(|err| {
        format!(
            "cannot read {SELF_EXE} (is /proc mounted?): {}",
            describe_io(&err)
        )
    })?;
    let dest = dir.join(INSTALLED_NAME);
    let bytes =
        atomic::replace(&dest, 0o755, |temp| io::copy(&mut source, temp)).map_err(|failure| {
            let reason = describe_io(&failure.error);
            let shown = |path: &Path| redact::one_line(&path.display().to_string());
            match failure.step {
                Step::Create => format!("cannot create a file in {}: {reason}", shown(dir)),
                Step::Write => format!("cannot write {}: {reason}", shown(&failure.temp)),
                Step::Rename => format!("cannot replace {}: {reason}", shown(&dest)),
                Step::Flush => format!("cannot flush {}: {reason}", shown(dir)),
            }
        })?;
    Ok((dest, bytes))
}
