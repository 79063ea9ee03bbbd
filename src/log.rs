//! Logging to stderr, as text or JSON lines, at the level the plan chose.

use crate::cli::LogFormat;
use crate::plan::LogSettings;

/// Installs the global subscriber; lines go to stderr, never stdout (reserved for `probe`).
pub fn init(settings: LogSettings) {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(settings.level)
        .with_target(false)
        .with_ansi(false);
    let _ = match settings.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
