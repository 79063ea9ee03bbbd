//! The Prometheus text exposition format (version 0.0.4), written by hand: `serve` and the
//! webhook expose a few counters, gauges and one histogram, which a `String` and a dozen lines
//! write; a metrics crate would cost the static binary more than the format does. Label values
//! come in already redacted: this module only escapes them.

mod histogram;

use std::fmt::Write;

pub use histogram::Histogram;

/// The content type of the text format, as Prometheus asks for it.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The type of a metric family, on its `# TYPE` line.
#[derive(Clone, Copy)]
pub enum Type {
    Counter,
    Gauge,
    Histogram,
}

/// A scrape's answer, being written: families, each with its `# HELP` and `# TYPE` lines and
/// then its samples.
#[derive(Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts family `name`; its samples follow.
    pub fn family(&mut self, name: &str, kind: Type, help: &str) {
        let kind = match kind {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
            Type::Histogram => "histogram",
        };
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = write!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
    }

    /// One sample: `name{label="value",…} value`.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: u64) {
        self.sample_text(name, labels, None, &value.to_string());
    }

    /// A histogram's samples: a cumulative `_bucket` per bound and `+Inf`, `_sum` (seconds)
    /// and `_count`.
    pub fn histogram(&mut self, name: &str, labels: &[(&str, &str)], histogram: &Histogram) {
        let taken = histogram.taken();
        let bucket = format!("{name}_bucket");
        let mut below = 0;
        for (bound, count) in taken.buckets() {
            below += count;
            self.sample_text(&bucket, labels, Some(bound), &below.to_string());
        }
        self.sample_text(&bucket, labels, Some("+Inf"), &taken.count.to_string());
        let sum = seconds(taken.sum_nanos);
        self.sample_text(&format!("{name}_sum"), labels, None, &sum);
        self.sample_text(
            &format!("{name}_count"),
            labels,
            None,
            &taken.count.to_string(),
        );
    }

    /// The text written, every line ended.
    pub fn into_text(self) -> String {
        self.text
    }

    /// A sample line, with an `le` label last when `le` is given.
    fn sample_text(&mut self, name: &str, labels: &[(&str, &str)], le: Option<&str>, value: &str) {
        self.text.push_str(name);
        let le = le.map(|bound| ("le", bound));
        let mut labels = labels.iter().copied().chain(le).peekable();
        if labels.peek().is_some() {
            self.text.push('{');
            for (at, (label, value)) in labels.enumerate() {
                if at > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{label}=\"{}\"", escaped(value));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {value}");
    }
}

/// A label value as the format quotes it: backslash, double quote and line feed escaped.
fn escaped(value: &str) -> String {
    let mut shown = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => shown.push_str("\\\\"),
            '"' => shown.push_str("\\\""),
            '\n' => shown.push_str("\\n"),
            c => shown.push(c),
        }
    }
    shown
}

/// Nanoseconds as decimal seconds, exactly (`1.500000000`): no float formatting linked.
fn seconds(nanos: u64) -> String {
    format!("{}.{:09}", nanos / 1_000_000_000, nanos % 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn families_samples_and_escaped_labels() {
        let mut out = Exposition::default();
        out.family("x_total", Type::Counter, "Counts x.\nTwo lines, a \\.");
        out.sample("x_total", &[("target", "a\"b\\c\nd"), ("result", "ok")], 3);
        out.family("up", Type::Gauge, "Up.");
        out.sample("up", &[], 1);
        let text = out.into_text();
        assert_eq!(
            text,
            "# HELP x_total Counts x.\\nTwo lines, a \\\\.\n# TYPE x_total counter\n\
             x_total{target=\"a\\\"b\\\\c\\nd\",result=\"ok\"} 3\n\
             # HELP up Up.\n# TYPE up gauge\nup 1\n"
        );
    }

    #[test]
    fn a_histogram_is_cumulative_and_sums_seconds() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_micros(300));
        histogram.observe(Duration::from_millis(30));
        histogram.observe(Duration::from_secs(60));
        let mut out = Exposition::default();
        out.histogram("d_seconds", &[("t", "a")], &histogram);
        let text = out.into_text();
        assert!(
            text.contains("d_seconds_bucket{t=\"a\",le=\"0.001\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("d_seconds_bucket{t=\"a\",le=\"0.05\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("d_seconds_bucket{t=\"a\",le=\"10\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("d_seconds_bucket{t=\"a\",le=\"+Inf\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("d_seconds_sum{t=\"a\"} 60.030300000\n"),
            "{text}"
        );
        assert!(text.ends_with("d_seconds_count{t=\"a\"} 3\n"), "{text}");
    }
}
