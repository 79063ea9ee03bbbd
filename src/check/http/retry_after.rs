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

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    /// 1994-11-06 08:49:37 UTC, the RFC's example date.
    const EXAMPLE: u64 = 784_111_777;

    #[test]
    fn delta_seconds() {
        let now = at(EXAMPLE);
        assert_eq!(parse("3", now), Some(Duration::from_secs(3)));
        assert_eq!(parse(" 120\t", now), Some(Duration::from_secs(120)));
        assert_eq!(parse("0", now), Some(Duration::ZERO));
        let huge = "99999999999999999999999";
        assert_eq!(parse(huge, now), Some(Duration::from_secs(MAX_DELTA)));
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        let now = at(EXAMPLE - 5);
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse(date, now), Some(Duration::from_secs(5)), "{date}");
        }
        let later = at(EXAMPLE + 60);
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:49:37 GMT", later),
            Some(Duration::ZERO),
            "a date passed asks for no wait"
        );
    }

    #[test]
    fn garbage_is_ignored() {
        let now = at(EXAMPLE);
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
            assert_eq!(parse(value, now), None, "{value:?}");
        }
    }

    #[test]
    fn only_on_503_and_429() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        let now = at(EXAMPLE);
        let three = Some(Duration::from_secs(3));
        assert_eq!(
            requested(StatusCode::SERVICE_UNAVAILABLE, &headers, now),
            three
        );
        assert_eq!(
            requested(StatusCode::TOO_MANY_REQUESTS, &headers, now),
            three
        );
        assert_eq!(
            requested(StatusCode::INTERNAL_SERVER_ERROR, &headers, now),
            None
        );
        assert_eq!(
            requested(StatusCode::MOVED_PERMANENTLY, &headers, now),
            None
        );
        assert_eq!(
            requested(StatusCode::SERVICE_UNAVAILABLE, &HeaderMap::new(), now),
            None
        );
        headers.insert(RETRY_AFTER, HeaderValue::from_bytes(b"\xff3").unwrap());
        assert_eq!(
            requested(StatusCode::SERVICE_UNAVAILABLE, &headers, now),
            None
        );
    }
}
