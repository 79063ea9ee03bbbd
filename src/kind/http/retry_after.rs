//! `Retry-After` on a `503` or `429` (RFC 9110, section 10.2.3): how long a server asks to be
//! left alone, so that a waiter backs off as asked instead of adding to an overload.

use std::time::{Duration, SystemTime};

use hyper::header::{HeaderMap, RETRY_AFTER};
use hyper::StatusCode;

/// The longest wait a delta-seconds value is read as (RFC 9110: a larger one is taken as this).
const MAX_DELTA: u64 = 1 << 31;

/// The wait a refused response asks for: `Some` for a 503 or 429 whose first `Retry-After`
/// is delta-seconds or an HTTP-date (a date already passed asks for no wait), else `None`. A
/// value that does not parse is ignored, and said at `-v`.
pub fn requested(status: StatusCode, headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if status != StatusCode::SERVICE_UNAVAILABLE && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let value = headers.get(RETRY_AFTER)?;
    let wait = value.to_str().ok().and_then(|text| parse(text, now));
    if wait.is_none() {
        tracing::debug!(
            "ignoring Retry-After {:?}: neither seconds nor an HTTP date",
            String::from_utf8_lossy(value.as_bytes())
        );
    }
    wait
}

/// `delta-seconds` or `HTTP-date`, around optional whitespace.
fn parse(text: &str, now: SystemTime) -> Option<Duration> {
    let text = text.trim_matches([' ', '\t']);
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let seconds = text.parse::<u64>().unwrap_or(MAX_DELTA).min(MAX_DELTA);
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(text).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;

    /// 1994-11-06 08:49:37 UTC, the RFC's example date.
    const EXAMPLE: u64 = 784_111_777;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn delta_seconds_or_http_dates_in_all_three_forms() {
        let rfc_1123 = "Sun, 06 Nov 1994 08:49:37 GMT";
        for (value, now, wait) in [
            ("3", EXAMPLE, Some(3)),
            (" 120\t", EXAMPLE, Some(120)),
            ("0", EXAMPLE, Some(0)),
            ("99999999999999999999999", EXAMPLE, Some(MAX_DELTA)),
            (rfc_1123, EXAMPLE - 5, Some(5)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", EXAMPLE - 5, Some(5)),
            ("Sun Nov  6 08:49:37 1994", EXAMPLE - 5, Some(5)),
            // A date passed asks for no wait.
            (rfc_1123, EXAMPLE + 60, Some(0)),
        ] {
            assert_eq!(
                parse(value, at(now)),
                wait.map(Duration::from_secs),
                "{value:?}"
            );
        }
    }

    #[test]
    fn garbage_is_ignored() {
        for value in [
            "",
            "-1",
            "1.5",
            "3s",
            "soon",
            "0x10",
            "Sun, 06 Nov 1994",
            "+3",
            "3 4",
        ] {
            assert_eq!(parse(value, at(EXAMPLE)), None, "{value:?}");
        }
    }

    #[test]
    fn only_on_503_and_429() {
        let three = HeaderValue::from_static("3");
        let garbled = HeaderValue::from_bytes(b"\xff3").unwrap();
        for (status, value, wait) in [
            (503, Some(&three), Some(3)),
            (429, Some(&three), Some(3)),
            (500, Some(&three), None),
            (301, Some(&three), None),
            (503, None, None),
            (503, Some(&garbled), None),
        ] {
            let mut headers = HeaderMap::new();
            headers.extend(value.map(|v| (RETRY_AFTER, v.clone())));
            let status = StatusCode::from_u16(status).unwrap();
            let asked = requested(status, &headers, at(EXAMPLE));
            assert_eq!(asked, wait.map(Duration::from_secs), "{status} {value:?}");
        }
    }
}
