//! The state file both sides share: `first-run` or `native`, written atomically (a temporary
//! file in the same folder, then a rename) so a reader never sees a partial state.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use crate::error::describe_io;
use crate::exit::Exit;
use crate::redact::quoted;

/// Longest content worth reading: both states are a few bytes, anything longer is wrong.
const MAX_STATE: u64 = 64;

/// What the state file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// `sidecar native` ran once and exited, expecting to be restarted if it is a built-in
    /// sidecar.
    FirstRun,
    /// `sidecar native` was restarted: built-in sidecars work, it runs the real sidecar.
    Native,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::FirstRun => "first-run",
            State::Native => "native",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the state file could not be used, split as `install` splits it: the manifest is wrong
/// (status 2) or the environment is (status 1).
#[derive(Debug, PartialEq, Eq)]
pub enum Fault {
    /// The file holds something other than a state, or is not a file: fix the manifest.
    Content(String),
    /// Reading or writing failed (permissions, read-only or full file system).
    Io(String),
}

impl Fault {
    /// The exit status for this fault.
    pub fn exit(self) -> Exit {
        match self {
            Fault::Content(message) => Exit::Usage(message),
            Fault::Io(message) => Exit::Failed(message),
        }
    }
}

/// Reads the state; `Ok(None)` when the file does not exist yet. Content other than the two
/// states (surrounding whitespace aside) is a fault naming the file and what it holds.
pub fn read(path: &Path) -> Result<Option<State>, Fault> {
    let content = match crate::regular_file::read_head(path, MAX_STATE) {
        Ok(content) => content,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.kind() == io::ErrorKind::InvalidInput => {
            return Err(Fault::Content(format!(
                "state file {} {err}",
                path.display()
            )))
        }
        Err(err) => {
            return Err(Fault::Io(format!(
                "cannot read state file {}: {}",
                path.display(),
                describe_io(&err)
            )))
        }
    };
    let text = String::from_utf8_lossy(&content);
    match text.trim() {
        "first-run" => Ok(Some(State::FirstRun)),
        "native" => Ok(Some(State::Native)),
        // A state written in place (`echo native > FILE`) is empty, then partial, for a moment:
        // not a state yet, so read as if absent until it is whole.
        partial if !text.ends_with('\n') && is_prefix_of_a_state(partial) => Ok(None),
        other => Err(Fault::Content(format!(
            "state file {} holds {}, not first-run or native",
            path.display(),
            quoted(other)
        ))),
    }
}

/// Whether `text` is the start of a state's name (or empty): what a reader sees mid-write.
fn is_prefix_of_a_state(text: &str) -> bool {
    [State::FirstRun, State::Native]
        .iter()
        .any(|state| state.as_str().starts_with(text))
}

/// Checks once, before any I/O, that `path` can name the state file: not a folder's name.
pub fn check_path(path: &Path) -> Result<(), Fault> {
    use std::os::unix::ffi::OsStrExt;
    if path.file_name().is_none() || path.as_os_str().as_bytes().ends_with(b"/") {
        return Err(Fault::Content(format!(
            "--state {} names a folder, not a file",
            path.display()
        )));
    }
    Ok(())
}

/// Replaces the state atomically: readers see the old state or the new one, never a mix.
pub fn write(path: &Path, state: State) -> Result<(), Fault> {
    let fail = |err: io::Error| {
        Fault::Io(format!(
            "cannot write state file {}: {}",
            path.display(),
            describe_io(&err)
        ))
    };
    check_path(path)?;
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(fail)?;
    }
    crate::process::atomic::replace(path, 0o644, |file| {
        file.write_all(format!("{state}\n").as_bytes())
    })
    .map_err(|failure| fail(failure.error))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn temp_folder(name: &str) -> PathBuf {
        let folder =
            std::env::temp_dir().join(format!("readygate-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        folder
    }

    #[test]
    fn states_round_trip_and_leave_no_temporary_file() {
        let folder = temp_folder("round-trip");
        let path = folder.join("nested/state");
        assert_eq!(read(&path), Ok(None));
        write(&path, State::FirstRun).unwrap();
        assert_eq!(read(&path), Ok(Some(State::FirstRun)));
        write(&path, State::Native).unwrap();
        assert_eq!(read(&path), Ok(Some(State::Native)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "native\n");
        let entries = std::fs::read_dir(folder.join("nested")).unwrap().count();
        assert_eq!(entries, 1, "a temporary file was left behind");
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn unexpected_content_is_an_error_naming_it() {
        let folder = temp_folder("unexpected");
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("state");
        std::fs::write(&path, "nativ\n").unwrap();
        let Err(Fault::Content(err)) = read(&path) else {
            panic!("accepted a misspelt state");
        };
        assert!(err.contains("\"nativ\""), "{err}");
        assert!(err.contains("not first-run or native"), "{err}");
        for partial in ["", "nat", "first-", "  "] {
            std::fs::write(&path, partial).unwrap();
            assert_eq!(
                read(&path),
                Ok(None),
                "{partial:?} is a state being written"
            );
        }
        std::fs::write(&path, "nat\n").unwrap();
        assert!(read(&path).is_err(), "a whole line is a whole state");
        std::fs::write(&path, " native \n").unwrap();
        assert_eq!(read(&path), Ok(Some(State::Native)));
        let Err(Fault::Content(err)) = read(&folder) else {
            panic!("accepted a folder");
        };
        assert!(err.ends_with("is a directory"), "{err}");
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
