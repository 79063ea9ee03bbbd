//! Logging to stderr, as text or JSON lines, at the level the plan chose.
//!
//! A small `tracing` subscriber of our own rather than `tracing-subscriber`'s: readygate logs
//! events only (no spans), one line each, and the general one cost every run, `probe` included,
//! a sharded registry set up before the first line (35 k instructions, 7 page faults) and the
//! binary 0.36 MB (`bench/`). The lines are the ones `tracing-subscriber` wrote:
//! `2026-01-02T03:04:05.678901Z  INFO message key=value`, or
//! `{"timestamp":"…","level":"INFO","fields":{"message":"…","key":"value"}}`.

use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use crate::cli::LogFormat;
use crate::plan::LogSettings;

/// Installs the global subscriber; lines go to stderr, never stdout (reserved for `probe`).
/// Only readygate's own events pass at the chosen level: the libraries below it (hyper, h2,
/// rustls) speak at `warn` and above, so `-v` shows attempts, not HTTP/2 frames.
pub fn init(settings: LogSettings) {
    let _ = tracing::subscriber::set_global_default(Lines {
        own: LevelFilter::from_level(settings.level),
        json: settings.format == LogFormat::Json,
    });
}

/// Writes each enabled event as one line on stderr.
struct Lines {
    /// The most detailed level of readygate's own events.
    own: LevelFilter,
    /// JSON objects instead of text.
    json: bool,
}

impl Lines {
    /// The most detailed level shown for events from `target`.
    fn limit(&self, target: &str) -> LevelFilter {
        if target == "readygate" || target.starts_with("readygate::") {
            self.own
        } else {
            self.own.min(LevelFilter::WARN)
        }
    }
}

impl Subscriber for Lines {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && self.limit(metadata.target()) >= *metadata.level()
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.own)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let line = if self.json {
            json_line(event)
        } else {
            text_line(event)
        };
        // A line that cannot be written (stderr's reader went away) is dropped: there is
        // nowhere left to complain to.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// `2026-01-02T03:04:05.678901Z  INFO message key=value`.
fn text_line(event: &Event<'_>) -> String {
    let mut visitor = TextFields::default();
    event.record(&mut visitor);
    let mut line = String::with_capacity(64 + visitor.message.len() + visitor.rest.len());
    let _ = write!(
        line,
        "{} {:>5} {}",
        Timestamp(SystemTime::now()),
        level_name(event.metadata().level()),
        visitor.message
    );
    if !visitor.rest.is_empty() {
        if !visitor.message.is_empty() {
            line.push(' ');
        }
        line.push_str(&visitor.rest);
    }
    line.push('\n');
    line
}

/// `{"timestamp":"…","level":"INFO","fields":{"message":"…"}}`.
fn json_line(event: &Event<'_>) -> String {
    let mut visitor = JsonFields(String::new());
    event.record(&mut visitor);
    let mut line = String::with_capacity(96 + visitor.0.len());
    let _ = writeln!(
        line,
        "{{\"timestamp\":\"{}\",\"level\":\"{}\",\"fields\":{{{}}}}}",
        Timestamp(SystemTime::now()),
        level_name(event.metadata().level()),
        visitor.0
    );
    line
}

fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "ERROR",
        Level::WARN => "WARN",
        Level::INFO => "INFO",
        Level::DEBUG => "DEBUG",
        Level::TRACE => "TRACE",
    }
}

/// The message as it is, then the other fields as `name=value`.
#[derive(Default)]
struct TextFields {
    message: String,
    rest: String,
}

impl Visit for TextFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            if !self.rest.is_empty() {
                self.rest.push(' ');
            }
            let _ = write!(self.rest, "{}={value:?}", field.name());
        }
    }
}

/// The fields as the members of a JSON object (without the braces).
struct JsonFields(String);

impl JsonFields {
    fn key(&mut self, field: &Field) {
        if !self.0.is_empty() {
            self.0.push(',');
        }
        push_json_string(&mut self.0, field.name());
        self.0.push(':');
    }
}

impl Visit for JsonFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.key(field);
        push_json_string(&mut self.0, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.key(field);
        let _ = write!(self.0, "{value}");
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.key(field);
        let _ = write!(self.0, "{value}");
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.key(field);
        let _ = write!(self.0, "{value}");
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.key(field);
        push_json_string(&mut self.0, &format!("{value:?}"));
    }
}

/// Appends `text` as a JSON string literal.
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A moment as RFC 3339 in UTC with microseconds: `2026-01-02T03:04:05.678901Z`.
struct Timestamp(SystemTime);

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let since = self.0.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since.as_secs();
        let (year, month, day) = civil_from_days((secs / 86_400) as i64);
        let time = secs % 86_400;
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
            time / 3600,
            time / 60 % 60,
            time % 60,
            since.subsec_micros()
        )
    }
}

/// The Gregorian (year, month, day) of a count of days since 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc_with_microseconds() {
        let at = |secs: u64, micros: u64| {
            Timestamp(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros))
                .to_string()
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.000007Z");
        assert_eq!(at(1_798_761_599, 999_999), "2026-12-31T23:59:59.999999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
    }

    #[test]
    fn json_strings_are_escaped() {
        let mut out = String::new();
        push_json_string(&mut out, "a \"b\" \\ c\nd\te\u{1}é");
        assert_eq!(out, r#""a \"b\" \\ c\nd\te\u0001é""#);
    }

    #[test]
    fn libraries_speak_at_warn_and_above_readygate_at_its_level() {
        let lines = Lines {
            own: LevelFilter::DEBUG,
            json: false,
        };
        assert_eq!(lines.limit("readygate"), LevelFilter::DEBUG);
        assert_eq!(lines.limit("readygate::engine"), LevelFilter::DEBUG);
        assert_eq!(lines.limit("hyper::proto"), LevelFilter::WARN);
        assert_eq!(lines.limit("readygatex"), LevelFilter::WARN);
        assert!(lines.limit("h2") >= Level::WARN);
        assert!(lines.limit("h2") < Level::INFO);
        let quiet = Lines {
            own: LevelFilter::ERROR,
            json: true,
        };
        assert_eq!(quiet.limit("rustls"), LevelFilter::ERROR);
    }
}
