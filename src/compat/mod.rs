//! Answering to other tools' names: an image that calls `wait-for-it` or `wait-for` keeps its
//! command lines when that file becomes a link to (or a copy of) readygate, and loses the
//! shell, nc and wget the scripts need.

mod wait_for;
mod wait_for_it;

use std::path::Path;

/// Runs the tool readygate was invoked as, judged by the file name in argv[0], and returns its
/// exit status; `None` means readygate was called by its own name (or any other) and parses its
/// own command line.
pub fn dispatch() -> Option<u8> {
    let mut args = std::env::args_os();
    let argv0 = args.next()?;
    let name = Path::new(&argv0).file_name()?.to_str()?;
    match name {
        "wait-for-it" | "wait-for-it.sh" => Some(wait_for_it::main(name, args.collect())),
        "wait-for" | "wait-for.sh" => {
            let argv0 = argv0.to_string_lossy().into_owned();
            Some(wait_for::main(&argv0, args.collect()))
        }
        _ => None,
    }
}
