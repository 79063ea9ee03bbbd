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

use std::fs::{self, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::exit::Exit;
use crate::redact;
use crate::transport::describe_io;

/// The name the binary gets inside DIR; the README's recipe runs `DIR/readygate`.
const INSTALLED_NAME: &str = "readygate";

/// Where the kernel exposes the running executable, even when its file was since replaced.
const SELF_EXE: &str = "/proc/self/exe";

/// How many fresh temporary names to try before giving up on a crowded or hostile folder.
const TEMP_NAME_ATTEMPTS: usize = 16;

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
    let shown = redact::one_line(&dir.display().to_string());
    let mut source = File::open(SELF_EXE).map_err(|err| {
        format!(
            "cannot read {SELF_EXE} (is /proc mounted?): {}",
            describe_io(&err)
        )
    })?;
    let (mut temp, guard) = create_temp(dir)
        .map_err(|err| format!("cannot create a file in {shown}: {}", describe_io(&err)))?;
    let written = io::copy(&mut source, &mut temp)
        .and_then(|bytes| {
            temp.set_permissions(Permissions::from_mode(0o755))?;
            temp.sync_all()?;
            Ok(bytes)
        })
        .map_err(|err| format!("cannot write {}: {}", guard.shown(), describe_io(&err)))?;
    drop(temp);
    let dest = dir.join(INSTALLED_NAME);
    fs::rename(&guard.path, &dest).map_err(|err| {
        let dest = redact::one_line(&dest.display().to_string());
        format!("cannot replace {dest}: {}", describe_io(&err))
    })?;
    guard.keep();
    sync_dir(dir).map_err(|err| format!("cannot flush {shown}: {}", describe_io(&err)))?;
    Ok((dest, written))
}

/// Creates a new file in `dir` with `O_CREAT|O_EXCL|O_NOFOLLOW`, so a file or a symlink already
/// at that name (planted or left over) is never opened, followed or truncated. The first name
/// tried is the fixed `.readygate.tmp` (one name to look for after a crash); when it is taken,
/// random names follow.
fn create_temp(dir: &Path) -> io::Result<(File, TempGuard)> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let name = if attempt == 0 {
            format!(".{INSTALLED_NAME}.tmp")
        } else {
            format!(".{INSTALLED_NAME}.{:016x}.tmp", fastrand::u64(..))
        };
        let path = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(file) => return Ok((file, TempGuard { path, armed: true })),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = err,
            Err(err) => return Err(err),
        }
    }
    Err(last)
}

/// Flushes the folder itself so the rename survives a crash; filesystems that cannot sync a
/// folder say `EINVAL`, and there the rename is as durable as it gets.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir)?.sync_all() {
        Err(err) if err.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Removes the temporary file when dropped, unless the rename already consumed it.
struct TempGuard {
    /// The temporary file's path inside DIR.
    path: PathBuf,
    /// Whether the file is still ours to remove.
    armed: bool,
}

impl TempGuard {
    /// The path, for an error message.
    fn shown(&self) -> String {
        redact::one_line(&self.path.display().to_string())
    }

    /// The rename succeeded: there is nothing left to clean up.
    fn keep(mut self) {
        self.armed = false;
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_hidden_and_unique() {
        let dir = std::env::temp_dir().join(format!("readygate-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (_a, first) = create_temp(&dir).unwrap();
        let (_b, second) = create_temp(&dir).unwrap();
        assert_ne!(first.path, second.path);
        let name = first
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(name, ".readygate.tmp", "the fixed name comes first");
        let name = second
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with(".readygate.") && name.ends_with(".tmp"),
            "{name}"
        );
        drop((first, second));
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "guards remove their files"
        );
        fs::remove_dir(&dir).unwrap();
    }
}
