//! DURATION values: a humantime span (`250ms`, `1m30s`) or a bare number of seconds (`15`, `0.5`).
//! Every duration a user gives passes here once, so the rest of readygate can add any of them
//! to an instant without overflow, and never mistakes a tiny one for "none"; and every
//! duration readygate shows a user is rounded here ([`humanize`]).

use std::time::Duration;

/// The longest duration accepted: a year is beyond any wait a pod makes, and far below what an
/// `Instant` can have added to it.
pub const MAX: Duration = Duration::from_secs(366 * 24 * 60 * 60);

/// Parses a DURATION as the contract defines it; the error names what was wrong with it.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("empty duration".into());
    }
    let shown = crate::text::quoted(text);
    if trimmed.starts_with('-') {
        return Err(format!(
            "invalid duration {shown}: a duration is not negative (0 means none where that is \
             allowed)"
        ));
    }
    let duration = if trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let invalid = |_| format!("invalid duration {shown}");
        let seconds: f64 = trimmed.parse().map_err(invalid)?;
        let duration = Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("duration {shown} is out of range"))?;
        // `0` means "none" where it is allowed: a positive value must not round to it.
        if duration.is_zero() && seconds > 0.0 {
            return Err(format!(
                "duration {shown} is below 1ns (write 0 if you mean none)"
            ));
        }
        duration
    } else {
        humantime::parse_duration(trimmed).map_err(|e| match unit_missing(trimmed) {
            Some(fixed) => format!(
                "invalid duration {shown}: its last number has no unit: write {}",
                crate::text::quoted(&fixed)
            ),
            None => format!("invalid duration {shown}: {e}"),
        })?
    };
    if duration > MAX {
        return Err(format!(
            "duration {shown} is longer than the maximum, 366 days"
        ));
    }
    Ok(duration)
}

/// A span whose last number lacks its unit (`1h30`, `2m30`) with the unit that follows the
/// one before it (`1h30m`, `2m30s`); `None` for any other fault.
fn unit_missing(text: &str) -> Option<String> {
    let number = text.len() - text.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let head = &text[..text.len() - number];
    if number == 0 || head.is_empty() || humantime::parse_duration(head).is_err() {
        return None;
    }
    let unit = head.trim_end_matches(|c: char| !c.is_ascii_digit());
    let next = match &head[unit.len()..] {
        "d" | "day" | "days" => "h",
        "h" | "hr" | "hrs" | "hour" | "hours" => "m",
        "m" | "min" | "mins" | "minute" | "minutes" => "s",
        "s" | "sec" | "secs" | "second" | "seconds" => "ms",
        _ => return None,
    };
    Some(format!("{text}{next}"))
}

/// A duration rounded for people: `1.5s`, `250ms`.
pub fn humanize(duration: Duration) -> String {
    // From 995 ms on, as seconds rounded to a tenth: a 1 s attempt clipped by a millisecond
    // to fit its deadline reads `1.0s`, not `999ms`.
    if duration >= Duration::from_millis(995) {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanized_as_written_in_messages() {
        assert_eq!(humanize(Duration::from_millis(300)), "300ms");
        assert_eq!(humanize(Duration::from_millis(994)), "994ms");
        assert_eq!(humanize(Duration::from_millis(999)), "1.0s");
        assert_eq!(humanize(Duration::from_millis(2500)), "2.5s");
    }

    #[test]
    fn bare_numbers_are_seconds() {
        assert_eq!(parse_duration("15"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0.000"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("366d"), Ok(MAX));
    }

    #[test]
    fn humantime_spans() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
    }

    #[test]
    fn faults_name_their_fix() {
        let fault = |text| parse_duration(text).unwrap_err();
        assert!(
            fault("1h30").ends_with("write \"1h30m\""),
            "{}",
            fault("1h30")
        );
        assert!(
            fault("2m30").ends_with("write \"2m30s\""),
            "{}",
            fault("2m30")
        );
        assert!(fault("-1").contains("not negative"), "{}", fault("-1"));
        assert!(!fault("abc").contains("write"), "{}", fault("abc"));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            " ",
            "abc",
            "10 parsecs",
            "-1",
            "1..2",
            "1e999",
            "0.0000000001",
            "9223372036854775807s",
            "367days",
            "31622401",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
