//! Logging to stderr, as text or JSON lines, at the level the plan chose.

use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::cli::LogFormat;
use crate::plan::LogSettings;

/// Installs the global subscriber; lines go to stderr, never stdout (reserved for `probe`).
/// Only readygate's own events pass at the chosen level: the libraries below it (hyper, h2,
/// rustls) speak at `warn` and above, so `-v` shows attempts, not HTTP/2 frames.
pub fn init(settings: LogSettings) {
    let level = LevelFilter::from_level(settings.level);
    let filter = Targets::new()
        .with_target(env!("CARGO_CRATE_NAME"), level)
        .with_default(level.min(LevelFilter::WARN));
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        .with_ansi(false)
        // A log line that cannot be written (stderr's reader went away) is dropped: the
        // subscriber's own complaint would go to the same broken stderr via eprintln!, which
        // panics on EPIPE.
        .log_internal_errors(false);
    let _ = match settings.format {
        LogFormat::Text => builder.finish().with(filter).try_init(),
        LogFormat::Json => builder.json().finish().with(filter).try_init(),
    };
}
