//! The `--log-format json` line: one object whose fields keep one name, type and order on every
//! line, so a pipeline can select on them (docs/cli.md "JSON log lines").

use std::fmt;
use std::sync::OnceLock;
use std::time::Instant;

use serde::{Serialize, Serializer};
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Every `event` a line may name; a line that names none is a `note`.
pub const EVENTS: &[&str] = &[
    "waiting",
    "schedule",
    "attempt",
    "retry_after",
    "ready",
    "not_ready",
    "giving_up",
    "signal",
    "lookup",
    "exec",
    "command",
    "on_exit",
    "touch",
    "termination_log",
    "disabled",
    "serve",
    "request",
    "install",
    "sidecar",
    "output",
    "error",
    "note",
];

/// When logging began: `elapsed_ms` counts from here.
static START: OnceLock<Instant> = OnceLock::new();

/// Starts the clock of `elapsed_ms`.
pub fn start() {
    let _ = START.set(Instant::now());
}

/// What one line says, gathered from an event's fields or given by readygate's own notes.
#[derive(Debug, Default)]
pub struct Fields {
    /// What happened: one of [`EVENTS`].
    pub event: Option<String>,
    /// The target it happened to, as logs show it (secrets hidden).
    pub target: Option<String>,
    /// The target's attempt number, from 1.
    pub attempt: Option<u64>,
    /// An exit status: readygate's own when the event ends the run, or COMMAND's.
    pub status: Option<i64>,
    /// Why a target missed its goal, or why a step failed.
    pub reason: Option<String>,
    /// The line as the text format writes it.
    pub message: String,
    /// Any other field, as given (none of readygate's own lines has one).
    pub other: Vec<(&'static str, Value)>,
}

impl Fields {
    /// A line that says `message` about `event`.
    pub fn new(event: &str, message: &str) -> Fields {
        Fields {
            event: Some(event.into()),
            message: message.into(),
            ..Fields::default()
        }
    }

    /// The JSON line (no newline) at `level`, stamped with the time and `elapsed_ms`.
    pub fn line(&self, level: &tracing::Level) -> String {
        let mut timestamp = String::new();
        let _ = SystemTime.format_time(&mut Writer::new(&mut timestamp));
        let event = self.event.as_deref().unwrap_or("note");
        debug_assert!(EVENTS.contains(&event), "undocumented log event {event}");
        let line = Line {
            timestamp: &timestamp,
            level: level.as_str(),
            event,
            elapsed_ms: START.get().map_or(0, |start| start.elapsed().as_millis()),
            target: self.target.as_deref(),
            attempt: self.attempt,
            status: self.status,
            reason: self.reason.as_deref(),
            message: &self.message,
            other: Others(&self.other),
        };
        serde_json::to_string(&line).expect("a log line has string keys only")
    }
}

/// One JSON line: its fields in the documented order, a field with no value left out.
#[derive(Serialize)]
struct Line<'a> {
    timestamp: &'a str,
    level: &'a str,
    event: &'a str,
    elapsed_ms: u128,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    message: &'a str,
    #[serde(flatten)]
    other: Others<'a>,
}

/// Any other fields, last, in the order given.
struct Others<'a>(&'a [(&'static str, Value)]);

impl Serialize for Others<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, value)))
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record(field, Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record(field, Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record(field, Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.record(field, Value::from(value));
    }

    /// The message, and values given with `%` (Display) or `?` (Debug).
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.record(field, Value::from(format!("{value:?}")));
    }
}

impl Fields {
    /// Keeps `value` under its field; a value of the wrong type for a known field is kept as
    /// another field rather than lost.
    fn record(&mut self, field: &Field, value: Value) {
        let name = field.name();
        let as_text = |value: &Value| value.as_str().map(str::to_string);
        match name {
            "message" => self.message = as_text(&value).unwrap_or_else(|| value.to_string()),
            "event" if value.is_string() => self.event = as_text(&value),
            "target" if value.is_string() => self.target = as_text(&value),
            "reason" if value.is_string() => self.reason = as_text(&value),
            "attempt" if value.is_u64() => self.attempt = value.as_u64(),
            "status" if value.is_i64() => self.status = value.as_i64(),
            // The waiting line's targets and their last reasons, given as JSON text.
            "reasons" => {
                let parsed = value
                    .as_str()
                    .and_then(|text| serde_json::from_str(text).ok());
                self.other.push((name, parsed.unwrap_or(value)));
            }
            _ => self.other.push((name, value)),
        }
    }
}

/// The formatter of `--log-format json`: [`Fields::line`] for each event.
pub struct JsonFormat;

impl<S, N> FormatEvent<S, N> for JsonFormat
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        writeln!(writer, "{}", fields.line(event.metadata().level()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_documented_and_every_documented_event_exists() {
        let docs = include_str!("../../docs/cli.md");
        let section = docs.split("### JSON log lines").nth(1).unwrap();
        let table = section.split("Events:\n").nth(1).unwrap();
        let table = table.split("\n#").next().unwrap();
        let documented: Vec<&str> = table
            .lines()
            .filter_map(|line| line.strip_prefix("| `")?.split('`').next())
            .collect();
        assert_eq!(documented, EVENTS);
    }

    #[test]
    fn a_line_has_its_fields_in_order_and_parses() {
        let mut fields = Fields::new(
            "giving_up",
            "not ready after 1.0s: db:5432: refused \"x\"\n",
        );
        fields.target = Some("tcp://db:5432".into());
        fields.attempt = Some(3);
        fields.status = Some(1);
        fields.reason = Some("connection refused".into());
        let line = fields.line(&tracing::Level::ERROR);
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["event"], "giving_up");
        assert_eq!(value["attempt"], 3);
        assert_eq!(value["status"], 1);
        assert_eq!(value["level"], "ERROR");
        assert!(value["elapsed_ms"].is_u64());
        let order = [
            "timestamp",
            "level",
            "event",
            "elapsed_ms",
            "target",
            "attempt",
            "status",
        ];
        let at: Vec<usize> = order.iter().map(|key| line.find(key).unwrap()).collect();
        assert!(at.windows(2).all(|pair| pair[0] < pair[1]), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }

    #[test]
    fn a_line_is_these_bytes() {
        let mut fields = Fields::new("ready", "db: ready after 1.0s \u{1} é");
        fields.target = Some("tcp://db:5432".into());
        fields.attempt = Some(2);
        fields
            .other
            .push(("reasons", serde_json::json!([{"target": "a\"b"}])));
        fields.other.push(("extra", Value::from(true)));
        let line = fields.line(&tracing::Level::INFO);
        let (stamped, rest) = line.split_once(",\"elapsed_ms\":").unwrap();
        assert!(stamped.starts_with("{\"timestamp\":\""), "{line}");
        assert!(
            stamped.ends_with("\",\"level\":\"INFO\",\"event\":\"ready\""),
            "{line}"
        );
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        let expected = concat!(
            r#","target":"tcp://db:5432","attempt":2,"#,
            r#""message":"db: ready after 1.0s \u0001 é","#,
            r#""reasons":[{"target":"a\"b"}],"extra":true}"#
        );
        assert_eq!(rest, expected);
        let bare = Fields::default().line(&tracing::Level::WARN);
        let rest = bare.split_once(",\"elapsed_ms\":").unwrap().1;
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        assert_eq!(rest, r#","message":""}"#);
        assert!(bare.contains(r#""level":"WARN","event":"note""#), "{bare}");
    }
}
