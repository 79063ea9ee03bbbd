//! Logging to stderr, as text or JSON lines, at the level the plan chose.

pub mod json;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tracing::level_filters::LevelFilter;
use tracing::subscriber::set_global_default;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// How much to log, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    /// The most detailed level shown.
    pub level: tracing::Level,
    /// Text or JSON lines.
    pub format: LogFormat,
}

/// The form of a log line (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The tracing target of lines only JSON logs carry (`exec`): text logs stay as they were.
pub const JSON_ONLY: &str = concat!(env!("CARGO_CRATE_NAME"), "::json_only");

/// Logs are JSON lines (`--log-format json`).
static JSON: AtomicBool = AtomicBool::new(false);

/// Whether logs are JSON lines: readygate's own lines outside `tracing` follow them.
pub fn json() -> bool {
    JSON.load(Relaxed)
}

/// Chooses JSON lines before logging begins, as far as the command line says, so that a usage
/// error found before then is a JSON line too.
pub fn choose_json(json: bool) {
    if json {
        json::start();
        JSON.store(true, Relaxed);
        crate::output::notes_as(output_note);
    }
}

/// A line readygate writes itself, outside `tracing` (`readygate: installed …`): as
/// `readygate: MESSAGE` in text, as a JSON line of `fields` at `level` under `--log-format json`.
pub fn say(level: tracing::Level, fields: json::Fields) {
    match json() {
        true => crate::output::stderr(&fields.line(&level)),
        false => say!("readygate: {}", fields.message),
    }
}

/// Installs the global subscriber: tracing-subscriber's formatter, writing to stderr through
/// [`crate::output`] (never blocking, secrets hidden), never to stdout (reserved for `probe`).
pub fn init(settings: LogSettings) {
    json::start();
    let builder = tracing_subscriber::fmt()
        .with_writer(crate::output::LogLine::default)
        .with_max_level(settings.level)
        .with_target(false)
        .with_ansi(false)
        // A log line that cannot be written (stderr's reader went away) is dropped: the
        // subscriber's own complaint would go to the same broken stderr via eprintln!, which
        // panics on EPIPE.
        .log_internal_errors(false);
    let filter = filter(settings.level);
    let _ = match settings.format {
        LogFormat::Text => {
            let filter = filter.with_target(JSON_ONLY, LevelFilter::OFF);
            let subscriber = builder.fmt_fields(one_line_fields()).finish();
            set_global_default(subscriber.with(filter).with(LibraryCap::default()))
        }
        // JSON strings escape control characters themselves.
        LogFormat::Json => {
            JSON.store(true, Relaxed);
            crate::output::notes_as(output_note);
            let builder = builder.event_format(json::JsonFormat);
            set_global_default(builder.finish().with(filter).with(LibraryCap::default()))
        }
    };
}

/// A note of readygate's own about its output, as a JSON line shaped as the log lines are.
fn output_note(text: &str) -> String {
    json::Fields::new("output", text).line(&tracing::Level::WARN)
}

/// Readygate's own events pass at the chosen level; the libraries below it (hyper, h2, rustls)
/// speak only with `-v`, at `warn` and above: what they say is often a peer's doing (a client
/// of `serve` resetting streams), and no peer may write the default log.
fn filter(level: tracing::Level) -> Targets {
    let level = LevelFilter::from_level(level);
    let libraries = match level >= LevelFilter::DEBUG {
        true => LevelFilter::WARN,
        false => LevelFilter::OFF,
    };
    Targets::new()
        .with_target(env!("CARGO_CRATE_NAME"), level)
        .with_default(libraries)
}

/// Most lines the libraries may write per [`LIBRARY_WINDOW`], at `-v`.
const LIBRARY_LINES: u32 = 10;

/// The window [`LIBRARY_LINES`] counts in.
const LIBRARY_WINDOW: Duration = Duration::from_secs(60);

/// Drops the libraries' lines past [`LIBRARY_LINES`] a window: a peer that makes hyper or h2
/// complain on every connection cannot rotate readygate's own lines away, even at `-v`.
#[derive(Default)]
struct LibraryCap {
    /// When the current window started, and how many library lines it has let through.
    window: Mutex<Option<(Instant, u32)>>,
}

impl<S: tracing::Subscriber> Layer<S> for LibraryCap {
    fn event_enabled(&self, event: &tracing::Event<'_>, _: Context<'_, S>) -> bool {
        let target = event.metadata().target();
        let crate_name = env!("CARGO_CRATE_NAME");
        if target
            .strip_prefix(crate_name)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        {
            return true;
        }
        let Ok(mut window) = self.window.lock() else {
            return false;
        };
        let now = Instant::now();
        let (started, lines) = match *window {
            Some((started, lines)) if now.duration_since(started) < LIBRARY_WINDOW => {
                (started, lines)
            }
            _ => (now, 0),
        };
        *window = Some((started, lines + 1));
        lines < LIBRARY_LINES
    }
}

/// The text format's fields: the message alone (the other fields are for JSON lines, and the
/// message says the same), its control characters escaped: the one place every log line's text
/// passes, so no value (a server's `grpc-message`, a path) can break a line or forge one.
fn one_line_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> {
    tracing_subscriber::fmt::format::debug_fn(|writer, field, value| match field.name() {
        "message" => writer.write_str(&crate::text::one_line(&format!("{value:?}"))),
        _ => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;

    use super::*;

    #[test]
    fn every_field_of_a_text_line_is_one_line() {
        // The formatter writes into one end; the other reads it all once the subscriber is gone.
        let (mut reader, writer) = UnixStream::pair().unwrap();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Arc::new(writer))
            .with_ansi(false)
            .fmt_fields(one_line_fields())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let forged = "x\n2026-01-01T00:00:00Z  INFO forged: ready\r\u{1b}[2K";
            tracing::info!(
                event = "waiting",
                reason = forged,
                "still waiting: {forged}"
            );
        });
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(!text.contains('\r') && !text.contains('\u{1b}'), "{text}");
        assert!(
            text.ends_with(
                " still waiting: x\\n2026-01-01T00:00:00Z  INFO forged: ready\\r\\u{1b}[2K\n"
            ),
            "{text}"
        );
        assert!(
            !text.contains("reason=") && !text.contains("event="),
            "{text}"
        );
    }

    #[test]
    fn readygate_logs_at_its_level_and_libraries_only_with_v() {
        use tracing::Level;
        let (info, debug) = (filter(Level::INFO), filter(Level::DEBUG));
        assert!(info.would_enable("readygate", &Level::INFO));
        assert!(!info.would_enable("readygate", &Level::DEBUG));
        assert!(!info.would_enable("h2", &Level::WARN));
        assert!(!info.would_enable("hyper", &Level::ERROR));
        assert!(debug.would_enable("readygate::engine", &Level::DEBUG));
        assert!(debug.would_enable("h2", &Level::WARN));
        assert!(!debug.would_enable("h2", &Level::INFO));
    }

    #[test]
    fn the_libraries_lines_are_capped_and_readygate_own_are_not() {
        let (mut reader, writer) = UnixStream::pair().unwrap();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Arc::new(writer))
            .with_ansi(false)
            .finish()
            .with(LibraryCap::default());
        tracing::subscriber::with_default(subscriber, || {
            for n in 0..100 {
                tracing::warn!(target: "h2::proto", "reset {n}");
                tracing::warn!("own {n}");
            }
        });
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        let count = |word: &str| text.lines().filter(|l| l.contains(word)).count();
        assert_eq!(count(" reset "), LIBRARY_LINES as usize, "{text}");
        assert_eq!(count(" own "), 100);
    }
}
