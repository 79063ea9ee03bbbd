//! Replacing a file atomically (a fresh temporary file in the same folder, flushed, then renamed
//! over the destination), so a reader sees the old file or the whole new one: `install`, `sidecar`.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// How many fresh temporary names to try before giving up on a crowded or hostile folder.
const TEMP_NAME_ATTEMPTS: usize = 16;

/// The step of a replacement that failed, so callers can say what went wrong in their words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Create,
    Write,
    Rename,
    /// Flushing the folder so the rename survives a crash.
    Flush,
}

/// Why a replacement failed; the temporary file is already gone.
#[derive(Debug)]
pub struct ReplaceFailed {
    pub step: Step,
    /// What the step acted on: the folder (`Create`, `Flush`), the temporary file (`Write`), the
    /// destination (`Rename`).
    pub path: PathBuf,
    pub error: io::Error,
}

/// Replaces `dest` by a file that `fill` writes, with `mode`; returns what `fill` returned.
/// The temporary file is created with `O_CREAT|O_EXCL|O_NOFOLLOW`, so a file or a symlink
/// already at its name (planted or left over) is never opened, followed or truncated. Its first
/// name is the fixed `.NAME.tmp` (one name to look for after a crash); random names follow.
pub fn replace<T>(
    dest: &Path,
    mode: u32,
    fill: impl FnOnce(&mut File) -> io::Result<T>,
) -> Result<T, ReplaceFailed> {
    let folder = match dest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = dest.file_name().unwrap_or_default().to_string_lossy();
    let fail = |step, path: &Path, error| ReplaceFailed {
        step,
        path: path.to_path_buf(),
        error,
    };
    let (mut file, temp) = create_temp(folder, &name).map_err(|e| fail(Step::Create, folder, e))?;
    let written = fill(&mut file).and_then(|value| {
        file.set_permissions(Permissions::from_mode(mode))?;
        file.sync_all()?;
        Ok(value)
    });
    // Closed before the rename: exec of a file still open for writing fails (ETXTBSY).
    drop(file);
    let replaced = written
        .map_err(|e| fail(Step::Write, &temp, e))
        .and_then(|value| {
            let renamed = fs::rename(&temp, dest).map_err(|e| fail(Step::Rename, dest, e));
            renamed.map(|()| value)
        });
    if replaced.is_err() {
        let _ = fs::remove_file(&temp);
    }
    let value = replaced?;
    sync_dir(folder).map_err(|e| fail(Step::Flush, folder, e))?;
    Ok(value)
}

/// Creates the folders `path` is in, as `mkdir -p` does.
pub fn make_parents(path: &Path) -> io::Result<()> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => fs::create_dir_all(parent),
        None => Ok(()),
    }
}

fn create_temp(folder: &Path, name: &str) -> io::Result<(File, PathBuf)> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let path = match attempt {
            0 => folder.join(format!(".{name}.tmp")),
            _ => folder.join(format!(".{name}.{:016x}.tmp", fastrand::u64(..))),
        };
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(file) => return Ok((file, path)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = err,
            Err(err) => return Err(err),
        }
    }
    Err(last)
}

/// Flushes the folder itself so the rename survives a crash; file systems that cannot sync a
/// folder say `EINVAL`, and there the rename is as durable as it gets.
fn sync_dir(folder: &Path) -> io::Result<()> {
    match File::open(folder)?.sync_all() {
        Err(err) if err.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_hidden_unique_and_cleaned_up() {
        let dir = std::env::temp_dir().join(format!("readygate-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (_, first) = create_temp(&dir, "readygate").unwrap();
        let (_, second) = create_temp(&dir, "readygate").unwrap();
        assert_eq!(first, dir.join(".readygate.tmp"), "fixed name first");
        let name = second.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".readygate.") && name.ends_with(".tmp") && name.len() > 16);
        fs::remove_file(first).unwrap();
        fs::remove_file(second).unwrap();

        let dest = dir.join("state");
        replace(&dest, 0o644, |f| io::Write::write_all(f, b"native\n")).unwrap();
        assert_eq!(fs::read_to_string(&dest).unwrap(), "native\n");
        let failed = replace(&dest, 0o644, |_| Err::<(), _>(io::Error::other("full")));
        assert_eq!(failed.unwrap_err().step, Step::Write);
        // A file cannot replace a folder.
        let rename = replace(&dir, 0o644, |_| Ok(()));
        assert_eq!(rename.unwrap_err().step, Step::Rename);
        // The old file is kept.
        assert_eq!(fs::read_to_string(&dest).unwrap(), "native\n");
        let left: Vec<_> = fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "a temporary file was left behind: {left:?}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
