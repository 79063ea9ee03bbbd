//! Replacing a file atomically: write a fresh temporary file in the same folder, flush it, then
//! rename it over the destination. A reader sees the old file or the complete new one, never a
//! partial one. Shared by `install` (the binary) and `sidecar` (the state file).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How many fresh temporary names to try before giving up on a crowded or hostile folder.
const TEMP_NAME_ATTEMPTS: usize = 16;

/// The step of a replacement that failed, so callers can say what went wrong in their words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Creating the temporary file in the folder.
    Create,
    /// Writing or flushing the temporary file.
    Write,
    /// Renaming it over the destination.
    Rename,
    /// Flushing the folder so the rename survives a crash.
    Flush,
}

/// Why a replacement failed; the temporary file is already gone.
#[derive(Debug)]
pub struct Failure {
    /// Which step failed.
    pub step: Step,
    /// The temporary file's path (for messages about the `Write` step).
    pub temp: PathBuf,
    /// The error the step got.
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
) -> Result<T, Failure> {
    let folder = match dest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fail = |step, temp: &Path, error| Failure {
        step,
        temp: temp.to_path_buf(),
        error,
    };
    let (mut file, guard) =
        create_temp(folder, &name).map_err(|e| fail(Step::Create, folder, e))?;
    let filled = fill(&mut file)
        .and_then(|value| {
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
            file.sync_all()?;
            Ok(value)
        })
        .map_err(|e| fail(Step::Write, &guard.path, e))?;
    drop(file);
    fs::rename(&guard.path, dest).map_err(|e| fail(Step::Rename, &guard.path, e))?;
    guard.keep();
    sync_dir(folder).map_err(|e| fail(Step::Flush, folder, e))?;
    Ok(filled)
}

fn create_temp(folder: &Path, name: &str) -> io::Result<(File, TempGuard)> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let temp = if attempt == 0 {
            format!(".{name}.tmp")
        } else {
            format!(".{name}.{:016x}.tmp", fastrand::u64(..))
        };
        let path = folder.join(temp);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
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

/// Flushes the folder itself so the rename survives a crash; file systems that cannot sync a
/// folder say `EINVAL`, and there the rename is as durable as it gets.
fn sync_dir(folder: &Path) -> io::Result<()> {
    match File::open(folder)?.sync_all() {
        Err(err) if err.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Removes the temporary file when dropped, unless the rename already consumed it.
struct TempGuard {
    /// The temporary file's path inside the folder.
    path: PathBuf,
    /// Whether the file is still ours to remove.
    armed: bool,
}

impl TempGuard {
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
    fn temp_names_are_hidden_unique_and_cleaned_up() {
        let dir = std::env::temp_dir().join(format!("readygate-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (_a, first) = create_temp(&dir, "readygate").unwrap();
        let (_b, second) = create_temp(&dir, "readygate").unwrap();
        assert_eq!(
            first.path.file_name().unwrap(),
            ".readygate.tmp",
            "the fixed name comes first"
        );
        let name = second
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with(".readygate.") && name.ends_with(".tmp") && name.len() > 16,
            "{name}"
        );
        drop((first, second));
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "guards remove their files"
        );

        let dest = dir.join("state");
        assert_eq!(
            replace(&dest, 0o644, |f| io::Write::write_all(f, b"native\n")).unwrap(),
            ()
        );
        assert_eq!(fs::read_to_string(&dest).unwrap(), "native\n");
        let failed = replace(&dest, 0o644, |_| {
            Err::<(), _>(io::Error::other("disk on fire"))
        });
        assert_eq!(failed.unwrap_err().step, Step::Write);
        assert_eq!(
            fs::read_to_string(&dest).unwrap(),
            "native\n",
            "a failed write keeps the old file"
        );
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file is left behind"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
