//! `readygate install DIR`: an image `FROM scratch` has no `cp`, so readygate copies itself to
//! `DIR/readygate`, atomically; 2 when DIR names no folder, 1 when writing fails.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use crate::error::describe_io;
use crate::exit::Exit;
use crate::log::json::Fields;
use crate::process::atomic::{self, Step};
use crate::process::elf;
use crate::process::signal::Terminations;
use crate::runtime::lane::{self, Stop, UNBOUNDED_WITHIN};
use crate::text;

/// Where the kernel exposes the running executable, even when its file was since replaced.
const SELF_EXE: &str = "/proc/self/exe";

/// Copies `/proc/self/exe` to `DIR/readygate` (the name the README's recipe runs) and reports
/// the outcome as one line on stderr. The copy runs off the runtime's thread, so DIR on a mount
/// that does not answer ends in a reason after [`UNBOUNDED_WITHIN`], or at a terminating signal.
pub async fn install(dir: &Path) -> Exit {
    let mut signals = Terminations::listen();
    let owned = dir.to_path_buf();
    match lane::run_alone(UNBOUNDED_WITHIN, signals.next(), move || copy(&owned)).await {
        Ok(exit) => exit,
        Err(Stop::Failed(failure)) => Exit::Failed(format!("install: {}: {failure}", shown(dir))),
        Err(Stop::Signal(signal)) => {
            let exit = Exit::Signal(signal);
            let mut fields = Fields::new("signal", &format!("install: stopped by signal {signal}"));
            fields.status = Some(exit.code().into());
            crate::log::say(tracing::Level::WARN, fields);
            exit
        }
    }
}

fn shown(path: &Path) -> String {
    text::one_line(&path.display().to_string())
}

/// The copy itself, with its outcome.
fn copy(dir: &Path) -> Exit {
    match fs::metadata(dir) {
        // ENOTDIR: a component of the path is a file, so DIR cannot exist either.
        Err(err)
            if err.kind() == io::ErrorKind::NotFound
                || err.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Exit::Usage(format!("install: no such folder {}", shown(dir)));
        }
        Ok(meta) if !meta.is_dir() => {
            return Exit::Usage(format!("install: {} is not a folder", shown(dir)));
        }
        _ => {}
    }
    let mut source = match File::open(SELF_EXE) {
        Ok(source) => source,
        Err(err) => {
            let reason = describe_io(&err);
            return Exit::Failed(format!(
                "install: cannot read {SELF_EXE} (is /proc mounted?): {reason}"
            ));
        }
    };
    let interpreter = elf::interpreter(&source);
    let dest = dir.join("readygate");
    match atomic::replace(&dest, 0o755, |temp| io::copy(&mut source, temp)) {
        Ok(bytes) => {
            if let Some(interpreter) = interpreter {
                crate::log::say(tracing::Level::WARN, dynamic_warning(&interpreter));
            }
            let message = format!("installed {} ({bytes} bytes)", shown(&dest));
            crate::log::say(tracing::Level::INFO, Fields::new("install", &message));
            Exit::Ready
        }
        Err(failure) => {
            // The folder as the user typed it (`/shared/`), not as the destination's parent.
            let (what, path) = match failure.step {
                Step::Create => ("create a file in", dir),
                Step::Write => ("write", failure.path.as_path()),
                Step::Rename => ("replace", dest.as_path()),
                Step::Flush => ("flush", dir),
            };
            let (path, reason) = (shown(path), describe_io(&failure.error));
            Exit::Failed(format!("install: cannot {what} {path}: {reason}"))
        }
    }
}

/// What a dynamically linked build (`cargo install`) needs where it is copied to: its loader and
/// the C library, which a shell-less or `FROM scratch` image does not have.
fn dynamic_warning(interpreter: &str) -> Fields {
    let message = format!(
        "warning: this readygate is linked dynamically (it needs {} and the C library): it will \
         not start in an image without them, such as FROM scratch or distroless/static; install \
         the release's static binary or image instead (README, Install)",
        text::one_line(interpreter)
    );
    Fields::new("install", &message)
}
