//! Logging to stderr, as text or JSON lines, at the level the plan chose.

use std::sync::OnceLock;

use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;

/// How much to log, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    /// The most detailed level shown.
    pub level: tracing::Level,
    /// Text or JSON lines.
    pub format: LogFormat,
}

/// The form of a log line (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber; lines go to stderr through [`crate::output`] (never
/// blocking, secrets hidden), never to stdout (reserved for `probe`).
/// Only readygate's own events pass at the chosen level: the libraries below it (hyper, h2,
/// rustls) speak at `warn` and above, so `-v` shows attempts, not HTTP/2 frames.
pub fn init(settings: LogSettings) {
    let _ = tracing::subscriber::set_global_default(Lazy::new(settings));
}

/// The subscriber that writes the lines: tracing-subscriber's formatter. It needs no filter of
/// its own: only what [`Lazy`] enabled ever reaches it.
fn build(settings: LogSettings) -> Dispatch {
    let builder = tracing_subscriber::fmt()
        .with_writer(crate::output::LogLine::default)
        .with_max_level(settings.level)
        .with_target(false)
        .with_ansi(false)
        // A log line that cannot be written (stderr's reader went away) is dropped: the
        // subscriber's own complaint would go to the same broken stderr via eprintln!, which
        // panics on EPIPE.
        .log_internal_errors(false);
    match settings.format {
        LogFormat::Text => Dispatch::new(builder.fmt_fields(one_line_fields()).finish()),
        // JSON strings escape control characters themselves.
        LogFormat::Json => Dispatch::new(builder.json().finish()),
    }
}

/// The text format's fields, each with its control characters escaped: the one place every
/// log line's text passes, so no value (a server's `grpc-message`, a path) can break a line
/// or forge one.
fn one_line_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        let text = crate::redact::one_line(&format!("{value:?}"));
        match field.name() {
            "message" => writer.write_str(&text),
            name => write!(writer, "{name}={text}"),
        }
    })
    .delimited(" ")
}

/// Answers which events and spans are enabled from `filter` alone, and builds the real
/// subscriber ([`build`]) at the first one that is: most one-shot `probe` runs log nothing, and
/// need not pay for building it (docs/performance.md). `current_span` keeps the trait's default
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
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A writer that keeps what the formatter wrote.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_field_of_a_text_line_is_one_line() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .fmt_fields(one_line_fields())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let forged = "x\n2026-01-01T00:00:00Z  INFO forged: ready\r\u{1b}[2K";
            tracing::info!(reason = forged, "still waiting: {forged}");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(!text.contains('\r') && !text.contains('\u{1b}'), "{text}");
        assert!(text.contains("still waiting: x\\n2026"), "{text}");
        assert!(text.contains("reason=\"x\\n2026"), "{text}");
    }

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
