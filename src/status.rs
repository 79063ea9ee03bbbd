//! `--status RANGES`: the HTTP statuses that count as ready, e.g. `200`, `200-299,304`.

use std::fmt;

/// A set of inclusive HTTP status ranges, parsed once from `--status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRanges(Vec<(u16, u16)>);

impl Default for StatusRanges {
    /// `200-399`, as the kubelet's httpGet probe.
    fn default() -> Self {
        StatusRanges(vec![(200, 399)])
    }
}

impl StatusRanges {
    /// Parses `200`, `200-299,304`; every status must lie in 100-599 and ranges must be ordered.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut ranges = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (low, high) = match part.split_once('-') {
                Some((low, high)) => (parse_status(low, text)?, parse_status(high, text)?),
                None => {
                    let status = parse_status(part, text)?;
                    (status, status)
                }
            };
            if low > high {
                return Err(format!(
                    "invalid status range {part:?}: {low} is above {high}"
                ));
            }
            ranges.push((low, high));
        }
        Ok(StatusRanges(ranges))
    }

    /// Whether `status` is accepted.
    pub fn contains(&self, status: u16) -> bool {
        self.0
            .iter()
            .any(|&(low, high)| (low..=high).contains(&status))
    }
}

fn parse_status(text: &str, whole: &str) -> Result<u16, String> {
    let text = text.trim();
    match text.parse::<u16>() {
        Ok(status) if (100..=599).contains(&status) => Ok(status),
        _ => Err(format!(
            "invalid status range {whole:?}: {text:?} is not an HTTP status (100-599)"
        )),
    }
}

impl fmt::Display for StatusRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (low, high)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if low == high {
                write!(f, "{low}")?;
            } else {
                write!(f, "{low}-{high}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_the_kubelets() {
        let ranges = StatusRanges::default();
        assert!(ranges.contains(200) && ranges.contains(302) && ranges.contains(399));
        assert!(!ranges.contains(199) && !ranges.contains(400) && !ranges.contains(503));
    }

    #[test]
    fn lists_and_ranges() {
        let ranges = StatusRanges::parse("200-299, 304").unwrap();
        assert!(ranges.contains(204) && ranges.contains(304));
        assert!(!ranges.contains(301) && !ranges.contains(305));
        assert_eq!(ranges.to_string(), "200-299,304");
        assert!(StatusRanges::parse("503").unwrap().contains(503));
    }

    #[test]
    fn rejects_bad_ranges() {
        for bad in [
            "", "abc", "99", "600", "300-200", "200-", "-200", "200,,300", "2OO",
        ] {
            assert!(
                StatusRanges::parse(bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
    }
}
