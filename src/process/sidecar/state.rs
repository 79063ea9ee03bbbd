//! The state file both sides share: `first-run` or `native`, replaced atomically so a reader
//! never sees a partial state. Faults split as `install`'s do: a wrong manifest is a usage error
//! (status 2), a failing environment status 1.

use std::io::{self, Write};
use std::path::Path;

use crate::error::describe_io;
use crate::exit::Exit;
use crate::text::quoted;

/// Longest content worth reading: both states are a few bytes, anything longer is wrong.
const MAX_STATE: u64 = 64;

/// The step of the handshake the state file records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `sidecar native` ran once and exited, expecting a restart if it is a built-in sidecar.
    FirstRun,
    /// `sidecar native` was restarted: built-in sidecars work, it runs the real sidecar.
    Native,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::FirstRun => "first-run",
            Step::Native => "native",
        }
    }
}

/// Reads the state; `Ok(None)` when the file does not exist yet. Content other than the two
/// states (surrounding whitespace aside) is a fault naming the file and what it holds.
pub fn read(path: &Path) -> Result<Option<Step>, Exit> {
    let shown = path.display();
    let content = match crate::regular_file::read_head(path, MAX_STATE) {
        Ok(content) => content,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.kind() == io::ErrorKind::InvalidInput => {
            return Err(Exit::Usage(format!("state file {shown} {err}")))
        }
        Err(err) => {
            let reason = describe_io(&err);
            return Err(Exit::Failed(format!(
                "cannot read state file {shown}: {reason}"
            )));
        }
    };
    let text = String::from_utf8_lossy(&content);
    let (trimmed, states) = (text.trim(), [Step::FirstRun, Step::Native]);
    if let Some(state) = states.into_iter().find(|s| s.as_str() == trimmed) {
        return Ok(Some(state));
    }
    // A state written in place (`echo native > FILE`) is empty, then partial, for a moment:
    // not a state yet, so read as if absent until it is whole.
    if !text.ends_with('\n') && states.iter().any(|s| s.as_str().starts_with(trimmed)) {
        return Ok(None);
    }
    let holds = quoted(trimmed);
    Err(Exit::Usage(format!(
        "state file {shown} holds {holds}, not first-run or native"
    )))
}

/// Checks once, before any I/O, that `path` can name the state file: not a folder's name.
pub fn check_path(path: &Path) -> Result<(), Exit> {
    use std::os::unix::ffi::OsStrExt;
    if path.file_name().is_none() || path.as_os_str().as_bytes().ends_with(b"/") {
        let shown = path.display();
        return Err(Exit::Usage(format!(
            "--state {shown} names a folder, not a file"
        )));
    }
    Ok(())
}

/// Replaces the state atomically: readers see the old state or the new one, never a mix.
pub fn write(path: &Path, state: Step) -> Result<(), Exit> {
    let fail = |err: &io::Error| {
        let reason = describe_io(err);
        Exit::Failed(format!(
            "cannot write state file {}: {reason}",
            path.display()
        ))
    };
    check_path(path)?;
    crate::process::atomic::make_parents(path).map_err(|e| fail(&e))?;
    crate::process::atomic::replace(path, 0o644, |file| writeln!(file, "{}", state.as_str()))
        .map_err(|failure| fail(&failure.error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_unexpected_content_is_an_error_naming_it() {
        let folder = std::env::temp_dir().join(format!("readygate-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        let path = folder.join("nested/state");
        assert_eq!(read(&path), Ok(None));
        write(&path, Step::FirstRun).unwrap();
        assert_eq!(read(&path), Ok(Some(Step::FirstRun)));
        write(&path, Step::Native).unwrap();
        assert_eq!(read(&path), Ok(Some(Step::Native)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "native\n");
        let entries = std::fs::read_dir(folder.join("nested")).unwrap().count();
        assert_eq!(entries, 1, "a temporary file was left behind");

        std::fs::write(&path, "nativ\n").unwrap();
        let Err(Exit::Usage(err)) = read(&path) else {
            panic!("accepted a misspelt state");
        };
        let expected = "holds \"nativ\", not first-run or native";
        assert!(err.contains(expected), "{err}");
        // Content being written is not a state yet; a whole line is a whole state.
        for (content, expected) in [
            ("", Some(None)),
            ("nat", Some(None)),
            ("first-", Some(None)),
            ("  ", Some(None)),
            ("nat\n", None),
            (" native \n", Some(Some(Step::Native))),
        ] {
            std::fs::write(&path, content).unwrap();
            assert_eq!(read(&path).ok(), expected, "{content:?}");
        }
        let Err(Exit::Usage(err)) = read(&folder) else {
            panic!("accepted a folder");
        };
        assert!(err.ends_with("is a directory"), "{err}");
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
