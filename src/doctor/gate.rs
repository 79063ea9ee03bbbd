//! The `SidecarContainers` feature gate of the API server or a kubelet: read from its metrics
//! (`kubernetes_feature_enabled{name="SidecarContainers"}`), else judged by its version, saying
//! why.

use tokio::time::Instant;

use super::ask::{Answer, Asker};
use super::findings::Gate;
use super::version::sidecars_by_version;

/// The gauge's name and the gate's label, as the metrics page writes them.
const GAUGE: &str = "kubernetes_feature_enabled{";
const LABEL: &str = "name=\"SidecarContainers\"";

/// The gate as the metrics page at `path` shows it; `grant` is what a refusal is missing
/// (`get on nonResourceURLs /metrics`), `version` what to judge by without the page.
pub async fn read(
    asker: &Asker<'_>,
    path: &str,
    grant: &str,
    version: Option<(u32, u32)>,
    end: Instant,
) -> Gate {
    let find = |line: &str| line.starts_with(GAUGE) && line.contains(LABEL);
    let why = match asker.metric(path, find, end).await {
        Ok(Some(line)) => match value(&line) {
            Some(on) => {
                return Gate {
                    sidecars: Some(on),
                    judged_by: "metrics",
                    note: None,
                }
            }
            None => format!("{path}: unreadable gauge {}", crate::text::peer_text(&line)),
        },
        Ok(None) => format!("{path} has no SidecarContainers gauge"),
        Err(Answer::Forbidden(_)) => {
            let who = &asker.cluster.who;
            format!("{path} refused: grant {grant} to {who}")
        }
        Err(Answer::NotFound) => format!("{path}: not found"),
        Err(Answer::Failed(why)) => format!("{path}: {why}"),
        Err(Answer::Ok(_)) => unreachable!("a metrics page is scanned, not kept"),
    };
    by_version(version, why)
}

/// The gate judged by `version`, with `why` the metrics could not say.
pub fn by_version(version: Option<(u32, u32)>, why: String) -> Gate {
    match version {
        Some(version) => {
            let (on, reason) = sidecars_by_version(version);
            Gate {
                sidecars: Some(on),
                judged_by: "version",
                note: Some(format!("{why}; judged by version ({reason})")),
            }
        }
        None => Gate {
            sidecars: None,
            judged_by: "version",
            note: Some(format!("{why}; no version to judge by")),
        },
    }
}

/// `1` or `0` after the labels.
fn value(line: &str) -> Option<bool> {
    let (_, rest) = line.rsplit_once('}')?;
    match rest.split_whitespace().next()? {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_gauge_value_is_read_after_the_labels() {
        let on = r#"kubernetes_feature_enabled{name="SidecarContainers",stage="BETA"} 1"#;
        assert_eq!(super::value(on), Some(true));
        assert_eq!(super::value(&on.replace(" 1", " 0")), Some(false));
        assert_eq!(super::value("kubernetes_feature_enabled{x} one"), None);
    }
}
