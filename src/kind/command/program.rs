//! Finding an `exec:` target's program before the first attempt, as exec would find it: a path
//! when the name holds a `/`, else the first executable file of that name in `PATH`. A program
//! that is not there, not executable, or names an interpreter that is not there is a usage
//! error then, not a retry. Blocking: run off the runtime's thread.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::text::quoted;

/// The folders searched when `PATH` is not set: musl's (the static binary's C library) default.
const DEFAULT_PATH: &str = "/usr/local/bin:/bin:/usr/bin";

/// Where `program` is, or why it cannot run.
pub fn find(program: &str) -> Result<PathBuf, String> {
    let path = match program.contains('/') {
        true => {
            let path = PathBuf::from(program);
            runnable(&path)?;
            path
        }
        false => in_path(program, std::env::var_os("PATH"))?,
    };
    interpreter(&path)?;
    Ok(path)
}

/// The first executable regular file named `program` in the folders of `path` (`PATH`'s value).
fn in_path(program: &str, path: Option<OsString>) -> Result<PathBuf, String> {
    let path = path.unwrap_or_else(|| DEFAULT_PATH.into());
    let mut not_executable = None;
    for folder in std::env::split_paths(&path) {
        let candidate = folder.join(program);
        match runnable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(why) if candidate.is_file() => _ = not_executable.get_or_insert(why),
            Err(_) => {}
        }
    }
    Err(not_executable.unwrap_or_else(|| {
        format!(
            "{} not found in PATH ({})",
            quoted(program),
            path.to_string_lossy()
        )
    }))
}

/// Whether `path` is an executable regular file; the error says what it is instead.
fn runnable(path: &Path) -> Result<(), String> {
    let shown = quoted(&path.display().to_string());
    let metadata = std::fs::metadata(path)
        .map_err(|e| format!("{shown}: {}", crate::error::describe_io(&e)))?;
    if metadata.is_dir() {
        return Err(format!("{shown} is a folder, not a program"));
    }
    if !metadata.is_file() || metadata.permissions().mode() & 0o111 == 0 {
        return Err(format!("{shown} is not executable"));
    }
    Ok(())
}

/// A script's `#!` interpreter must be there too (an image without bash).
fn interpreter(path: &Path) -> Result<(), String> {
    let Ok(head) = crate::regular_file::read_head(path, 256) else {
        return Ok(());
    };
    let Some(line) = head.strip_prefix(b"#!") else {
        return Ok(());
    };
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(line);
    let Some(interpreter) = text.split_whitespace().next() else {
        return Ok(());
    };
    match Path::new(interpreter).exists() {
        true => Ok(()),
        false => Err(format!(
            "{}: its interpreter {} was not found",
            quoted(&path.display().to_string()),
            quoted(interpreter)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_as_exec_finds_them_or_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("readygate-program-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            path
        };
        let ok = write("ok", "#!/bin/sh\nexit 0\n", 0o755);
        write("plain", "data", 0o644);
        write("orphan", "#!/no/such/shell\n", 0o755);
        let folder = dir.to_string_lossy().into_owned();
        let path = Some(OsString::from(format!("/no/such:{folder}")));
        assert_eq!(in_path("ok", path.clone()), Ok(ok.clone()));
        let missing = in_path("absent", path.clone()).unwrap_err();
        assert_eq!(
            missing,
            format!("\"absent\" not found in PATH (/no/such:{folder})")
        );
        let plain = in_path("plain", path).unwrap_err();
        assert!(plain.ends_with("plain\" is not executable"), "{plain}");
        assert_eq!(find(&ok.to_string_lossy()), Ok(ok));
        let orphan = find(&format!("{folder}/orphan")).unwrap_err();
        assert!(
            orphan.ends_with("its interpreter \"/no/such/shell\" was not found"),
            "{orphan}"
        );
        let folder_error = find(&format!("{folder}/")).unwrap_err();
        assert!(
            folder_error.ends_with("is a folder, not a program"),
            "{folder_error}"
        );
        let absent = find("/no/such/program").unwrap_err();
        assert_eq!(absent, "\"/no/such/program\": no such file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
