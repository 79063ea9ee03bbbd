//! DURATION values: a humantime span (`250ms`, `1m30s`) or a bare number of seconds (`15`, `0.5`).

use std::time::Duration;

/// Parses a DURATION as the contract defines it; the error names what was wrong with it.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("empty duration".into());
    }
    if trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let seconds: f64 = trimmed
            .parse()
            .map_err(|_| format!("invalid duration {:?}", text))?;
        return Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("duration {:?} is out of range", text));
    }
    humantime::parse_duration(trimmed).map_err(|e| format!("invalid duration {:?}: {e}", text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_are_seconds() {
        assert_eq!(parse_duration("15"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.25"), Ok(Duration::from_millis(250)));
    }

    #[test]
    fn humantime_spans() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", " ", "abc", "10 parsecs", "-1", "1..2", "1e999"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
