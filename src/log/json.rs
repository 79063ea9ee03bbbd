//! The `--log-format json` line: one object whose fields keep one name, type and order on every
//! line, so a pipeline can select on them (docs/cli.md "JSON log lines").

use std::fmt;
use std::sync::OnceLock;
use std::time::Instant;

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
        let elapsed = START.get().map_or(0, |start| start.elapsed().as_millis());
        let event = self.event.as_deref().unwrap_or("note");
        debug_assert!(EVENTS.contains(&event), "undocumented log event {event}");
        let mut line = format!(
            "{{\"timestamp\":{},\"level\":{},\"event\":{},\"elapsed_ms\":{elapsed}",
            text(&timestamp),
            text(level.as_str()),
            text(event)
        );
        if let Some(target) = &self.target {
            line += &format!(",\"target\":{}", text(target));
        }
        if let Some(attempt) = self.attempt {
            line += &format!(",\"attempt\":{attempt}");
        }
        if let Some(status) = self.status {
            line += &format!(",\"status\":{status}");
        }
        if let Some(reason) = &self.reason {
            line += &format!(",\"reason\":{}", text(reason));
        }
        line += &format!(",\"message\":{}", text(&self.message));
        for (name, value) in &self.other {
            line += &format!(",{}:{value}", text(name));
        }
        line + "}"
    }
}

/// `value` as a JSON string.
fn text(value: &str) -> String {
    Value::from(value).to_string()
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
}
