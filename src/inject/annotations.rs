//! The pod annotations inject acts on, read and validated into a typed plan before anything
//! is changed: a bad target or duration is an error naming the annotation.

use crate::kind::target::Target;

use super::tree::Node;

/// The annotation prefix every readygate annotation shares.
pub const PREFIX: &str = "readygate.dev/";
/// Targets the pod waits for (commas or white space between them).
pub const WAIT_FOR: &str = "readygate.dev/wait-for";
/// The deadline of that wait.
pub const WAIT_TIMEOUT: &str = "readygate.dev/wait-timeout";
/// `readygate.dev/startup-probe.CONTAINER: TARGET`.
pub const STARTUP_PROBE: &str = "readygate.dev/startup-probe.";

/// What one pod's annotations ask for.
#[derive(Debug, Default)]
pub struct Wanted {
    /// The targets of `wait-for`, as written, each valid.
    pub wait_for: Vec<String>,
    /// `wait-timeout`, as written (valid).
    pub wait_timeout: Option<String>,
    /// `startup-probe.CONTAINER`: the container's name and its target.
    pub startup_probes: Vec<(String, Target)>,
    /// The field path of the annotations, for errors found later (a container not there).
    pub at: String,
}

/// Reads the readygate annotations of `annotations` (a pod's or template's); `at` is the field
/// path of that mapping, for errors.
pub fn read(annotations: Option<&Node>, at: &str) -> Result<Wanted, String> {
    let mut wanted = Wanted {
        at: at.to_string(),
        ..Wanted::default()
    };
    let entries = match annotations {
        None => return Ok(wanted),
        Some(node) if node.is_null() => return Ok(wanted),
        Some(Node::Map(entries)) => entries,
        Some(_) => return Err(format!("{at}: not a mapping")),
    };
    for (key, value) in entries {
        let Some(key) = key.as_str().filter(|key| key.starts_with(PREFIX)) else {
            continue;
        };
        // The key is the manifest's: shown on one line, cut to size.
        let field = format!("{at}[{}]", crate::text::peer_text(key));
        let text = value
            .as_str()
            .ok_or_else(|| format!("{field}: not a string"))?;
        if key == WAIT_FOR {
            wanted.wait_for = split_targets(text).map_err(|e| format!("{field}: {e}"))?;
        } else if key == WAIT_TIMEOUT {
            crate::grammar::duration::parse_duration(text).map_err(|e| format!("{field}: {e}"))?;
            wanted.wait_timeout = Some(text.trim().to_string());
        } else if let Some(container) = key.strip_prefix(STARTUP_PROBE) {
            if container.is_empty() {
                return Err(format!("{field}: name the container after the dot"));
            }
            let target = Target::parse(text.trim()).map_err(|e| format!("{field}: {e}"))?;
            wanted.startup_probes.push((container.to_string(), target));
        } else {
            return Err(format!(
                "{field}: unknown annotation (readygate's are {WAIT_FOR}, {WAIT_TIMEOUT} and \
                 {STARTUP_PROBE}CONTAINER)"
            ));
        }
    }
    if wanted.wait_timeout.is_some() && wanted.wait_for.is_empty() {
        return Err(format!("{at}[{WAIT_TIMEOUT}]: given without {WAIT_FOR}"));
    }
    Ok(wanted)
}

/// The targets of a `wait-for` value, separated by commas or white space, each valid.
fn split_targets(text: &str) -> Result<Vec<String>, String> {
    let targets: Vec<String> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|piece| !piece.is_empty())
        .map(str::to_string)
        .collect();
    if targets.is_empty() {
        return Err("no target".into());
    }
    for target in &targets {
        Target::parse(target)?;
    }
    Ok(targets)
}

impl Wanted {
    /// Whether the annotations ask for nothing.
    pub fn is_empty(&self) -> bool {
        self.wait_for.is_empty() && self.startup_probes.is_empty()
    }
}
