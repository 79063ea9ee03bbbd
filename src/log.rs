//! Logging to stderr, as text or JSON lines, at the level the plan chose.

use std::sync::OnceLock;

use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;

use crate::cli::LogFormat;
use crate::plan::LogSettings;

/// Installs the global subscriber; lines go to stderr, never stdout (reserved for `probe`).
/// Only readygate's own events pass at the chosen level: the libraries below it (hyper, h2,
/// rustls) speak at `warn` and above, so `-v` shows attempts, not HTTP/2 frames.
pub fn init(settings: LogSettings) {
    let _ = tracing::subscriber::set_global_default(Lazy::new(settings));
}

/// The subscriber that writes the lines: tracing-subscriber's formatter. It needs no filter of
/// its own: only what [`Lazy`] enabled ever reaches it.
fn build(settings: LogSettings) -> Dispatch {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(settings.level)
        .with_target(false)
        .with_ansi(false)
        // A log line that cannot be written (stderr's reader went away) is dropped: the
        // subscriber's own complaint would go to the same broken stderr via eprintln!, which
        // panics on EPIPE.
        .log_internal_errors(false);
    match settings.format {
        LogFormat::Text => Dispatch::new(builder.finish()),
        LogFormat::Json => Dispatch::new(builder.json().finish()),
    }
}

/// Answers which events and spans are enabled from `filter` alone, and builds the real
/// subscriber ([`build`]) at the first one that is. Most one-shot `probe` runs log nothing, and
/// building it up front (tracing-subscriber's span registry zeroes a 32 KB slab) was 37 k
/// instructions and 8 page faults of each. `current_span` keeps the trait's default
/// ("unknown"): readygate has no spans of its own and never asks for the current one.
struct Lazy {
    /// What [`build`] needs.
    settings: LogSettings,
    /// Which events and spans pass: readygate's at the chosen level, others' at `warn`.
    filter: Targets,
    /// The real subscriber, once something was enabled.
    built: OnceLock<Dispatch>,
}

impl Lazy {
    fn new(settings: LogSettings) -> Lazy {
        let level = LevelFilter::from_level(settings.level);
        let filter = Targets::new()
            .with_target(env!("CARGO_CRATE_NAME"), level)
            .with_default(level.min(LevelFilter::WARN));
        Lazy {
            settings,
            filter,
            built: OnceLock::new(),
        }
    }

    fn built(&self) -> &Dispatch {
        self.built.get_or_init(|| build(self.settings))
    }
}

impl Subscriber for Lazy {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if self.enabled(metadata) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::from_level(self.settings.level))
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.filter
            .would_enable(metadata.target(), metadata.level())
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.built().new_span(span)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        self.built().record(span, values);
    }

    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.built().record_follows_from(span, follows);
    }

    fn event(&self, event: &Event<'_>) {
        self.built().event(event);
    }

    fn enter(&self, span: &Id) {
        self.built().enter(span);
    }

    fn exit(&self, span: &Id) {
        self.built().exit(span);
    }

    fn clone_span(&self, id: &Id) -> Id {
        self.built().clone_span(id)
    }

    fn try_close(&self, id: Id) -> bool {
        self.built().try_close(id)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_subscriber_is_built_at_the_first_enabled_event_only() {
        let lazy = Arc::new(Lazy::new(LogSettings {
            level: tracing::Level::WARN,
            format: LogFormat::Text,
        }));
        tracing::subscriber::with_default(Arc::clone(&lazy), || {
            tracing::info!("below the level");
            tracing::debug!(target: "hyper", "another crate");
            assert!(lazy.built.get().is_none());
            tracing::warn!(target: "hyper", "another crate's warning");
            assert!(lazy.built.get().is_some());
        });
    }
}
