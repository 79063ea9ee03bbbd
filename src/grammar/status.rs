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
            let (low, high) = part.split_once('-').unwrap_or((part, part));
            let (low, high) = (parse_status(low, text)?, parse_status(high, text)?);
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
        let ranges: Vec<String> = self
            .0
            .iter()
            .map(|&(low, high)| match low == high {
                true => low.to_string(),
                false => format!("{low}-{high}"),
            })
            .collect();
        f.write_str(&ranges.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_lists_and_ranges() {
        let default = StatusRanges::default();
        let listed = StatusRanges::parse("200-299, 304").unwrap();
        for (ranges, yes, no) in [
            // The kubelet's.
            (&default, &[200, 302, 399][..], &[199, 400, 503][..]),
            (&listed, &[204, 304], &[301, 305]),
            (&StatusRanges::parse("503").unwrap(), &[503], &[502, 504]),
        ] {
            assert!(yes.iter().all(|&s| ranges.contains(s)), "{ranges}");
            assert!(!no.iter().any(|&s| ranges.contains(s)), "{ranges}");
        }
        assert_eq!(listed.to_string(), "200-299,304");
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
